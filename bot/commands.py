"""What each `kb` command does, given settings. The CLI module only parses arguments."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from bot.blocks import answer_blocks, answer_text
from bot.settings import Settings
from bot.wiring import Runtime, open_runtime
from jobs.directory import DirectorySource, handbook_source
from jobs.documents import Source
from jobs.indexing import IndexOptions, IndexReport

console = Console(stderr=True)


def source_for(
    settings: Settings, path: Path | None, name: str | None, url_template: str | None
) -> Source:
    if path is None:
        return handbook_source(settings.sample_kb)
    if not path.is_dir():
        raise click.UsageError(f"{path} is not a folder; give a folder of documents to index")
    return DirectorySource(
        name=name or path.resolve().name,
        root=path,
        url_style="template" if url_template else "none",
        url_template=url_template,
    )


async def run_index(runtime: Runtime, source: Source, *, dry_run: bool = False) -> IndexReport:
    """Index one source with a progress bar on stderr."""
    with Progress(
        TextColumn("[bold]indexing[/] {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task(source.name, total=None)

        def advance(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        console.print(f"[dim]loading the embedding model and listing {source.name}…[/]")
        await runtime.embedder.load()
        return await runtime.indexer().run(
            source, options=IndexOptions(dry_run=dry_run), progress=advance
        )


def print_report(report: IndexReport) -> None:
    verb = "would change" if report.dry_run else "indexed"
    console.print(
        f"{verb} [bold]{report.source}[/] in {report.seconds:.1f}s: "
        f"{report.documents_added} added, {report.documents_updated} updated, "
        f"{report.documents_unchanged} unchanged, {report.documents_deleted} deleted, "
        f"{report.documents_failed} failed; chunks {report.chunks_embedded} embedded, "
        f"{report.chunks_reused} reused, {report.chunks_deleted} deleted"
    )
    for failure in report.failures:
        console.print(f"  [yellow]skipped[/] {failure['uri']}: {failure['reason']}")
    for warning in report.warnings:
        console.print(f"  [yellow]warning[/] {warning}")


async def index_command(
    settings: Settings,
    path: Path | None,
    name: str | None,
    url_template: str | None,
    dry_run: bool,
    as_json: bool,
) -> dict[str, Any]:
    source = source_for(settings, path, name, url_template)
    async with open_runtime(settings) as runtime:
        report = await run_index(runtime, source, dry_run=dry_run)
    if not as_json:
        print_report(report)
    return report.as_dict()


async def ask_command(settings: Settings, question: str, *, as_json: bool, blocks: bool) -> None:
    async with open_runtime(settings) as runtime:
        await _ensure_indexed(runtime)
        await runtime.documents.check_model(runtime.embedder.identity)
        answer = await runtime.answerer().answer(question)
    if as_json:
        click.echo(json.dumps(answer.as_dict(), indent=2))
        return
    click.echo(answer_text(answer))
    if blocks:
        click.echo(json.dumps({"blocks": answer_blocks(answer)}, indent=2))


async def demo_command(settings: Settings, questions: Sequence[str], *, interactive: bool) -> None:
    async with open_runtime(settings) as runtime:
        console.print(f"[dim]database: {runtime.database}[/]")
        print_report(await run_index(runtime, handbook_source(settings.sample_kb)))
        answerer = runtime.answerer()
        for question in questions:
            click.echo(f"\n? {question}")
            click.echo(answer_text(await answerer.answer(question)))
        if not interactive:
            return
        click.echo("\nAsk your own question about the handbook (empty line or Ctrl-D to quit).")
        while question := _prompt():
            click.echo(answer_text(await answerer.answer(question)))


def _prompt() -> str:
    try:
        return input("\n? ").strip()
    except EOFError:
        return ""


async def status_command(settings: Settings) -> None:
    from store.embedding_space import stored_model

    async with open_runtime(settings) as runtime:
        counts = await runtime.documents.counts()
        async with runtime.pool.acquire() as conn:
            model = await stored_model(conn)
    click.echo(f"KB_HOME:   {settings.kb_home}")
    click.echo(f"database:  {runtime.database}")
    click.echo(f"model:     {model.name + f' ({model.dimension} dims)' if model else 'none yet'}")
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
