"""Peak memory of a first connector sync at 50,000 pages against the same sync at 5,000.

Issue 23 item 7 asks that a source of 50,000 pages sync with bounded memory: pages
streamed from the connector to the writer, embedded in batches. This runs the real
`kb index` (a child process: the real CLI, connector, indexer, embedding model and an
embedded Postgres in a temporary folder) against the strict fake Confluence
(tests/jobs/connectors/fake_confluence.py, reached through atlassian-python-api),
served by this process, once per size: a small floor run (the process's fixed cost:
interpreter, libraries, the model), the baseline and the large run. The child's peak
RSS comes from the kernel (`os.wait4`'s rusage, `ru_maxrss`), so the fake's own memory
is not counted. Pages are tiny (one short paragraph each) so embedding 50,000 of them
fits in a run on a loaded two-core machine; the time is reported too.

Bounded means the large run's peak is not ~10x the baseline's: the report gives both
peaks, their ratio, and each run's growth above the floor run.

Run from the repository root (progress is shown while each sync runs):

    python bench/connector_memory.py                          # 100 / 5,000 / 50,000 pages
    python bench/connector_memory.py --sizes 100 2000 20000   # when 50,000 takes too long
    python bench/connector_memory.py --sizes 100 500 2000 --no-output   # a smoke run
    python bench/connector_memory.py --throughput 2000        # pages/s: spinning vs sleeping

`--throughput N` measures speed instead: the same first sync of N pages twice in one run,
once with torch's OpenMP threads spinning at their barriers (libgomp's default, what `kb`
did before it set OMP_WAIT_POLICY=PASSIVE) and once as `kb` runs now (sleeping), and
writes the pages/s of both and their ratio to bench/results/first_sync_throughput.md.

The report is printed and written into bench/results/connectors.md, replacing the
section it wrote there before (bench/connectors.py keeps that section when it rewrites
the file).
"""

from __future__ import annotations

from _env import REPO as REPO_ROOT  # first: the environment, before numpy loads

# isort: split

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg
from aiohttp.test_utils import TestServer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from store.embedded import start_embedded_postgres
from tests.jobs.connectors.fake_confluence import FakeConfluence, Page

RESULTS_FILE = REPO_ROOT / "bench" / "results" / "connectors.md"
SECTION = "## Memory of a first sync of many pages"  # the section this script owns
THROUGHPUT_FILE = REPO_ROOT / "bench" / "results" / "first_sync_throughput.md"
# `kb index` as it ran before bot/cli.py set OMP_WAIT_POLICY: the setting dropped after
# bot.cli sets it and before torch (and its OpenMP runtime, which reads it) loads.
SPINNING_KB = (
    "import os, sys, bot.cli; os.environ.pop('OMP_WAIT_POLICY', None); "
    "sys.argv[0] = 'kb'; bot.cli.main()"
)
T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class BenchConfig:
    sizes: tuple[int, ...]  # the floor, the baseline, the large run
    page_size: int
    output: Path | None
    command: str
    throughput_pages: int | None = None  # set: compare pages/s instead of memory


@dataclass(frozen=True, slots=True)
class SyncRun:
    pages: int
    seconds: float
    peak_rss_mb: float  # the whole process, model loading included
    rss_at_start_mb: float  # the model loaded, the run started
    peak_during_sync_mb: float  # the sync itself: listing, queueing, embedding, writing
    documents: int
    report: dict[str, Any]
    spinning: bool = False

    @property
    def pages_per_second(self) -> float:
        """Over the run itself (the model loaded, listing to last write: its report)."""
        return self.pages / float(self.report["seconds"])

    @property
    def sync_growth_mb(self) -> float:
        return self.peak_during_sync_mb - self.rss_at_start_mb


