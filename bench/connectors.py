"""Benchmark of the Confluence, Google Drive and Notion connectors against their local fakes.

Each fake (tests/jobs/connectors/fake_*.py, the strict fakes the tests use, reached
through the official clients) is served with a realistic latency on every call
(`--latency`, default 100 ms) and a rate limit (a token bucket per system, answering
HTTP 429 with `Retry-After: 1` when empty, which the connectors' retry policy waits
out). For each system, in one run:

- **first sync**: pages per second of a first sync (no cursor, nothing stored) with the
  connector's default concurrency, against the baseline, a naive full re-fetch (the same
  first sync one call at a time, `concurrency = 1`);
- **no-change sync**: a second sync from the first one's cursor and stored copies, its
  API calls and seconds against the naive full re-fetch's (re-reading everything is what
  a connector without a change feed does every run).

The connectors are consumed as the reindex consumes them (`documents()`, then the
cursor), with the tests' in-memory store between runs. Prints a Markdown report, and
writes it to bench/results/connectors.md unless `--no-output`. Run from the repository
root:

    python bench/connectors.py                  # 40 pages per system (about a minute)
    python bench/connectors.py --pages 10 --no-output   # smoke run
"""

from __future__ import annotations

from _env import REPO as REPO_ROOT  # first: the environment, before numpy loads

# isort: split

import argparse
import asyncio
import logging
import os
import platform
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from jobs.config import NotionSettings, NotionSourceConfig, source_config
from jobs.connectors.base import ChangeFeedSource, ConnectorContext
from jobs.connectors.confluence import ConfluenceSource
from jobs.connectors.google_drive import GoogleDriveSource
from jobs.connectors.notion import NotionSource
from tests.jobs.connectors import fake_confluence, fake_drive, fake_notion
from tests.jobs.connectors.sync_helpers import MemoryStore

RESULTS_FILE = REPO_ROOT / "bench" / "results" / "connectors.md"
# The section bench/connector_memory.py writes into the same file: kept on rewrites.
MEMORY_SECTION = "## Memory of a first sync of many pages"
# Documented or typical limits, as requests per second: Notion averages 3 requests/s
# per integration (developers.notion.com/reference/request-limits); Confluence Cloud's
# and Drive's quotas are higher and per account; these keep the fakes honest.
RATES = {"confluence": 10.0, "google_drive": 20.0, "notion": 3.0}
PARAGRAPH = (
    "Page {n} explains how the team runs service {n}: who is on call, how to restart it "
    "safely, where its dashboards live, and what to check before a deploy."
)


@dataclass(frozen=True, slots=True)
class BenchConfig:
    pages: int
    latency: float
    rate_limit: bool
    output: Path | None
    command: str


@dataclass(slots=True)
class Meter:
    """What the served fake saw: every call, and the ones answered 429."""

    calls: int = 0
    throttled: int = 0


@dataclass(frozen=True, slots=True)
class Sync:
    seconds: float
    documents: int
    calls: int
    throttled: int


@dataclass(frozen=True, slots=True)
class SystemResult:
    system: str
    pages: int
    first: Sync
    quiet: Sync
    naive: Sync


def parse_args(argv: Sequence[str]) -> BenchConfig:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=40, help="pages per system (default 40)")
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per call")
    parser.add_argument("--no-rate-limit", action="store_true", help="no 429s")
    parser.add_argument("--output", type=Path, help=f"results file (default {RESULTS_FILE})")
    parser.add_argument("--no-output", action="store_true", help="print only")
    args = parser.parse_args(argv)
    return BenchConfig(
        pages=args.pages,
        latency=args.latency,
        rate_limit=not args.no_rate_limit,
        output=None if args.no_output else (args.output or RESULTS_FILE),
        command=" ".join(["python", *sys.argv]),
    )


# --- serving a fake with latency and a rate limit -------------------------------------


def throttled(meter: Meter, *, latency: float, rate: float | None) -> Any:
    """A middleware: every call waits `latency`; over `rate` per second it gets a 429."""
    tokens = [rate or 0.0]
    refilled = [time.monotonic()]

    @web.middleware
    async def middleware(request: web.Request, handler: Any) -> web.StreamResponse:
        meter.calls += 1
        await asyncio.sleep(latency)
        if rate is not None:
            now = time.monotonic()
            tokens[0] = min(rate, tokens[0] + (now - refilled[0]) * rate)
            refilled[0] = now
            if tokens[0] < 1:
                meter.throttled += 1
                body = {"object": "error", "status": 429, "code": "rate_limited",
                        "message": "rate limited"}  # fmt: skip
                return web.json_response(body, status=429, headers={"Retry-After": "1"})
            tokens[0] -= 1
        response: web.StreamResponse = await handler(request)
        return response

    return middleware


