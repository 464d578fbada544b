"""Benchmark of a reindex spread over `kb jobs --worker` processes: 1 worker against 2.

Builds the reindex benchmark's corpus (bench/reindex.py: the bundled handbook
replicated, copy k marked in every paragraph) as Markdown files in a temporary folder,
starts an embedded Postgres there, and for each layout in turn (same run, same machine,
same files), into a fresh database:

- starts W `kb jobs --worker` processes with KB_TORCH_THREADS=T each and waits until all
  have loaded the model and registered;
- runs `kb index <folder> --json` (the coordinating run: lists, converts, chunks, queues;
  it embeds nothing itself while a worker is alive) and times it from start to exit;
- meanwhile polls the queue, to see when the last document was queued;
- then reads the queue and the run record: every document done exactly once, who wrote
  how many, the CPU seconds each worker used (/proc), and the load average.

Layouts are `WxT` (W workers, T torch threads each); the default `1x2,2x1` compares, on
2 cores, one worker using both cores with two processes on one core each. A layout may
come back (`1x2,2x1,2x1,1x2`), so a load that drifts during the run weighs on both; the
summary sums each layout's runs. Prints a Markdown report and writes it to
bench/results/reindex_workers.md; the processes' output goes to bench/out/reindex_workers/.
From the repository root (as root, `nice -n -5` gives it an edge over other jobs on a
shared machine):

    python bench/reindex_workers.py                     # 2,400 documents (~20k chunks)
    python bench/reindex_workers.py --docs 40 --no-output   # smoke run
"""

from __future__ import annotations

from _env import REPO  # first: the environment, before numpy loads

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
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
from reindex import Folder, build_corpus, load_handbook

from store.embedded import EmbeddedPostgres, start_embedded_postgres
from store.migrate import apply_migrations

RESULTS_FILE = REPO / "bench" / "results" / "reindex_workers.md"
# The workers' and the coordinator's output, one file per layout (bench/out is ignored).
LOGS = REPO / "bench" / "out" / "reindex_workers"
SOURCE = "corpus"
_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class Layout:
    workers: int
    threads: int

    @property
    def label(self) -> str:
        workers = f"{self.workers} worker{'s' if self.workers > 1 else ''}"
        return f"{workers} × {self.threads} thread{'s' if self.threads > 1 else ''}"

    @staticmethod
    def parse(text: str) -> Layout:
        workers, threads = text.lower().split("x")
        return Layout(int(workers), int(threads))


@dataclass(frozen=True, slots=True)
class BenchConfig:
    docs: int
    layouts: tuple[Layout, ...]
    lease: float
    batch: int
    output: Path | None
    command: str


@dataclass(slots=True)
class Outcome:
    layout: Layout
    seconds: float  # `kb index` start to exit
    queued_after: float | None  # seconds from start until every document was queued
    embedding_window: float  # first document written to last
    record: dict[str, Any]  # what `kb index --json` printed
    run_counts: dict[str, Any]  # the index_runs row
    runs: int
    items: int
    distinct_uris: int
    done: int
    retried: int
    by_worker: dict[str, int]
    chunks_by_worker: dict[str, int]
    worker_cpu: dict[str, float]
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]
    load_samples: list[float] = field(default_factory=list)

    @property
    def chunks_embedded(self) -> int:
        return int(self.record.get("chunks_embedded", 0))

    @property
    def rate(self) -> float:
        return self.chunks_embedded / self.seconds


def parse_args(argv: Sequence[str]) -> BenchConfig:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=2400, help="documents (default 2400)")
    parser.add_argument(
        "--layouts", default="1x2,2x1", help="WxT: workers × torch threads each (1x2,2x1)"
    )
    parser.add_argument("--lease", type=float, default=60.0, help="KB_WORKER_LEASE_SECONDS")
    parser.add_argument(
        "--batch", type=int, default=256, help="KB_INDEX_BATCH_SIZE: chunks per claim (256)"
    )
    parser.add_argument("--output", type=Path, help=f"results file (default {RESULTS_FILE})")
    parser.add_argument("--no-output", action="store_true", help="print only")
    args = parser.parse_args(argv)
    return BenchConfig(
        docs=args.docs,
        layouts=tuple(Layout.parse(p) for p in args.layouts.split(",")),
        lease=args.lease,
        batch=args.batch,
        output=None if args.no_output else (args.output or RESULTS_FILE),
        command=" ".join(["python", *sys.argv]),
    )