class SyncMeter:
    """The child's memory while it syncs, from /proc/<pid>/status.

    Loading the model peaks higher than embedding with it, so the whole process's peak
    says little about the sync. When the run starts (its row in index_runs: the model
    is loaded, the listing begins) the high-water mark is reset (`clear_refs` 5,
    proc(5)) and the RSS noted; the mark read last is then the sync's own peak.
    """

    def __init__(self, pid: int) -> None:
        self._proc = Path(f"/proc/{pid}")
        self.rss_at_start_kb = 0
        self.peak_since_kb = 0

    def sample(self, *, started: bool) -> None:
        try:
            status = dict(
                line.split(":", 1) for line in (self._proc / "status").read_text().splitlines()
            )
            if started and not self.rss_at_start_kb:
                (self._proc / "clear_refs").write_text("5")
                self.rss_at_start_kb = int(status["VmRSS"].split()[0])
            elif self.rss_at_start_kb:
                self.peak_since_kb = int(status["VmHWM"].split()[0])
        except (OSError, KeyError, ValueError):
            return  # exiting: the last reading stands


def parse_args(argv: Sequence[str]) -> BenchConfig:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", type=int, nargs=3, default=[100, 5000, 50_000], metavar=("FLOOR", "BASE", "N")
    )
    parser.add_argument("--page-size", type=int, default=100, help="Confluence search page")
    parser.add_argument("--output", type=Path, help=f"results file (default {RESULTS_FILE})")
    parser.add_argument("--no-output", action="store_true", help="print only")
    parser.add_argument(
        "--throughput", type=int, metavar="PAGES", help="pages/s, OpenMP spinning vs sleeping"
    )
    args = parser.parse_args(argv)
    default_output = THROUGHPUT_FILE if args.throughput else RESULTS_FILE
    return BenchConfig(
        sizes=tuple(args.sizes),
        page_size=args.page_size,
        output=None if args.no_output else (args.output or default_output),
        command=" ".join(["python", *sys.argv]),
        throughput_pages=args.throughput,
    )


def fake_space(pages: int) -> FakeConfluence:
    fake = FakeConfluence()
    for n in range(pages):
        body = f"<p>Service {n} restarts with make restart-{n}.</p>"
        fake.add(Page(str(100_000 + n), "OPS", f"Runbook {n}", body, T0 + timedelta(seconds=n)))
    return fake


def sources_toml(fake: FakeConfluence, page_size: int) -> str:
    return (
        '[[source]]\nname = "ops"\nkind = "confluence"\n[source.settings]\n'
        f'url = "{fake.base_url}"\ncloud = true\nuser_env = "WIKI_USER"\n'
        'token_env = "WIKI_TOKEN"\nspaces = ["OPS"]\nattachments = false\n'
        f"page_size = {page_size}\n"
    )


async def new_database(admin_dsn: str, name: str) -> str:
    admin = await asyncpg.connect(admin_dsn)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    return urlunsplit(urlsplit(admin_dsn)._replace(path=f"/{name}"))


async def state(dsn: str) -> tuple[bool, int]:
    """Whether the run has started (the model loaded), and the documents written."""
    try:
        conn = await asyncpg.connect(dsn)
    except (OSError, asyncpg.PostgresError):
        return False, 0
    try:
        started = bool(await conn.fetchval("SELECT count(*) FROM index_runs"))
        return started, int(await conn.fetchval("SELECT count(*) FROM documents") or 0)
    except asyncpg.UndefinedTableError:
        return False, 0  # not migrated yet
    finally:
        await conn.close()


