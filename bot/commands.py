"""What each `kb` command does, given settings. The CLI module only parses arguments."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import json
import logging
import signal
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from agent.answer import Answer
from bot.logs import JsonFormatter
from bot.settings import Settings
from bot.slack.access.config import access_report
from bot.slack.render.blocks import answer_messages
from bot.slack.render.preview import PreviewThread, messages_json, preview_html, threads_html
from bot.sources import configured_sources, handbook_config, source_credentials
from bot.terminal import answer_text
from bot.wiring import Runtime, open_runtime
from jobs.config import SlackSourceConfig, SourceConfig
from jobs.indexing import IndexReport, ProgressCallback
from jobs.reindex import ReindexOutcome
from jobs.schedule import build_scheduler
from store.index_runs import IndexRunRepository
from store.source_cursors import SourceCursorRepository

console = Console(stderr=True)
log = logging.getLogger(__name__)


@contextlib.contextmanager
def progress_bars() -> Iterator[Any]:
    """A factory of per-source progress callbacks drawing bars on stderr."""
    with Progress(
        TextColumn("[bold]indexing[/] {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:

        def for_source(name: str) -> ProgressCallback:
            task = progress.add_task(name, total=None)

            def advance(done: int, total: int) -> None:
                progress.update(task, completed=done, total=total)

            return advance

        yield for_source


async def reindex(
    runtime: Runtime, configs: Sequence[SourceConfig], *, base_dir: Path, dry_run: bool = False
) -> ReindexOutcome:
    """Index `configs` (under the cross-instance lock) with progress bars."""
    console.print("[dim]loading the embedding model and listing documents…[/]")
    await runtime.embedder.load()
    with progress_bars() as bars:
        job = runtime.reindex_job(base_dir=base_dir, credentials=source_credentials(configs))
        return await job.run(configs, dry_run=dry_run, progress=bars)


def say(
    text: str,
    *,
    markup: bool = True,
    soft_wrap: bool = False,
    level: int = logging.INFO,
    **fields: Any,
) -> None:
    """A line for the operator: on the console, or a log line when logs are JSON (`kb
    serve` and `kb jobs`, so stderr stays one JSON object per line)."""
    if not json_logging():
        console.print(text, markup=markup, soft_wrap=soft_wrap)
        return
    plain = Text.from_markup(text).plain if markup else text
    log.log(level, plain, extra=fields)


def json_logging() -> bool:
    return any(isinstance(h.formatter, JsonFormatter) for h in logging.getLogger().handlers)


def print_outcome(outcome: ReindexOutcome) -> None:
    if outcome.skipped:
        say(f"[yellow]skipped:[/] {outcome.reason}; try again when it has finished")
    for report in outcome.reports:
        print_report(report)
    for name, error in outcome.errors.items():
        say(
            f"[red]source {name} failed:[/] {error}",
            level=logging.ERROR,
            source=name,
            stage="reindex",
            outcome="failed",
        )


def print_report(report: IndexReport) -> None:
    verb = "would change" if report.dry_run else "indexed"
    say(
        f"{verb} [bold]{report.source}[/] in {report.seconds:.1f}s: "
        f"{report.documents_added} added, {report.documents_updated} updated, "
        f"{report.documents_unchanged} unchanged, {report.documents_deleted} deleted, "
        f"{report.documents_failed} failed; chunks {report.chunks_embedded} embedded, "
        f"{report.chunks_reused} reused, {report.chunks_deleted} deleted",
        source=report.source,
        stage="reindex",
        outcome="partial" if report.failures else "succeeded",
        latency_ms=round(report.seconds * 1000, 1),
    )
    for change in report.changes:
        say(f"  would be {change['change']}: {change['uri']}", markup=False)
    for failure in report.failures:
        say(f"  skipped {failure['uri']}: {failure['reason']}", markup=False, level=logging.WARNING)
    for warning in report.warnings:
        say(f"  warning: {warning}", markup=False, level=logging.WARNING)


def outcome_json(outcome: ReindexOutcome) -> Any:
    if outcome.skipped:
        return {"skipped": True, "reason": outcome.reason}
    records: list[dict[str, Any]] = [r.as_dict() for r in outcome.reports]
    records += [{"source": n, "error": e} for n, e in outcome.errors.items()]
    return records[0] if len(records) == 1 else records


async def index_command(
    settings: Settings, configs: Sequence[SourceConfig], base_dir: Path, *, dry_run: bool
) -> ReindexOutcome:
    async with open_runtime(settings, answers_questions=False) as runtime:
        return await reindex(runtime, configs, base_dir=base_dir, dry_run=dry_run)


async def ask_command(
    settings: Settings, question: str, *, as_json: bool, blocks: bool, html_path: Path | None
) -> None:
    async with open_runtime(settings) as runtime:
        await _ensure_indexed(runtime)
        answerer = runtime.answerer(await runtime.query_embedder())
        answer = await answerer.answer(question)
    messages = answer_messages(answer)
    if html_path is not None:
        _write_page(html_path, preview_html(messages, question=question))
        console.print(f"[dim]wrote the Slack preview to {html_path}[/]")
    if as_json:
        click.echo(json.dumps(answer.as_dict(), indent=2))
        return
    click.echo(answer_text(answer))
    console.print(f"[dim]run {answer.run_id}[/]")
    if blocks:
        click.echo(messages_json(messages))


async def trace_command(settings: Settings, run_id: int, *, as_json: bool) -> None:
    """Print why run `run_id` answered as it did (steps, queries, sources, stop reason)."""
    from agent.trace import trace_from_run, trace_lines
    from store.runs import RunRepository

    async with open_runtime(settings) as runtime:
        run = await RunRepository(runtime.pool).get(run_id)
    if run is None:
        raise click.ClickException(f"no run {run_id}; `kb ask` prints the id of each run")
    trace = trace_from_run(run)
    if as_json:
        click.echo(json.dumps(dataclasses.asdict(trace), indent=2, default=str))
        return
    click.echo("\n".join(trace_lines(trace)))


async def demo_command(settings: Settings, questions: Sequence[str], *, interactive: bool) -> None:
    preview = settings.kb_home / "demo-replies.html"
    threads: list[PreviewThread] = []
    handbook = handbook_config(settings)
    async with open_runtime(settings) as runtime:
        console.print(f"[dim]database: {runtime.database}[/]")
        outcome = await reindex(runtime, [handbook], base_dir=Path.cwd())
        print_outcome(outcome)
        if outcome.errors:
            raise click.ClickException("the demo knowledge base could not be indexed (above)")
        embedder = await runtime.query_embedder()
        answerer = runtime.answerer(embedder)
        console.print(f"[dim]questions embedded through {embedder.query_backend}[/]")
        for question in questions:
            click.echo(f"\n? {question}")
            threads.append(_demo_reply(question, await answerer.answer(question)))
        _write_demo_preview(preview, threads)
        if interactive:
            click.echo("\nAsk your own question about the handbook (empty line or Ctrl-D to quit).")
            while question := _prompt():
                threads.append(_demo_reply(question, await answerer.answer(question)))
                _write_demo_preview(preview, threads)
    click.echo(f"\nThe replies as Slack would show them: {preview}")


def _demo_reply(question: str, answer: Answer) -> PreviewThread:
    click.echo(answer_text(answer))
    return PreviewThread(messages=answer_messages(answer), question=question)


def _write_demo_preview(path: Path, threads: Sequence[PreviewThread]) -> None:
    _write_page(path, threads_html(threads, title="slack-kb demo replies"))


def _write_page(path: Path, page: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"cannot write {path}: {exc.strerror}") from exc


def _prompt() -> str:
    try:
        return input("\n? ").strip()
    except EOFError:
        return ""


async def sources_command(settings: Settings) -> None:
    configs, _ = configured_sources(settings)
    origin = settings.sources_path if settings.sources_path.exists() else "built-in default"
    click.echo(f"sources from {origin}:")
    async with open_runtime(settings) as runtime:
        runs = IndexRunRepository(runtime.pool)
        for config in configs:
            latest = await runs.latest(source=config.name, limit=1)
            last = (
                f"last run {latest[0].started_at:%Y-%m-%d %H:%M} UTC, {latest[0].status}"
                if latest
                else "never run"
            )
            click.echo(
                f"  {config.name:<20} {config.kind:<9} collection={config.collection:<12} "
                f"{config.schedule.describe():<18} {last}"
            )


async def jobs_command(settings: Settings) -> None:
    """Run the reindex schedule until interrupted."""
    await _run_with_schedule(settings, serve_http=False)


async def worker_command(settings: Settings, *, concurrency: int) -> None:
    """`kb jobs --worker`: embed queued documents of whichever reindex runs, until stopped.

    One plain line per batch on stderr (no wrapping: these are log lines), never text."""
    from jobs.queue_consumer import BatchOutcome
    from jobs.worker import WorkerTotals

    async with open_runtime(settings, answers_questions=False) as runtime:
        model = await runtime.embedder.load()

        def batch_done(outcome: BatchOutcome, totals: WorkerTotals) -> None:
            runs = ", ".join(str(r) for r in outcome.run_ids)
            lost = f", {outcome.lost} taken over" if outcome.lost else ""
            click.echo(
                f"run {runs}: wrote {outcome.documents} documents ({outcome.chunks_embedded} "
                f"chunks embedded, {outcome.chunks_reused} reused{lost}) in "
                f"{outcome.seconds:.1f} s; {totals.documents} documents so far",
                err=True,
            )

        worker = runtime.index_worker(concurrency=concurrency, on_batch=batch_done)
        click.echo(
            f"worker {worker.name}: model {model.name}, concurrency {concurrency}, lease "
            f"{settings.worker_lease_seconds:g} s; waiting for reindex runs (Ctrl-C to stop)",
            err=True,
        )
        stop = asyncio.Event()
        _stop_on_signals(stop)
        totals = await worker.run(stop)
    click.echo(
        f"worker {worker.name} stopped: {totals.documents} documents in {totals.batches} batches",
        err=True,
    )


async def serve_command(settings: Settings) -> None:
    """Serve HTTP (health, Slack's events), Socket Mode when configured, and the schedule."""
    await _run_with_schedule(settings, serve_http=True)


async def _run_with_schedule(settings: Settings, *, serve_http: bool) -> None:
    from bot.server import build_http_app, running_slack, serve_until_stopped
    from bot.slack.transport.thread_watch import ThreadWatch

    configs, base_dir = configured_sources(settings)
    async with open_runtime(settings) as runtime:
        await runtime.embedder.load()
        if serve_http and (await runtime.documents.counts())["chunks"]:
            await runtime.warm()  # the first question should not pay for the BM25 build
        job = runtime.reindex_job(base_dir=base_dir, credentials=source_credentials(configs))
        # Sources due at the same moment take turns here; the advisory lock inside the job
        # would otherwise make all but one of them skip.
        turns = asyncio.Lock()
        # The passes under way, stopped and recorded at shutdown while the database is open.
        passes: set[asyncio.Task[Any]] = set()

        async def run_source(config: SourceConfig) -> None:
            async with _tracked(passes), turns:
                outcome = await job.run([config])
                runtime.metrics.reindexed(outcome, sources=[config.name])
                print_outcome(outcome)
            if serve_http and settings.sentence_warmup and _changed(outcome):
                await _warm_sentences(runtime)

        async def refresh_threads(config: SlackSourceConfig, uris: list[str]) -> ReindexOutcome:
            async with _tracked(passes), turns:
                outcome = await job.refresh(config, uris)
                runtime.metrics.reindexed(outcome, sources=[config.name])
                return outcome

        slack_sources = [c for c in configs if isinstance(c, SlackSourceConfig)]
        # Edits, deletions and replies in the threads a `slack` source indexed are read
        # again as Slack reports them, not at the source's next run.
        thread_watch = (
            ThreadWatch(
                sources=slack_sources,
                refresh=refresh_threads,
                cursors=SourceCursorRepository(runtime.pool),
            )
            if slack_sources
            else None
        )
        scheduler = build_scheduler(configs, run_source=run_source)
        reindex_scheduled = bool(scheduler.get_jobs())
        if not reindex_scheduled and not serve_http:
            raise click.ClickException(
                f'no source has a schedule; add `every = "1h"` or `cron = "…"` to a source '
                f"in {settings.sources_path}"
            )
        add_retention_job(scheduler, runtime)
        if not serve_http:
            await _schedule_until_signalled(scheduler, passes)
            return
        # Build the keyword index now: built by the first question instead, its GIL-bound
        # analysis would stall the acks of everything arriving meanwhile.
        await runtime.keyword_search.refresh()
        # Then take the ~500k objects of the model and the index out of the cyclic garbage
        # collector's view: a full collection over them stops the event loop for ~250 ms
        # (measured on the handbook), long enough to miss the ack target once in a while.
        gc.collect()
        gc.freeze()
        async with running_slack(runtime, thread_watch=thread_watch) as slack:
            _report_slack(settings, slack)
            if slack is not None:
                add_slack_jobs(scheduler, runtime)
            scheduler.start()
            for scheduled in scheduler.get_jobs():
                say(f"scheduled {scheduled.name}: {scheduled.trigger}", markup=False)
            say(f"serving on http://{settings.host}:{settings.port}/healthz")
            warming = (
                asyncio.create_task(_warm_sentences(runtime))
                if settings.sentence_warmup and serve_http
                else None
            )
            try:
                app = build_http_app(
                    runtime,
                    slack=slack.app if slack and slack.http else None,
                    scheduler_running=lambda: bool(scheduler.running),
                    reindex_scheduled=reindex_scheduled,
                )
                await serve_until_stopped(app, host=settings.host, port=settings.port)
            finally:
                if warming is not None:
                    warming.cancel()
                if thread_watch is not None:
                    await thread_watch.close()
                scheduler.shutdown(wait=False)
                await _stop_passes(passes)


def _changed(outcome: ReindexOutcome) -> bool:
    return any(r.documents_added or r.documents_updated for r in outcome.reports)


async def _warm_sentences(runtime: Runtime) -> None:
    """Embed the stored sentences no question has read yet; a failure costs only speed."""
    try:
        report = await runtime.warm_sentences()
    except Exception:
        log.warning("could not embed the sentences ahead of the questions", exc_info=True)
        return
    log.info(
        "sentences ready (%s read): %d units in %d chunks of %d documents, %d embedded now",
        report.read,
        report.units,
        report.chunks,
        report.documents,
        report.embedded,
    )


async def _schedule_until_signalled(scheduler: Any, passes: set[asyncio.Task[Any]]) -> None:
    scheduler.start()
    for scheduled in scheduler.get_jobs():
        say(f"scheduled {scheduled.name}: {scheduled.trigger}", markup=False)
    try:
        await _until_signalled()
    finally:
        scheduler.shutdown(wait=False)
        await _stop_passes(passes)


@contextlib.asynccontextmanager
async def _tracked(tasks: set[asyncio.Task[Any]]) -> AsyncIterator[None]:
    """The current task counted among `tasks` while the block runs."""
    task = asyncio.current_task()
    assert task is not None  # a scheduled job runs as a task
    tasks.add(task)
    try:
        yield
    finally:
        tasks.discard(task)


async def _stop_passes(passes: set[asyncio.Task[Any]], *, timeout: float = 30) -> None:
    """Cancel the reindex passes under way and wait for each to record that it stopped.

    The scheduler's shutdown does not wait for them; cancelled later, by the event loop's
    own shutdown, a pass would find the database pool closed and leave its run marked
    running until the next pass marks it abandoned."""
    running = list(passes)
    for task in running:
        task.cancel()
    if running:
        await asyncio.wait(running, timeout=timeout)


def _report_slack(settings: Settings, slack: Any) -> None:
    if slack is None:
        say(
            f"Slack is off: set {', '.join(settings.slack_missing())}", markup=False, soft_wrap=True
        )
        return
    modes = []
    if slack.http:
        modes.append(f"HTTP at http://{settings.host}:{settings.port}/slack/events")
    if slack.socket_mode is not None:
        modes.append("Socket Mode")
    say(f"Slack app running: {' and '.join(modes)}", markup=False, soft_wrap=True)
    for line in access_report(slack.services.access, path=settings.slack_config_path):
        say(line, markup=False, soft_wrap=True)


RETENTION_EVERY = 6  # hours; the first purge runs at start


def add_retention_job(scheduler: Any, runtime: Runtime) -> None:
    """Purge stored runs and question text past KB_RETENTION_DAYS (none when it is 0)."""
    from datetime import UTC, datetime

    from jobs.retention import RetentionJob

    keep = runtime.settings.retention
    if keep is None:
        say("retention: off (KB_RETENTION_DAYS=0); runs and questions are kept", markup=False)
        return
    job = RetentionJob(pool=runtime.pool, keep=keep)
    scheduler.add_job(
        job.run,
        "interval",
        hours=RETENTION_EVERY,
        id="retention",
        name="retention purge",
        coalesce=True,
        max_instances=1,
        next_run_time=datetime.now(UTC),
    )


async def export_command(settings: Settings, path: Path) -> int:
    """Write the data that cannot be re-derived to `path` (JSON Lines); return the lines."""
    from store.portable import export_lines

    async with open_runtime(settings) as runtime:
        lines = await export_lines(runtime.pool)
    try:
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"cannot write {path}: {exc.strerror}") from exc
    return len(lines) - 1


