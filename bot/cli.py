"""The `kb` command: index, ask, demo, status.

Heavy libraries (torch, sentence-transformers) are imported only by the commands that
embed, so `kb --help` and `kb status` answer at once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

import click

# Two cores shared by numpy's BLAS and torch: let torch own the cores (see DESIGN.md).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
# torch's OpenMP threads sleep at a barrier instead of spinning: on a machine whose cores
# are shared (Postgres, the event loop, other processes) spinning threads take the cores
# the others need: a first sync of 2,000 tiny pages ran 1.91x faster sleeping on a busy
# 2-core machine, and no slower when the gain vanished (bench/results/first_sync_throughput.md).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
# pgserver asks platformdirs for a runtime dir; the fallback it warns about is fine.
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")

T = TypeVar("T")

DEMO_QUESTIONS = (
    "How do I request leave?",
    "How do I book travel and get reimbursed?",
    "What should I do in my first week at TTS?",
)


# Exit statuses: 1 for an error while working, 2 for configuration to fix first (click's
# own status for a bad command line).
SETTINGS_ERROR = 2


def _run(work: Callable[[], Awaitable[T]]) -> T:
    """Run one async command; turn the errors we know into one plain line and exit 1 or 2."""
    from agent.errors import AgentError
    from agent.retrieval.rerank import RerankerUnavailable
    from bot.errors import SettingsError
    from bot.slack.errors import SlackBotError
    from jobs.errors import JobsError
    from store.errors import EmbeddingModelUnavailable, StoreError

    try:
        return asyncio.run(work())  # type: ignore[arg-type]
    except (SettingsError, EmbeddingModelUnavailable, RerankerUnavailable) as exc:
        _error_line(exc)
        sys.exit(SETTINGS_ERROR)
    except (StoreError, JobsError, AgentError, SlackBotError) as exc:
        _error_line(exc)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)


def _error_line(exc: BaseException) -> None:
    # Library messages can span lines (model loaders quote their own errors): keep one.
    click.echo("error: " + " ".join(str(exc).split()), err=True)


class _OneLineErrors(click.Group):
    """Usage errors as one line (`error: …`, status 2), like every other error of `kb`."""

    def main(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except click.ClickException as exc:
            click.echo("error: " + " ".join(exc.format_message().split()), err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            sys.exit(130)


def _not_from(libraries: tuple[str, ...]) -> Callable[[logging.LogRecord], bool]:
    """A log filter dropping the records of `libraries` and their modules."""
    return lambda record: (
        not any(record.name == name or record.name.startswith(f"{name}.") for name in libraries)
    )


@click.group(cls=_OneLineErrors)
@click.option("-v", "--verbose", is_flag=True, help="Log what happens (never document text).")
def main(verbose: bool) -> None:
    """slack-kb: answers from your team's documents, with verified quotes."""
    from bot.logs import configure_logging

    # A library's warning (a pool reconnecting, a server that would not stop) is one
    # line here; --verbose keeps its traceback for whoever is debugging.
    handler = configure_logging(
        log_format="text", level=logging.INFO if verbose else logging.WARNING, tracebacks=verbose
    )
    if not verbose:
        # A pool retrying and a dead server refusing to stop: the one error line of a
        # failed command says it (bot/wiring.py's open_runtime), and a recovered one
        # needs no word. Kept off the terminal, not unlogged: store/embedded.py reads
        # pgserver's record of a failed command for that line.
        handler.addFilter(_not_from(("asyncpg.pool", "pgserver")))