async def sync(
    pages: int,
    *,
    admin_dsn: str,
    folder: Path,
    config: BenchConfig,
    progress: Progress,
    spinning: bool = False,
) -> SyncRun:
    """One first sync of `pages` pages by a `kb index` child process; its peak RSS."""
    label = f"{pages}-spinning" if spinning else str(pages)
    fake = fake_space(pages)
    server = TestServer(fake.app())
    await server.start_server()
    fake.server = server
    try:
        dsn = await new_database(admin_dsn, f"pages_{label.replace('-', '_')}")
        run_dir = folder / f"run-{label}"
        run_dir.mkdir()
        (run_dir / "sources.toml").write_text(sources_toml(fake, config.page_size))
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO_ROOT),
            "DATABASE_URL": dsn,
            "KB_HOME": str(run_dir / "home"),
            "KB_SOURCES": str(run_dir / "sources.toml"),
            "WIKI_USER": "bot@acme.test",
            "WIKI_TOKEN": "api-token",
        }
        task = progress.add_task(f"{pages:,} pages{' spin' if spinning else ''}", total=pages)
        kb = ["-c", SPINNING_KB] if spinning else ["-m", "bot"]
        started = time.perf_counter()
        with (run_dir / "out.json").open("wb") as out, (run_dir / "err.log").open("wb") as err:
            child = subprocess.Popen(
                [sys.executable, *kb, "index", "--source", "ops", "--json"],
                env=env, cwd=REPO_ROOT, stdout=out, stderr=err,
            )  # fmt: skip
            meter = SyncMeter(child.pid)
            try:
                while True:
                    pid, status, usage = os.wait4(child.pid, os.WNOHANG)
                    if pid:
                        break
                    run_started, count = await state(dsn)
                    meter.sample(started=run_started)
                    progress.update(task, completed=count)
                    await asyncio.sleep(0.5)
            except BaseException:
                child.kill()  # interrupted: the child does not outlive the benchmark
                child.wait()
                raise
        seconds = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        if child.returncode != 0:
            tail = (run_dir / "err.log").read_text()[-2000:]
            raise SystemExit(f"kb index failed at {pages} pages ({child.returncode}):\n{tail}")
        _, documents = await state(dsn)
        progress.update(task, completed=documents)
        report = json.loads((run_dir / "out.json").read_text())
        return SyncRun(
            pages=pages,
            seconds=seconds,
            peak_rss_mb=usage.ru_maxrss / 1024,  # KiB on Linux
            rss_at_start_mb=meter.rss_at_start_kb / 1024,
            peak_during_sync_mb=meter.peak_since_kb / 1024,
            documents=documents,
            report=report,
            spinning=spinning,
        )
    finally:
        await server.close()


def report(config: BenchConfig, runs: Sequence[SyncRun], seconds: float) -> str:
    floor, base, large = runs
    load = os.getloadavg()
    lines = [
        SECTION,
        "",
        "A first sync of the fake Confluence space by a real `kb index` process (connector, "
        "indexer, embedding model, embedded Postgres), one short paragraph per page, "
        f"{config.page_size} pages per search answer. Memory of that process (the fake, "
        "served by the benchmark, not counted): its whole peak RSS from the kernel "
        "(`os.wait4`, `ru_maxrss`; loading the model is most of it), its RSS when the run "
        "started (the model loaded, before the listing), and its peak after that (the "
        "high-water mark reset then, `/proc/<pid>/clear_refs`): the sync's own growth.",
        "",
        "| pages | documents written | seconds | pages/s | whole peak RSS MB "
        "| RSS at the run's start MB | peak during the sync MB | sync's growth MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        lines.append(
            f"| {run.pages:,} | {run.documents:,} | {run.seconds:.0f} | "
            f"{run.pages / run.seconds:.1f} | {run.peak_rss_mb:.0f} | "
            f"{run.rss_at_start_mb:.0f} | {run.peak_during_sync_mb:.0f} | "
            f"{run.sync_growth_mb:.0f} |"
        )
    lines += [
        "",
        f"{large.pages / base.pages:.0f}x the pages of the baseline: whole peak RSS "
        f"{large.peak_rss_mb / base.peak_rss_mb:.2f}x ({large.peak_rss_mb:.0f} MB against "
        f"{base.peak_rss_mb:.0f} MB); peak during the sync "
        f"{large.peak_during_sync_mb / base.peak_during_sync_mb:.2f}x "
        f"({large.peak_during_sync_mb:.0f} MB against "
        f"{base.peak_during_sync_mb:.0f} MB); the sync's growth {large.sync_growth_mb:.0f} "
        f"MB against {base.sync_growth_mb:.0f} MB ({floor.sync_growth_mb:.0f} MB at "
        f"{floor.pages:,} pages).",
        "",
        f"Machine: {os.cpu_count()} CPUs, Python {platform.python_version()}, load average "
        f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} at the end; the run took "
        f"{seconds / 60:.1f} min. Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC.",
        "",
        f"Command: `{config.command}`",
    ]
    return "\n".join(lines) + "\n"