async def import_command(settings: Settings, path: Path) -> Any:
    """Restore an export file: every line checked first, then all of it or nothing."""
    from store.portable import import_lines

    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise click.ClickException(f"cannot read {path}: {exc}") from exc
    async with open_runtime(settings) as runtime:
        return await import_lines(runtime.pool, lines)


def add_slack_jobs(scheduler: Any, runtime: Runtime) -> None:
    """Index the experts' answers at start and hourly; forget delivery ids after a day."""
    from datetime import UTC, datetime, timedelta

    from store.deliveries import DeliveryLog

    async def index_escalations() -> None:
        for report in await runtime.index_escalations():
            if report.changed:
                print_report(report)

    async def prune_deliveries() -> None:
        await DeliveryLog(runtime.pool).prune(older_than=timedelta(days=1))

    for name, work in (("reindex escalations", index_escalations), ("prune", prune_deliveries)):
        scheduler.add_job(
            work,
            "interval",
            hours=1,
            name=name,
            coalesce=True,
            max_instances=1,
            next_run_time=datetime.now(UTC),
        )


async def _until_signalled() -> None:
    stop = asyncio.Event()
    _stop_on_signals(stop)
    await stop.wait()


def _stop_on_signals(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)


async def status_command(settings: Settings) -> None:
    from store.embedding_space import label

    async with open_runtime(settings) as runtime:
        counts = await runtime.documents.counts()
        space = runtime.documents.embedding_space()
        model, building = await space.active(), await space.next()
    click.echo(f"KB_HOME:   {settings.kb_home}")
    click.echo(f"database:  {runtime.database}")
    click.echo(f"pgvector:  {runtime.pgvector.describe()}")
    click.echo(f"model:     {label(model) if model else 'none yet'}")
    if building is not None:
        click.echo(f"building:  {label(building)} (a re-embed under way; `kb index` resumes it)")
    click.echo(
        f"indexed:   {counts['documents']} documents, {counts['chunks']} chunks "
        f"from {counts['sources']} sources"
    )


async def _ensure_indexed(runtime: Runtime) -> None:
    if (await runtime.documents.counts())["chunks"] == 0:
        raise click.ClickException(
            "the knowledge base is empty; run `kb index` (the bundled handbook) "
            "or `kb index PATH` first"
        )


async def stats_command(settings: Settings, *, days: int, as_json: bool) -> None:
    from bot.stats import report_text, stats_report
    from store.stats import StatsReader

    async with open_runtime(settings) as runtime:
        report = await stats_report(StatsReader(runtime.pool), embedder=runtime.embedder, days=days)
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2, ensure_ascii=False))
    else:
        click.echo(report_text(report))