# --- processes ---------------------------------------------------------------------


def kb_env(database_url: str, home: Path, *, threads: int, config: BenchConfig) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "KB_HOME": str(home),
        "KB_TORCH_THREADS": str(threads),
        "KB_WORKER_LEASE_SECONDS": f"{config.lease:g}",
        "KB_INDEX_BATCH_SIZE": str(config.batch),
        # The embedding threads at this process's priority, not 10 below it: on a shared
        # machine the default would hand the cores to everyone else's jobs.
        "KB_EMBED_NICENESS": "0",
    }


async def start_kb(env: dict[str, str], log: Path, *args: str) -> asyncio.subprocess.Process:
    with log.open("ab") as sink:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", *args, env=env, cwd=REPO, stdout=sink, stderr=sink
        )


async def start_coordinator(env: dict[str, str], folder: Path) -> asyncio.subprocess.Process:
    """`kb -v index FOLDER --json`: the run record on stdout, its log lines on stderr."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "-v", "index", str(folder), "--name", SOURCE, "--json",
        env=env, cwd=REPO, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def timestamped(stream: asyncio.StreamReader, log: Path, started: float) -> None:
    """Copy the coordinator's log lines to `log`, each with the seconds since it started."""
    with log.open("a") as sink:
        async for line in stream:
            stamp = time.monotonic() - started
            sink.write(f"[{stamp:7.1f} s] {line.decode(errors='replace').rstrip()}\n")
            sink.flush()


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a live process (its children not included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


async def fresh_database(server: EmbeddedPostgres) -> str:
    name = f"bench_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(server.dsn)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    base, _, query = server.dsn.partition("?")
    url = f"{base.rsplit('/', 1)[0]}/{name}" + (f"?{query}" if query else "")
    conn = await asyncpg.connect(url)
    try:
        await apply_migrations(conn)  # before the processes start, so none races another
    finally:
        await conn.close()
    return url


async def wait_for(conn: asyncpg.Connection, query: str, *, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while not await conn.fetchval(query):
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting on: {query}")
        await asyncio.sleep(0.2)


# --- one layout --------------------------------------------------------------------


async def run_layout(
    server: EmbeddedPostgres, folder: Folder, layout: Layout, config: BenchConfig, temp: Path
) -> Outcome:
    url = await fresh_database(server)
    home = temp / f"home-{layout.workers}x{layout.threads}"
    env = kb_env(url, home, threads=layout.threads, config=config)
    log = LOGS / f"{len(list(LOGS.glob('*.log'))) + 1}-{layout.workers}x{layout.threads}.log"
    conn = await asyncpg.connect(url)
    workers = [await start_kb(env, log, "jobs", "--worker") for _ in range(layout.workers)]
    try:
        print(f"{layout.label}: starting workers", flush=True)
        await wait_for(conn, f"SELECT count(*) = {layout.workers} FROM index_workers")
        load_before = os.getloadavg()
        print(f"{layout.label}: indexing {config.docs} documents", flush=True)
        started = time.monotonic()
        # The coordinator uses the machine's cores, like `kb index` alone would.
        index_env = {**env, "KB_TORCH_THREADS": str(layout.workers * layout.threads)}
        index = await start_coordinator(index_env, folder.root)
        watching = asyncio.create_task(_watch(conn, config.docs, started))
        assert index.stdout is not None and index.stderr is not None
        out, _ = await asyncio.gather(index.stdout.read(), timestamped(index.stderr, log, started))
        await index.wait()
        seconds = time.monotonic() - started
        queued_after, samples = await _stop(watching)
        load_after = os.getloadavg()
        if index.returncode != 0:
            raise RuntimeError(f"kb index failed ({index.returncode}); see {log}")
        cpu = {str(w.pid): cpu_seconds(w.pid) for w in workers}
        outcome = await _read_queue(conn, layout, cpu)
    finally:
        for worker in workers:
            if worker.returncode is None:
                worker.terminate()
                await worker.wait()
        await conn.close()
    outcome.seconds = seconds
    outcome.queued_after = queued_after
    outcome.record = json.loads(out)
    outcome.load_before, outcome.load_after, outcome.load_samples = load_before, load_after, samples
    print(
        f"{layout.label}: {seconds:.1f} s, {outcome.rate:.1f} chunks/s, "
        f"shares {outcome.by_worker}, load {load_after[0]:.2f}",
        flush=True,
    )
    return outcome


async def _watch(
    conn: asyncpg.Connection, docs: int, started: float
) -> tuple[float | None, list[float]]:
    """Until cancelled: when the queue first held every document; the 1-min load each 15 s."""
    queued_after: float | None = None
    samples: list[float] = []
    next_sample = time.monotonic()
    try:
        while True:
            if (
                queued_after is None
                and await conn.fetchval("SELECT count(*) FROM index_queue") >= docs
            ):
                queued_after = time.monotonic() - started
            if time.monotonic() >= next_sample:
                samples.append(os.getloadavg()[0])
                next_sample += 15
            await asyncio.sleep(0.5)
    except asyncio.CancelledError:
        return queued_after, samples


async def _stop(
    watching: asyncio.Task[tuple[float | None, list[float]]],
) -> tuple[float | None, list[float]]:
    watching.cancel()
    return await watching


async def _read_queue(conn: asyncpg.Connection, layout: Layout, cpu: dict[str, float]) -> Outcome:
    items = await conn.fetch(
        "SELECT uri, status, attempts, done_by, done_at, chunks_embedded FROM index_queue"
    )
    runs = await conn.fetch("SELECT counts FROM index_runs")
    by_worker: dict[str, int] = {}
    chunks: dict[str, int] = {}
    for item in items:
        pid = item["done_by"].split(":")[2] if item["done_by"] else "not done"
        by_worker[pid] = by_worker.get(pid, 0) + 1
        chunks[pid] = chunks.get(pid, 0) + (item["chunks_embedded"] or 0)
    done_at = [i["done_at"] for i in items if i["done_at"]]
    return Outcome(
        layout=layout,
        seconds=0.0,
        queued_after=None,
        embedding_window=(max(done_at) - min(done_at)).total_seconds() if done_at else 0.0,
        record={},
        run_counts=json.loads(runs[0]["counts"]) if runs else {},
        runs=len(runs),
        items=len(items),
        distinct_uris=len({i["uri"] for i in items}),
        done=sum(1 for i in items if i["status"] == "done"),
        retried=sum(1 for i in items if i["attempts"] > 1),
        by_worker=by_worker,
        chunks_by_worker=chunks,
        worker_cpu=cpu,
        load_before=(0.0, 0.0, 0.0),
        load_after=(0.0, 0.0, 0.0),
    )


# --- the run -----------------------------------------------------------------------


async def run(config: BenchConfig) -> tuple[list[Outcome], dict[str, str]]:
    pages = await load_handbook()
    corpus = build_corpus(pages, config.docs)
    facts = {
        "started": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "load at start": _loads(os.getloadavg()),
        "documents": f"{len(corpus)} ({len(pages)} handbook pages × up to "
        f"{-(-len(corpus) // len(pages))} copies)",
        "settings": f"KB_INDEX_BATCH_SIZE={config.batch}, "
        f"KB_WORKER_LEASE_SECONDS={config.lease:g}, KB_EMBED_NICENESS=0; the coordinator "
        "embeds nothing while a worker is alive",
    }
    outcomes = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kb-bench-workers-") as name:
        temp = Path(name)
        facts["process logs"] = str(LOGS.relative_to(REPO))
        LOGS.mkdir(parents=True, exist_ok=True)
        for old in LOGS.glob("*.log"):
            old.unlink()
        folder = Folder(temp / "corpus", len(corpus))
        folder.write(corpus)
        server = await start_embedded_postgres(temp / "data")
        try:
            for layout in config.layouts:
                outcomes.append(await run_layout(server, folder, layout, config, temp))
                if config.output is not None:  # so far, in case the run is cut short
                    config.output.write_text(report(outcomes, facts, config))
        finally:
            server.stop()
    facts["load at end"] = _loads(os.getloadavg())
    facts["wall time"] = f"{(time.monotonic() - started) / 60:.1f} min"
    facts.update(_machine())
    return outcomes, facts


def _machine() -> dict[str, str]:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    return {
        "CPUs": f"{len(os.sched_getaffinity(0))} × {cpu}",
        "niceness of this process": str(os.nice(0)),
        "Python": platform.python_version(),
        "git commit": commit,
    }


def _loads(loads: tuple[float, float, float]) -> str:
    return " / ".join(f"{v:.2f}" for v in loads) + " (1 / 5 / 15 min)"


# --- the report --------------------------------------------------------------------


def report(outcomes: Sequence[Outcome], facts: dict[str, str], config: BenchConfig) -> str:
    lines = [
        "# Reindex over `kb jobs --worker` processes",
        "",
        f"Command (from the repository root): `{config.command}`",
        "",
        "| # | layout | `kb index` wall time | chunks embedded | chunks/s | all queued after "
        "| documents by worker | worker CPU s | CPU ms / chunk | exactly once | run records "
        "| 1-min load before, during (mean, max), after |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for n, o in enumerate(outcomes, start=1):
        once = o.done == o.items == o.distinct_uris == config.docs
        mean = sum(o.load_samples) / len(o.load_samples) if o.load_samples else 0.0
        cpu = sum(o.worker_cpu.values())
        lines.append(
            f"| {n} | {o.layout.label} | {o.seconds:.1f} s | {o.chunks_embedded:,} | "
            f"{o.rate:.2f} | {_seconds(o.queued_after)} | "
            f"{', '.join(str(v) for v in o.by_worker.values())} | "
            f"{', '.join(f'{v:.0f}' for v in o.worker_cpu.values())} | "
            f"{1000 * cpu / max(1, o.chunks_embedded):.0f} | "
            f"{'yes' if once else 'NO'} ({o.done} done, {o.retried} retried) | {o.runs} | "
            f"{o.load_before[0]:.2f}, {mean:.2f}, {max(o.load_samples, default=0.0):.2f}, "
            f"{o.load_after[0]:.2f} |"
        )
    lines += ["", *_summary(outcomes)]
    lines += ["", "Run record of each run (`kb index --json`):", ""]
    for n, o in enumerate(outcomes, start=1):
        counts = {k: o.record.get(k) for k in _COUNTS}
        lines.append(f"{n}. {o.layout.label}: `{json.dumps(counts)}`")
    lines += ["", "| machine | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in facts.items()]
    return "\n".join(lines) + "\n"


def _summary(outcomes: Sequence[Outcome]) -> list[str]:
    """Per layout, all its runs together (chunks ÷ seconds); each against the first."""
    layouts: dict[str, list[Outcome]] = {}
    for o in outcomes:
        layouts.setdefault(o.layout.label, []).append(o)
    rates = {
        label: sum(o.chunks_embedded for o in runs) / sum(o.seconds for o in runs)
        for label, runs in layouts.items()
    }
    first = next(iter(rates))
    lines = [
        "| layout | runs | chunks/s, all its runs | ratio to the first layout |",
        "|---|---|---|---|",
    ]
    for label, rate in rates.items():
        lines.append(
            f"| {label} | {len(layouts[label])} | {rate:.2f} | **{rate / rates[first]:.2f}** |"
        )
    return lines


_COUNTS = (
    "documents_added", "documents_updated", "documents_unchanged", "documents_failed",
    "chunks_embedded", "chunks_reused",
)  # fmt: skip


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f} s"


def main(argv: Sequence[str] | None = None) -> None:
    config = parse_args(sys.argv[1:] if argv is None else argv)
    outcomes, facts = asyncio.run(run(config))
    text = report(outcomes, facts, config)
    print("\n" + text)
    if config.output is not None:
        config.output.write_text(text)
        print(f"written to {config.output}")


if __name__ == "__main__":
    main()
