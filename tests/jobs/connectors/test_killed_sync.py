"""A connector's first sync killed (SIGKILL) half-way in a real `kb index` process, then
run again: it finishes, and what the killed run had written is not embedded again
(issue 23 item 7: "a sync can be interrupted (SIGKILL) and resumed from its cursor
without re-embedding what was written").

Each system's strict fake holds the content requests of its last pages until the test
has seen the first pages written and killed the process; the next run gets every answer.
The held requests time out and those pages fail, so the run goes on to write what it
read (with no `kb jobs --worker` alive, a run writes its queued documents once its
listing is done): it is killed as they land, before its cursor is saved. Each lists
`page_size = 4` pages per call, so the pages before the held ones are read while those
wait, and gives a held request up after `timeout_seconds = 2`, tried once.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.jobs.connectors.fake_confluence import FakeConfluence, Page
from tests.jobs.connectors.fake_drive import DOC, FakeDrive, File
from tests.jobs.connectors.fake_notion import TOKEN, FakeNotion, block

REPO = Path(__file__).resolve().parents[3]
PAGES = 12
LATE = range(8, PAGES)  # the pages whose content the fake holds until the kill
T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def text_of(n: int) -> str:
    return f"Runbook {n} says to page the on-call engineer for service {n} within {n} minutes."


@dataclass
class System:
    """One fake, served; what its sources.toml says; which requests are for a late page."""

    toml: str
    env: dict[str, str]
    late: Callable[[web.Request], bool]


def gate(app: web.Application, late: Callable[[web.Request], bool], opened: asyncio.Event) -> None:
    @web.middleware
    async def hold(request: web.Request, handler: Handler) -> web.StreamResponse:
        if late(request):
            await opened.wait()
        return await handler(request)

    app.middlewares.insert(0, hold)


@asynccontextmanager
async def served(app: web.Application) -> AsyncIterator[TestServer]:
    server = TestServer(app)
    await server.start_server()
    try:
        yield server
    finally:
        await server.close()


# A listing page of 4; a held request given up after 2 s, without a retry.
QUICK = "page_size = 4\ntimeout_seconds = 2\nmax_attempts = 1\n"


@asynccontextmanager
async def confluence(opened: asyncio.Event) -> AsyncIterator[System]:
    fake = FakeConfluence()
    for n in range(PAGES):
        fake.add(Page(str(1000 + n), "OPS", f"Runbook {n}", f"<p>{text_of(n)}</p>", T0))
    app = fake.app()
    late_ids = {str(1000 + n) for n in LATE}
    gate(app, lambda r: r.match_info.get("id") in late_ids, opened)
    async with served(app) as server:
        fake.server = server
        yield System(
            toml='kind = "confluence"\n[source.settings]\n'
            f'url = "{fake.base_url}"\ncloud = true\nuser_env = "WIKI_USER"\n'
            f'token_env = "WIKI_TOKEN"\nspaces = ["OPS"]\n{QUICK}',
            env={"WIKI_USER": "bot@acme.test", "WIKI_TOKEN": "api-token"},
            late=lambda r: r.match_info.get("id") in late_ids,
        )


@asynccontextmanager
async def google_drive(opened: asyncio.Event) -> AsyncIterator[System]:
    fake = FakeDrive()
    for n in range(PAGES):  # listed in id order
        html = f"<html><body><h1>Runbook {n}</h1><p>{text_of(n)}</p></body></html>"
        fake.put(File(f"doc{n:04d}", f"Runbook {n}", DOC, ["ops"], html.encode(), "ops"))
    app = fake.app()
    late_ids = {f"doc{n:04d}" for n in LATE}
    late = lambda r: r.path.endswith("/export") and r.match_info.get("id") in late_ids  # noqa: E731
    gate(app, late, opened)
    async with served(app) as server:
        fake.server = server
        yield System(
            toml='kind = "google_drive"\n[source.settings]\ncredentials_env = "DRIVE_TOKEN"\n'
            f'shared_drives = ["ops"]\napi_endpoint = "{fake.endpoint}"\n{QUICK}',
            env={"DRIVE_TOKEN": fake.token},
            late=late,
        )


@asynccontextmanager
async def notion(opened: asyncio.Event) -> AsyncIterator[System]:
    fake = FakeNotion()
    ids = {}
    for n in reversed(range(PAGES)):  # search lists the newest edit first: page 0 first
        ids[n] = fake.add_page(f"Runbook {n}", [block("paragraph", text_of(n))])
    app = fake.app()
    late_ids = {ids[n].replace("-", "") for n in LATE}

    def late(request: web.Request) -> bool:
        held = request.match_info.get("id", "").replace("-", "")
        return request.path.endswith("/children") and held in late_ids

    gate(app, late, opened)
    async with served(app) as server:
        yield System(
            toml='kind = "notion"\n[source.settings]\ntoken_env = "NOTION_TOKEN"\n'
            f'base_url = "{str(server.make_url("")).rstrip("/")}"\n{QUICK}',
            env={"NOTION_TOKEN": TOKEN},
            late=late,
        )


SYSTEMS = {"confluence": confluence, "google_drive": google_drive, "notion": notion}


async def kb_index(env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "index", "--source", "ops", "--json",
        env={**os.environ, "PYTHONPATH": str(REPO), **env}, cwd=REPO,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def written(pool: asyncpg.Pool) -> int:
    return int(await pool.fetchval("SELECT count(*) FROM documents") or 0)


@pytest.mark.parametrize("kind", sorted(SYSTEMS))
async def test_a_first_sync_killed_half_way_resumes_without_embedding_twice(
    kind: str, database_url: str, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    opened = asyncio.Event()
    async with SYSTEMS[kind](opened) as system:
        sources = tmp_path / "sources.toml"
        sources.write_text(f'[[source]]\nname = "ops"\n{system.toml}')
        env = {
            "DATABASE_URL": database_url,
            "KB_HOME": str(tmp_path / "home"),
            "KB_SOURCES": str(sources),
            "KB_INDEX_BATCH_SIZE": "2",  # written a couple of documents at a time
            **system.env,
        }
        process = await kb_index(env)
        deadline = asyncio.get_running_loop().time() + 240
        while await written(pool) < 2:
            assert process.returncode is None, (await process.communicate())[1].decode()
            if asyncio.get_running_loop().time() > deadline:
                process.kill()
                pytest.fail(f"nothing was written: {(await process.communicate())[1].decode()}")
            await asyncio.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        await process.wait()
        before = await written(pool)
        assert 2 <= before < PAGES  # killed half-way: the late pages were not written
        cursor = await pool.fetchval("SELECT count(*) FROM source_cursors WHERE source = 'ops'")
        assert cursor == 0  # a killed run saves no cursor
        kept = {row["id"] for row in await pool.fetch("SELECT id FROM chunks")}

        opened.set()
        again = await kb_index(env)
        out, err = await asyncio.wait_for(again.communicate(), timeout=300)
        assert again.returncode == 0, err.decode()
        assert "Traceback" not in err.decode()
    report: dict[str, Any] = json.loads(out)
    assert await written(pool) == PAGES, (json.dumps(report), before, err.decode()[-800:])
    # What the killed run wrote is found unchanged by its hashes, not embedded again.
    assert report["documents_unchanged"] >= before, report
    assert report["documents_added"] == PAGES - report["documents_unchanged"], report
    # Nothing the killed run wrote was deleted and written again: its chunks are the same rows.
    assert kept <= {row["id"] for row in await pool.fetch("SELECT id FROM chunks")}
    # And the index is the whole source, as an uninterrupted sync leaves it.
    texts = {r["title"]: r["text"] for r in await pool.fetch("SELECT title, text FROM documents")}
    assert sorted(texts) == sorted(f"Runbook {n}" for n in range(PAGES))
    assert all(text_of(n) in texts[f"Runbook {n}"] for n in range(PAGES)), texts