@asynccontextmanager
async def served(app: web.Application, middleware: Any) -> AsyncIterator[TestServer]:
    app.middlewares.insert(0, middleware)  # before the fake's own gate
    server = TestServer(app)
    await server.start_server()
    try:
        yield server
    finally:
        await server.close()


# --- one system -------------------------------------------------------------------------

Build = Callable[[MemoryStore, int], ChangeFeedSource]


async def measure(
    system: str, build: Build, meter: Meter, pages: int, progress: Progress
) -> SystemResult:
    """First sync, no-change sync from its cursor, then the naive full re-fetch."""
    store = MemoryStore()
    results: dict[str, Sync] = {}
    for phase, concurrency, target in (
        ("first", 4, store),
        ("quiet", 4, store),
        ("naive", 1, MemoryStore()),
    ):
        task = progress.add_task(
            f"{system}: {phase} sync", total=pages if phase != "quiet" else None
        )
        calls, limited = meter.calls, meter.throttled
        source = build(target, concurrency)
        started = time.perf_counter()
        run = await target.sync(source, on_item=lambda task=task: progress.advance(task))
        seconds = time.perf_counter() - started
        progress.update(task, total=progress.tasks[task].completed)
        results[phase] = Sync(
            seconds, len(run.changed), meter.calls - calls, meter.throttled - limited
        )
    return SystemResult(system, pages, results["first"], results["quiet"], results["naive"])


# --- the three systems ----------------------------------------------------------------


T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


async def confluence(config: BenchConfig, progress: Progress) -> SystemResult:
    fake = fake_confluence.FakeConfluence()
    for n in range(config.pages):
        body = f"<h2>Service {n}</h2><p>{PARAGRAPH.format(n=n)}</p>"
        fake.add(
            fake_confluence.Page(
                str(1000 + n), "ENG", f"Runbook {n}", body, T0 + timedelta(minutes=n)
            )
        )
    meter = Meter()
    app = fake.app()
    rate = RATES["confluence"] if config.rate_limit else None
    async with served(app, throttled(meter, latency=config.latency, rate=rate)) as server:
        fake.server = server

        def build(store: MemoryStore, concurrency: int) -> ChangeFeedSource:
            entry = {
                "name": "wiki", "kind": "confluence",
                "settings": {
                    "url": fake.base_url, "cloud": True, "user_env": "U", "token_env": "T",
                    "spaces": ["ENG"], "concurrency": concurrency, "page_size": 25,
                },
            }  # fmt: skip
            context = ConnectorContext(
                stored=store.stored(), cursor=store.cursor,
                credentials={"U": "bot@acme.test", "T": "api-token"},
            )  # fmt: skip
            return ConfluenceSource(name="wiki", config=source_config(entry), context=context)

        return await measure("confluence", build, meter, config.pages, progress)


async def google_drive(config: BenchConfig, progress: Progress) -> SystemResult:
    fake = fake_drive.FakeDrive()
    for n in range(config.pages):
        html = f"<html><body><h1>Service {n}</h1><p>{PARAGRAPH.format(n=n)}</p></body></html>"
        fake.put(
            fake_drive.File(
                f"doc{n:04d}",
                f"Runbook {n}",
                fake_drive.DOC,
                ["eng"],
                html.encode(),
                drive_id="eng",
            )
        )
    meter = Meter()
    rate = RATES["google_drive"] if config.rate_limit else None
    async with served(fake.app(), throttled(meter, latency=config.latency, rate=rate)) as server:
        fake.server = server

        def build(store: MemoryStore, concurrency: int) -> ChangeFeedSource:
            entry = {
                "name": "drive", "kind": "google_drive",
                "settings": {
                    "credentials_env": "D", "shared_drives": ["eng"], "api_endpoint": fake.endpoint,
                    "concurrency": concurrency, "page_size": 25,
                },
            }  # fmt: skip
            context = ConnectorContext(
                stored=store.stored(), cursor=store.cursor, credentials={"D": fake.token}
            )
            return GoogleDriveSource(name="drive", config=source_config(entry), context=context)

        return await measure("google_drive", build, meter, config.pages, progress)