def throughput_report(config: BenchConfig, runs: Sequence[SyncRun], seconds: float) -> str:
    spinning, sleeping = runs
    load = os.getloadavg()
    lines = [
        "# Throughput of a first sync: torch's OpenMP threads spinning or sleeping",
        "",
        "The same first sync of the fake Confluence space (one short paragraph per page, "
        f"{config.page_size} pages per search answer) by a real `kb index` process twice, "
        "in one run: with libgomp's default wait policy (threads spin at each barrier: "
        "what `kb` did before) and with `OMP_WAIT_POLICY=PASSIVE` (they sleep: what `kb` "
        "sets now, bot/cli.py). Seconds are the run's own (its report: the model loaded, "
        "from the listing to the last write); the process's whole time adds the start-up.",
        "",
        "| torch's OpenMP threads | pages | documents written | run seconds | pages/s "
        "| whole process seconds |",
        "|---|---|---|---|---|---|",
    ]
    for run in runs:
        lines.append(
            f"| {'spinning (before)' if run.spinning else 'sleeping (now)'} | {run.pages:,} "
            f"| {run.documents:,} | {float(run.report['seconds']):.1f} "
            f"| {run.pages_per_second:.1f} | {run.seconds:.0f} |"
        )
    lines += [
        "",
        f"Sleeping against spinning: {sleeping.pages_per_second / spinning.pages_per_second:.2f}x "
        "the pages per second.",
        "",
        f"Machine: {os.cpu_count()} CPUs (shared with other processes), Python "
        f"{platform.python_version()}, load average {load[0]:.2f} / {load[1]:.2f} / "
        f"{load[2]:.2f} at the end; the run took {seconds / 60:.1f} min. Run "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC.",
        "",
        f"Command: `{config.command}`",
    ]
    return "\n".join(lines) + "\n"


def write_section(path: Path, section: str) -> None:
    """Replace this script's section of the results file (or add it at the end)."""
    text = path.read_text() if path.exists() else ""
    head, found, _ = text.partition(SECTION)
    path.write_text((head if found else text).rstrip("\n") + "\n\n" + section)


async def main(config: BenchConfig) -> str:
    started = time.perf_counter()
    runs = []
    with tempfile.TemporaryDirectory(prefix="kb-connector-memory-") as scratch:
        folder = Path(scratch)
        server = await start_embedded_postgres(folder / "pg")
        try:
            with Progress(
                TextColumn("{task.description:<16}"), BarColumn(), MofNCompleteColumn(),
                TimeElapsedColumn(), refresh_per_second=1,
            ) as progress:  # fmt: skip
                if config.throughput_pages:
                    for spinning in (True, False):
                        run = await sync(
                            config.throughput_pages, admin_dsn=server.dsn, folder=folder,
                            config=config, progress=progress, spinning=spinning,
                        )  # fmt: skip
                        runs.append(run)
                else:
                    for pages in config.sizes:
                        run = await sync(
                            pages, admin_dsn=server.dsn, folder=folder, config=config,
                            progress=progress,
                        )  # fmt: skip
                        runs.append(run)
        finally:
            server.stop()
    if config.throughput_pages:
        return throughput_report(config, runs, time.perf_counter() - started)
    return report(config, runs, time.perf_counter() - started)


if __name__ == "__main__":
    settings = parse_args(sys.argv[1:])
    text = asyncio.run(main(settings))
    print(text)
    if settings.output is not None and settings.throughput_pages:
        settings.output.write_text(text)
        print(f"written to {settings.output}")
    elif settings.output is not None:
        write_section(settings.output, text)
        print(f"written to {settings.output}")