@main.command()
@click.argument("path", required=False, type=click.Path(path_type=Path, file_okay=False))
@click.option("--source", "source_name", help="Index only this configured source.")
@click.option("--name", help="Source name for PATH (default: the folder's name).")
@click.option("--url-template", help="Citation URL for PATH's files, e.g. https://x/{path}.")
@click.option("--dry-run", is_flag=True, help="List what would change; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the run record as JSON.")
def index(
    path: Path | None,
    source_name: str | None,
    name: str | None,
    url_template: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Index PATH, or the configured sources (default: the bundled handbook)."""
    from bot.sources import select_sources
    from jobs.errors import JobsError

    if path is not None and source_name is not None:
        raise click.UsageError(
            "give PATH or --source, not both: --source picks a source from the sources file; "
            "to name PATH's source, use --name"
        )
    settings = _settings()
    try:
        configs, base_dir = select_sources(settings, path, source_name, name, url_template)
    except JobsError as exc:
        raise click.ClickException(str(exc)) from exc
    from bot import commands  # after the checks: it imports the retrieval stack

    outcome = _run(lambda: commands.index_command(settings, configs, base_dir, dry_run=dry_run))
    if as_json:
        click.echo(json.dumps(commands.outcome_json(outcome), indent=2, default=str))
    else:
        commands.print_outcome(outcome)
    if outcome.errors:
        sys.exit(1)


@main.command()
@click.argument("question")
@click.option("--json", "as_json", is_flag=True, help="Print the answer object as JSON.")
@click.option("--blocks", is_flag=True, help="Print the Slack messages (Block Kit JSON) too.")
@click.option(
    "--html",
    "html_path",
    type=click.Path(path_type=Path, dir_okay=False, writable=True),
    help="Write the reply as Slack would show it, as an HTML page, to this file.",
)
def ask(question: str, as_json: bool, blocks: bool, html_path: Path | None) -> None:
    """Answer QUESTION from the knowledge base, with verified quotes."""
    if not question.strip():
        # Nothing to search for: a run on "" would only report the knowledge base silent.
        raise click.UsageError('give a question: kb ask "How much annual leave do I earn?"')
    from bot.commands import ask_command

    _run(
        lambda: ask_command(
            _settings(), question, as_json=as_json, blocks=blocks, html_path=html_path
        )
    )


@main.command()
@click.argument("run_id", type=int)
@click.option("--json", "as_json", is_flag=True, help="Print the trace as JSON.")
def trace(run_id: int, as_json: bool) -> None:
    """Why run RUN_ID answered as it did: sub-questions, queries, sources, steps."""
    from bot.commands import trace_command

    _run(lambda: trace_command(_settings(), run_id, as_json=as_json))


@main.command()
@click.option("--no-prompt", is_flag=True, help="Answer the sample questions, then exit.")
def demo(no_prompt: bool) -> None:
    """Index the bundled handbook, answer three questions, then take yours.

    The replies are also written, as Slack would show them, to $KB_HOME/demo-replies.html.
    """
    from bot.commands import demo_command

    interactive = not no_prompt and sys.stdin.isatty()
    _run(lambda: demo_command(_settings(), DEMO_QUESTIONS, interactive=interactive))


@main.command()
@click.option(
    "--check", is_flag=True, help="Only validate the sources file (exit 1 if it is wrong)."
)
@click.option(
    "--online",
    is_flag=True,
    help="With --check: sign in to each connector and report what it can see.",
)
def sources(check: bool, online: bool) -> None:
    """List the configured sources, their schedules and last runs."""
    if online and not check:
        raise click.UsageError("--online goes with --check: kb sources --check --online")
    if check:
        from bot.sources import check_sources

        _run(lambda: check_sources(_settings(), online=online))
        return
    from bot.commands import sources_command

    _run(lambda: sources_command(_settings()))


@main.command()
def serve() -> None:
    """Run the Slack app (HTTP and/or Socket Mode), the reindex schedule, /healthz, /readyz
    and /metrics. Logs are JSON lines on stderr unless KB_LOG_FORMAT=text."""
    from bot.commands import serve_command

    settings = _server_logging(_settings())
    _run(lambda: serve_command(settings))


@main.command()
@click.option(
    "--worker",
    is_flag=True,
    help="Embed the queued documents of whichever reindex runs, instead of the schedule.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 16),
    help="With --worker: batches in flight at once (default 1).",
)
def jobs(worker: bool, concurrency: int | None) -> None:
    """Run the reindex schedule alone, or a reindex worker (until Ctrl-C or SIGTERM)."""
    if concurrency is not None and not worker:
        raise click.UsageError("--concurrency goes with --worker")
    if worker:
        from bot.commands import worker_command

        _run(lambda: worker_command(_settings(), concurrency=concurrency or 1))
        return
    from bot.commands import jobs_command

    settings = _server_logging(_settings())
    _run(lambda: jobs_command(settings))


def _server_logging(settings: Any) -> Any:
    """Long-running commands log at info, as JSON lines unless KB_LOG_FORMAT=text."""
    from bot.logs import configure_logging

    verbose = bool(click.get_current_context().find_root().params.get("verbose"))
    configure_logging(
        log_format=settings.log_format or "json",
        level=logging.DEBUG if verbose else logging.INFO,
    )
    return settings


@main.command(name="export")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
def export_(file: Path) -> None:
    """Write escalations, experts' answers, feedback and their runs to FILE (JSON Lines).

    Documents, chunks and vectors are not in it: `kb index` rebuilds them from sources.
    """
    from bot.commands import export_command

    records = _run(lambda: export_command(_settings(), file))
    click.echo(f"exported {records} records to {file}")


@main.command(name="import")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False, exists=True))
def import_(file: Path) -> None:
    """Restore a `kb export` FILE; importing it again adds nothing."""
    from bot.commands import import_command

    report = _run(lambda: import_command(_settings(), file))
    added = ", ".join(f"{n} {kind}" for kind, n in report.added.items())
    present = sum(report.present.values())
    click.echo(f"imported {added}; {present} already present")


@main.command()
@click.option("--days", default=30, show_default=True, type=click.IntRange(min=1))
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def stats(days: int, as_json: bool) -> None:
    """Questions per day, answered vs escalated, feedback, and the knowledge gaps."""
    from bot.commands import stats_command

    _run(lambda: stats_command(_settings(), days=days, as_json=as_json))


@main.command()
def status() -> None:
    """Where the data lives and what is indexed."""
    from bot.commands import status_command

    _run(lambda: status_command(_settings()))


def _settings() -> Any:
    """The settings; a bad environment variable is one line and exit status 2."""
    from bot.errors import SettingsError
    from bot.settings import load_settings

    try:
        settings = load_settings()
    except SettingsError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(SETTINGS_ERROR)
    if settings.log_format == "json":  # asked for by name: the interactive commands too
        from bot.logs import configure_logging

        configure_logging(log_format="json", level=logging.getLogger().level)
    return settings


# --- kb eval (retrieval evaluation; the work is in bot/eval_command.py) ---
@main.group(name="eval")
def eval_group() -> None:
    """Measure retrieval and answer quality on public benchmarks."""


@eval_group.command("answers")
@click.argument("answers_path", metavar="ANSWERS", type=click.Path(path_type=Path, exists=True))
@click.option(
    "--documents",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    help="A folder of documents to index as `kb index` does; gold = paths relative to it.",
)
@click.option("--json", "json_path", type=click.Path(path_type=Path), help="Write metrics here.")
@click.option(
    "--details",
    "details_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write one JSON line per question here (to diff two runs question by question).",
)
@click.option("--limit", type=click.IntRange(min=1), help="Answer only N questions.")
@click.option("--seed", type=int, help="Shuffle the questions with this seed first.")
@click.option("--max-words", default=400, show_default=True, help="Chunk size for a corpus.jsonl.")
def answers(
    answers_path: Path,
    documents: Path | None,
    json_path: Path | None,
    details_path: Path | None,
    limit: int | None,
    seed: int | None,
    max_words: int,
) -> None:
    """Run an answer set through the agent loop and score the answers.

    ANSWERS is answers.jsonl (or the folder holding it), one {"id", "question",
    "answerable", "answers": [phrases], "gold": [documents]} per line. The corpus is
    the corpus.jsonl beside it (BEIR layout, gold = its _ids), or with --documents a
    folder of your own documents (Markdown, HTML, PDF, ... as `kb index` reads them),
    gold = file paths relative to that folder, e.g.

      kb eval answers my-questions.jsonl --documents ./handbook/pages
    """
    from bot.eval_answers import AnswerEvalRequest, eval_answers_command

    request = AnswerEvalRequest(
        answers_path, json_path, limit, seed, max_words, documents, details_path
    )
    _run(lambda: eval_answers_command(_settings(), request))


@eval_group.command("retrieval")
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--split", required=True, help="Which qrels/<split>.tsv to score, e.g. test.")
@click.option("--json", "json_path", type=click.Path(path_type=Path), help="Write numbers here.")
@click.option("--limit", type=click.IntRange(min=1), help="Score only the first N queries.")
@click.option(
    "--max-words",
    type=click.IntRange(min=10, max=10_000),
    default=400,
    show_default=True,
    help="Chunk size for the corpus, in words.",
)
@click.option("--cross-encoder", help="Rerank with this cross-encoder (local path or cache).")
@click.option(
    "--keyword-scale",
    type=click.Choice(["candidates", "matches"]),
    default="candidates",
    show_default=True,
    help="z-score BM25 over its candidates or over every matching chunk before fusing.",
)
@click.option(
    "--pair-weight",
    type=click.FloatRange(min=0, max=100),
    default=0.3,
    show_default=True,
    help="Fusion weight of the BM25 list over adjacent word pairs; 0 leaves it out.",
)
def retrieval(
    directory: Path,
    split: str,
    json_path: Path | None,
    limit: int | None,
    max_words: int,
    cross_encoder: str | None,
    keyword_scale: Literal["candidates", "matches"],
    pair_weight: float,
) -> None:
    """Score BM25, vector, hybrid and hybrid+rerank on a BEIR-layout DIRECTORY."""
    from bot.eval_command import EvalRequest, eval_retrieval_command

    request = EvalRequest(
        directory, split, json_path, limit, max_words, cross_encoder, keyword_scale, pair_weight
    )
    _run(lambda: eval_retrieval_command(_settings(), request))
