"""`kb serve` as a real process: it answers its health and readiness checks, runs the
schedule (reindex and the retention purge), embeds the new sentences after a reindex,
and counts the reindex runs in /metrics."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from pathlib import Path

import aiohttp
import asyncpg

from store.migrate import apply_migrations

REPO = Path(__file__).resolve().parents[2]
FIXTURE_KB = Path(__file__).resolve().parents[1] / "fixtures" / "kb"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_env(database_url: str, tmp_path: Path, sources: Path, port: int) -> dict[str, str]:
    """`kb serve`'s environment: this test's database, home, sources and port; no Slack."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("SLACK_")},
        "DATABASE_URL": database_url,
        "KB_HOME": str(tmp_path / "home"),
        "KB_SOURCES": str(sources),
        "KB_PORT": str(port),
    }


async def poll(check, timeout: float = 120) -> object:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        result = await check()
        if result:
            return result
        await asyncio.sleep(0.1)
    raise AssertionError("timed out")


async def test_serve_answers_health_and_runs_scheduled_sources_at_start(
    database_url: str, tmp_path: Path
) -> None:
    sources = tmp_path / "sources.toml"
    # Two sources due at start-up: the second waits for the first instead of skipping.
    sources.write_text(
        "".join(
            f'[[source]]\nname = "{name}"\nkind = "directory"\nevery = "1h"\n'
            f'[source.settings]\nroot = "{FIXTURE_KB}"\n'
            for name in ("kb", "kb-again")
        )
    )
    port = free_port()
    env = serve_env(database_url, tmp_path, sources, port)
    conn = await asyncpg.connect(database_url)
    await apply_migrations(conn)
    # A run past KB_RETENTION_DAYS (90): the purge scheduled at start removes it.
    await conn.execute(
        "INSERT INTO agent_runs (question, created_at) VALUES ('old', now() - interval '100 d')"
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "serve", env=env, cwd=REPO,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        async with aiohttp.ClientSession() as http:

            async def healthy() -> dict | None:
                try:
                    async with http.get(f"http://127.0.0.1:{port}/healthz") as response:
                        return await response.json() if response.status == 200 else None
                except aiohttp.ClientConnectionError:
                    return None

            health = await poll(healthy)
        assert health["status"] == "ok"  # type: ignore[index]

        async def indexed() -> bool:
            rows = await conn.fetch("SELECT source, status FROM index_runs")
            return {(r["source"], r["status"]) for r in rows} == {
                ("kb", "succeeded"),
                ("kb-again", "succeeded"),
            }

        await poll(indexed)
        assert await conn.fetchval("SELECT count(*) FROM documents") == 6

        async def sentences_embedded() -> bool:
            # No question was asked: only the warm-up after the reindex embeds sentences.
            return bool(await conn.fetchval("SELECT count(*) FROM sentence_vectors"))

        await poll(sentences_embedded)
        async with aiohttp.ClientSession() as http:

            async def ready() -> dict | None:
                async with http.get(f"http://127.0.0.1:{port}/readyz") as response:
                    return await response.json() if response.status == 200 else None

            readiness = await poll(ready)

            async def purged() -> bool:
                return await conn.fetchval("SELECT count(*) FROM agent_runs") == 0

            await poll(purged)
            async with http.get(f"http://127.0.0.1:{port}/metrics") as response:
                exposition = await response.text()
        assert {c["name"] for c in readiness["checks"]} >= {"scheduler", "last_reindex"}  # type: ignore[index]
        for source in ("kb", "kb-again"):
            assert f'kb_reindex_runs_total{{outcome="succeeded",source="{source}"}} 1.0' in (
                exposition
            )
            assert f'kb_reindex_last_documents{{change="added",source="{source}"}}' in exposition
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(process.communicate(), timeout=60)
        await conn.close()
    assert process.returncode == 0, err.decode()
    # No Slack tokens: it says which to set, in one line, and served health and the schedule.
    assert (
        "Slack is off: set SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET (HTTP) or SLACK_APP_TOKEN "
        "(Socket Mode)" in err.decode()
    )


async def test_serve_stopped_mid_reindex_records_the_run_as_stopped(
    database_url: str, tmp_path: Path
) -> None:
    """SIGTERM while a scheduled pass is indexing: the pass is stopped and its run record
    closed before the database goes, not left "running" for the next pass to find."""
    corpus = tmp_path / "kb"
    corpus.mkdir()
    for d in range(120):  # enough that the first pass is still running when stopped
        text = " ".join(f"Filler {d}.{s} describes procedure {s} of team {d}." for s in range(60))
        (corpus / f"filler{d:03}.md").write_text(f"# Filler {d}\n\n{text}\n")
    sources = tmp_path / "sources.toml"
    sources.write_text(
        f'[[source]]\nname = "kb"\nkind = "directory"\nevery = "1h"\n'
        f'[source.settings]\nroot = "{corpus}"\n'
    )
    env = serve_env(database_url, tmp_path, sources, free_port())
    conn = await asyncpg.connect(database_url)
    await apply_migrations(conn)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "serve", env=env, cwd=REPO,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:

        async def indexing() -> bool:
            return bool(await conn.fetchval("SELECT count(*) FROM documents"))

        await poll(indexing)  # the pass has begun writing documents
        assert await conn.fetchval("SELECT count(*) FROM index_runs WHERE finished_at IS NULL")
        process.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(process.communicate(), timeout=60)
        runs = await conn.fetch("SELECT status, finished_at, failures FROM index_runs")
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await conn.close()
    assert process.returncode == 0, err.decode()
    assert [(r["status"], r["finished_at"] is not None) for r in runs] == [("failed", True)]
    assert "the run was stopped before it finished" in runs[0]["failures"]