async def notion(config: BenchConfig, progress: Progress) -> SystemResult:
    fake = fake_notion.FakeNotion()
    root = fake.add_page("Engineering", [fake_notion.block("paragraph", "Runbooks below.")])
    for n in range(config.pages - 1):
        fake.add_page(
            f"Runbook {n}",
            [fake_notion.block("heading_2", f"Service {n}"),
             fake_notion.block("paragraph", PARAGRAPH.format(n=n))],
            parent=root,
        )  # fmt: skip
    meter = Meter()
    rate = RATES["notion"] if config.rate_limit else None
    async with served(fake.app(), throttled(meter, latency=config.latency, rate=rate)) as server:
        base_url = str(server.make_url("")).rstrip("/")

        def build(store: MemoryStore, concurrency: int) -> ChangeFeedSource:
            settings = NotionSettings(base_url=base_url, concurrency=concurrency)
            context = ConnectorContext(
                stored=store.stored(), cursor=store.cursor,
                credentials={"NOTION_TOKEN": fake_notion.TOKEN},
            )  # fmt: skip
            source_settings = NotionSourceConfig(
                name="notion", collection="notion", settings=settings
            )
            return NotionSource(config=source_settings, context=context)

        return await measure("notion", build, meter, config.pages, progress)


# --- the report ------------------------------------------------------------------------


def report(config: BenchConfig, results: Sequence[SystemResult], seconds: float) -> str:
    limits = (
        ", ".join(f"{name} {rate:g}/s" for name, rate in RATES.items())
        if config.rate_limit
        else "none"
    )
    lines = [
        "# Connectors: first sync and no-change sync against the local fakes",
        "",
        f"{config.pages} pages per system; {config.latency * 1000:.0f} ms per API call; "
        f"rate limits: {limits} (HTTP 429 with Retry-After: 1 past them). Baseline, in the "
        "same run: a naive full re-fetch (a first sync with one call at a time).",
        "",
        "| system | first sync pages/s | naive pages/s | ratio | first sync calls (429s) "
        "| no-change calls | naive calls | calls ratio | no-change s | naive s | time ratio |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        first_rate = r.first.documents / r.first.seconds
        naive_rate = r.naive.documents / r.naive.seconds
        lines.append(
            f"| {r.system} | {first_rate:.1f} | {naive_rate:.1f} | {first_rate / naive_rate:.2f}x "
            f"| {r.first.calls} ({r.first.throttled}) | {r.quiet.calls} | {r.naive.calls} "
            f"| {r.quiet.calls / r.naive.calls:.3f} | {r.quiet.seconds:.2f} "
            f"| {r.naive.seconds:.2f} | {r.quiet.seconds / r.naive.seconds:.3f} |"
        )
    lines += ["", "Documents written per sync (first / no-change / naive):", ""]
    for r in results:
        lines.append(
            f"- {r.system}: {r.first.documents} / {r.quiet.documents} / {r.naive.documents}; "
            f"429s: first {r.first.throttled}, no-change {r.quiet.throttled}, "
            f"naive {r.naive.throttled}"
        )
    load = os.getloadavg()
    lines += [
        "",
        f"Machine: {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} at the end; "
        f"the run took {seconds:.0f} s.",
        "",
        f"Command: `{config.command}`",
    ]
    return "\n".join(lines) + "\n"


def with_kept_sections(path: Path, text: str) -> str:
    """The new report, followed by bench/connector_memory.py's section of the old file."""
    old = path.read_text() if path.exists() else ""
    at = old.find(MEMORY_SECTION)
    return text if at < 0 else text.rstrip("\n") + "\n\n" + old[at:]


async def main(config: BenchConfig) -> str:
    started = time.perf_counter()
    results = []
    with Progress(
        TextColumn("{task.description:<28}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), refresh_per_second=2,
    ) as progress:  # fmt: skip
        for system in (confluence, google_drive, notion):
            results.append(await system(config, progress))
    return report(config, results, time.perf_counter() - started)


if __name__ == "__main__":
    settings = parse_args(sys.argv[1:])
    logging.getLogger("notion_client").setLevel(logging.ERROR)  # each 429 is counted instead
    text = asyncio.run(main(settings))
    print(text)
    if settings.output is not None:
        settings.output.write_text(with_kept_sections(settings.output, text))
        print(f"written to {settings.output}")
