"""`kb eval answers ANSWERS [--documents FOLDER]`: every question of an answer set
through the full agent loop.

The corpus is indexed into a database of its own, with the same settings as the
product (one set of settings for every knowledge base). It is either the BEIR
`corpus.jsonl` beside `answers.jsonl` (the same database as `kb eval retrieval`, so
both commands share one index of a dataset), or, with `--documents`, a folder of the
team's own documents indexed as `kb index FOLDER` indexes it (its converters, chunking,
titles), whose `gold` entries are file paths relative to the folder. Progress goes to
stderr, the Markdown table to stdout, `--json PATH` writes the metrics.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import click

from agent.eval.answers import (
    AnswerCase,
    CaseOutcome,
    answer_metrics,
    case_row,
    load_answer_file,
    load_cases,
    markdown_table,
    run_cases,
)
from agent.eval.retrieval import DatasetError
from agent.retrieval.hybrid import EF_SEARCH, HybridRetriever
from agent.retrieval.rerank import TitleLinkReranker
from bot.eval_command import console, eval_database, eval_database_name, index_corpus, progress_bar
from bot.settings import Settings
from bot.sources import folder_config
from bot.wiring import build_agent_loop
from jobs.config import DirectorySourceConfig
from jobs.directory import DirectorySource
from jobs.indexing import Indexer, IndexOptions, IndexReport
from store.corpus import CorpusReader
from store.documents import DocumentRepository
from store.embedding import SentenceTransformerEmbedder
from store.keyword_search import KeywordSearch
from store.runs import RunRepository
from store.vector_search import VectorSearch


@dataclass(frozen=True, slots=True)
class AnswerEvalRequest:
    directory: Path
    json_path: Path | None = None
    limit: int | None = None
    seed: int | None = None
    max_words: int = 400
    # A folder of documents to index as `kb index` does, instead of a corpus.jsonl.
    documents: Path | None = None
    # One JSON line per question (agent/eval/answers.py case_row) written here.
    details_path: Path | None = None


async def eval_answers_command(
    settings: Settings,
    request: AnswerEvalRequest,
    *,
    embedder: SentenceTransformerEmbedder | None = None,
) -> dict[str, float | int | None]:
    try:
        cases = _cases(request)
    except (DatasetError, OSError) as exc:
        raise click.ClickException(str(exc)) from exc
    folder = request.documents
    name = (folder or request.directory).resolve().name
    if folder is not None and not folder.is_dir():
        raise click.ClickException(f"{folder} is not a folder of documents")
    model = embedder or SentenceTransformerEmbedder(
        model=settings.embedding_model,
        torch_threads=settings.torch_threads,
        query_graph_dir=settings.query_graph_dir,
    )
    # A folder is chunked by the product's own policy, not --max-words: its own database.
    database = (
        eval_database_name(name, max_words=request.max_words)
        if folder is None
        else folder_database_name(folder)
    )
    try:
        async with eval_database(settings, database) as pool:
            console.print("[dim]loading the embedding model…[/]")
            await model.load()
            if folder is None:
                await index_corpus(
                    pool,
                    model,
                    name=name,
                    corpus=request.directory / "corpus.jsonl",
                    max_words=request.max_words,
                )
            else:
                await index_folder(pool, model, name=name, folder=folder)
            corpus = CorpusReader(pool)
            keyword = KeywordSearch(corpus)
            try:
                await keyword.refresh()
                retriever = HybridRetriever(
                    embedder=model,
                    vector_search=VectorSearch(pool, ef_search=EF_SEARCH),
                    keyword_search=keyword,
                    corpus=corpus,
                    reranker=TitleLinkReranker(titles=keyword, analyzer=keyword.analyzer),
                )
                loop = build_agent_loop(
                    settings,
                    pool=pool,
                    embedder=model,
                    keyword_search=keyword,
                    retriever=retriever,
                )
                with progress_bar("questions") as advance:
                    outcomes = await run_cases(
                        cases,
                        answerer=loop,
                        runs=RunRepository(pool),
                        chunks=corpus,
                        progress=advance,
                    )
            finally:
                await keyword.close()
    finally:
        if embedder is None:
            model.close()
    metrics = answer_metrics(outcomes)
    reasoner = "claude" if settings.anthropic_api_key is not None else "extractive"
    click.echo(markdown_table(f"{name} ({len(cases)} questions, {reasoner} reasoner)", metrics))
    _warn_unknown_gold(cases, outcomes)
    if request.json_path:
        request.json_path.write_text(json.dumps(metrics, indent=2) + "\n")
        console.print(f"[dim]wrote {request.json_path}[/]")
    if request.details_path:
        rows = (json.dumps(case_row(o), ensure_ascii=False) for o in outcomes)
        request.details_path.write_text("".join(f"{row}\n" for row in rows))
        console.print(f"[dim]wrote one line per question to {request.details_path}[/]")
    return metrics


def folder_database_name(folder: Path) -> str:
    """The evaluation database of a folder of documents: its name and a digest of its
    path, so two folders both called `pages` never share (and re-index) one database."""
    resolved = folder.resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:8]
    return eval_database_name(f"docs_{resolved.name}_{digest}", max_words=0)


def _cases(request: AnswerEvalRequest) -> list[AnswerCase]:
    given = request.directory
    if request.documents is None:
        root = given if given.is_dir() else given.parent
        return load_cases(root, limit=request.limit, seed=request.seed)
    path = given / "answers.jsonl" if given.is_dir() else given
    return load_answer_file(path, limit=request.limit, seed=request.seed)


async def index_folder(
    pool: asyncpg.Pool, model: SentenceTransformerEmbedder, *, name: str, folder: Path
) -> IndexReport:
    """Index a folder as `kb index FOLDER` does: its source, its indexer, its chunking."""
    config = folder_config(folder, name=name, url_template=None)
    assert isinstance(config, DirectorySourceConfig)
    source = DirectorySource.from_settings(
        name=config.name, settings=config.settings, base_dir=Path.cwd()
    )
    indexer = Indexer(repository=DocumentRepository(pool), embedder=model)
    with progress_bar(f"indexing {name}") as advance:
        return await indexer.run(
            source, options=IndexOptions(collection=f"eval-{name}"), progress=advance
        )


def _warn_unknown_gold(cases: list[AnswerCase], outcomes: list[CaseOutcome]) -> None:
    """One line when no question cites its gold at all: usually gold paths written
    relative to another folder than the one indexed."""
    with_gold = [o for o in outcomes if o.case.gold and o.cited]
    if with_gold and not any(set(o.case.gold) & set(o.cited) for o in with_gold):
        example = with_gold[0]
        console.print(
            f"[yellow]no question cited any of its gold documents; gold is matched against "
            f"document paths such as {example.cited[0]!r} (gold {example.case.gold[0]!r})[/]"
        )
