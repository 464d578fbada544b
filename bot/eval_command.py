"""`kb eval retrieval DIR --split NAME`: score BM25, vector, hybrid and hybrid + rerank.

The dataset is indexed with the ordinary indexer into a database of its own on the same
Postgres server (`kb_eval_<dataset>_w<max words>`), so it never mixes with the team's
knowledge base, BM25's statistics are the dataset's alone, and a second run re-embeds
nothing. Progress goes to stderr; the table to stdout; `--json PATH` writes the numbers.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import click
import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agent.eval.retrieval import BeirDataset, DatasetError, EvalReport, evaluate, markdown_table
from agent.retrieval.hybrid import EF_SEARCH, HybridOptions, HybridRetriever
from agent.retrieval.rerank import (
    ChainedReranker,
    CrossEncoderReranker,
    Reranker,
    RerankerUnavailable,
    TitleLinkReranker,
)
from bot.settings import Settings
from jobs.chunking import ChunkingPolicy
from jobs.documents import SourceDocument, SourceItem
from jobs.indexing import Indexer, IndexOptions, IndexReport
from store.corpus import CorpusReader
from store.database import connect, describe_dsn, open_pool
from store.documents import DocumentRepository
from store.embedded import start_embedded_postgres
from store.embedding import SentenceTransformerEmbedder
from store.errors import DatabaseUnavailable
from store.keyword_search import KeywordSearch
from store.vector_search import VectorSearch

console = Console(stderr=True)


@dataclass(frozen=True, slots=True)
class EvalRequest:
    directory: Path
    split: str
    json_path: Path | None = None
    limit: int | None = None
    max_words: int = 400
    cross_encoder: str | None = None
    # How the fused BM25 list is z-scored: see agent.retrieval.hybrid.HybridOptions.keyword_scale.
    keyword_scale: Literal["candidates", "matches"] = "candidates"
    # Weight of the word-pair BM25 list in the fusion (0 leaves it out).
    pair_weight: float = HybridOptions().pair_weight


class BeirSource:
    """A BEIR corpus as an indexer source: one SourceDocument per line (uri = `_id`)."""

    def __init__(self, *, name: str, corpus: Path) -> None:
        self.name = name
        self._corpus = corpus

    async def documents(self) -> AsyncIterator[SourceItem]:
        text = await asyncio.to_thread(self._corpus.read_text, encoding="utf-8")
        for line in text.splitlines():
            if line.strip():
                doc = json.loads(line)
                yield SourceDocument(
                    uri=str(doc["_id"]), title=doc.get("title") or "", url=None, text=doc["text"]
                )


async def eval_retrieval_command(
    settings: Settings,
    request: EvalRequest,
    *,
    embedder: SentenceTransformerEmbedder | None = None,
) -> EvalReport:
    """Index the dataset (incrementally), run its queries, print and optionally save scores."""
    try:
        dataset = BeirDataset.load(request.directory, split=request.split, limit=request.limit)
    except (DatasetError, OSError) as exc:
        raise click.ClickException(str(exc)) from exc
    model = embedder or SentenceTransformerEmbedder(
        model=settings.embedding_model,
        torch_threads=settings.torch_threads,
        query_graph_dir=settings.query_graph_dir,
    )
    try:
        async with eval_database(settings, _database_name(dataset.name, request)) as pool:
            report = await _run(pool, model, dataset, request)
    finally:
        if embedder is None:
            model.close()
    click.echo(_markdown(report, request))
    if request.json_path:
        request.json_path.write_text(json.dumps(report.as_json(), indent=2) + "\n")
        console.print(f"[dim]wrote {request.json_path}[/]")
    return report


async def _run(
    pool: asyncpg.Pool,
    embedder: SentenceTransformerEmbedder,
    dataset: BeirDataset,
    request: EvalRequest,
) -> EvalReport:
    console.print("[dim]loading the embedding model…[/]")
    await embedder.load()
    indexed = await _index(pool, embedder, dataset, request)
    console.print(
        f"[dim]corpus: {indexed.documents_added} added, {indexed.documents_unchanged} unchanged; "
        f"{indexed.chunks_embedded} chunks embedded, {indexed.chunks_reused} reused[/]"
    )
    corpus = CorpusReader(pool)
    keyword = KeywordSearch(corpus)
    reranker = await _reranker(keyword, request.cross_encoder)
    try:
        await keyword.refresh()
        retriever = HybridRetriever(
            embedder=embedder,
            vector_search=VectorSearch(pool, ef_search=EF_SEARCH),
            keyword_search=keyword,
            corpus=corpus,
            reranker=reranker,
            options=HybridOptions(
                keyword_scale=request.keyword_scale, pair_weight=request.pair_weight
            ),
        )
        chunk_uris = await corpus.chunk_uris()
        with progress_bar("queries") as advance:
            return await evaluate(
                dataset=dataset, retriever=retriever, chunk_uris=chunk_uris, progress=advance
            )
    finally:
        await keyword.close()


async def _index(
    pool: asyncpg.Pool,
    embedder: SentenceTransformerEmbedder,
    dataset: BeirDataset,
    request: EvalRequest,
) -> IndexReport:
    return await index_corpus(
        pool,
        embedder,
        name=dataset.name,
        corpus=dataset.root / "corpus.jsonl",
        max_words=request.max_words,
    )


async def index_corpus(
    pool: asyncpg.Pool,
    embedder: SentenceTransformerEmbedder,
    *,
    name: str,
    corpus: Path,
    max_words: int,
) -> IndexReport:
    """Index a BEIR corpus.jsonl with the ordinary indexer (incrementally)."""
    policy = ChunkingPolicy(
        min_words=max_words * 3 // 8, max_words=max_words, overlap_words=max_words // 10
    )
    indexer = Indexer(repository=DocumentRepository(pool), embedder=embedder, policy=policy)
    source = BeirSource(name=name, corpus=corpus)
    with progress_bar(f"indexing {name}") as advance:
        return await indexer.run(
            source, options=IndexOptions(kind="beir", collection=f"eval-{name}"), progress=advance
        )


async def _reranker(keyword: KeywordSearch, cross_encoder: str | None) -> Reranker:
    links = TitleLinkReranker(titles=keyword, analyzer=keyword.analyzer)
    if cross_encoder is None:
        return links
    model = CrossEncoderReranker(model=cross_encoder)
    try:
        await model.load()
    except RerankerUnavailable as exc:
        raise click.ClickException(str(exc)) from exc
    return ChainedReranker([links, model])


@asynccontextmanager
async def eval_database(settings: Settings, name: str) -> AsyncIterator[asyncpg.Pool]:
    """A pool on database `name` of the configured (or embedded) server, created if needed."""
    embedded = None
    if settings.database_url is not None:
        server_dsn = settings.database_url.get_secret_value()
    else:
        settings.kb_home.mkdir(parents=True, exist_ok=True)
        embedded = await start_embedded_postgres(settings.embedded_data_dir)
        server_dsn = embedded.dsn
    try:
        dsn = await _ensure_database(server_dsn, name)
        pool = await open_pool(dsn)
        try:
            yield pool
        finally:
            await pool.close()
    finally:
        if embedded is not None:
            embedded.stop()


async def _ensure_database(server_dsn: str, name: str) -> str:
    conn = await connect(server_dsn)
    try:
        if not await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name):
            await conn.execute(f'CREATE DATABASE "{name}"')
    except asyncpg.PostgresError as exc:
        raise DatabaseUnavailable(
            f"cannot create the evaluation database {name!r} on {describe_dsn(server_dsn)} "
            f"({exc}); grant CREATEDB to the user or create the database yourself"
        ) from exc
    finally:
        await conn.close()
    return urlunsplit(urlsplit(server_dsn)._replace(path=f"/{name}"))


def _database_name(dataset: str, request: EvalRequest) -> str:
    return eval_database_name(dataset, max_words=request.max_words)


def eval_database_name(dataset: str, *, max_words: int) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", dataset.lower()).strip("_")[:40] or "dataset"
    return f"kb_eval_{slug}_w{max_words}"


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[int, int], None]]:
    with Progress(
        TextColumn(f"[bold]{label}[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task(label, total=None)
        yield lambda done, total: progress.update(task, completed=done, total=total)


def _markdown(report: EvalReport, request: EvalRequest) -> str:
    stages = ", ".join(
        f"{stage} p50 {np.percentile(ms, 50):.1f} ms / p95 {np.percentile(ms, 95):.1f} ms"
        for stage, ms in report.stage_ms.items()
    )
    return (
        f"### {report.dataset} ({report.split}, {report.queries} queries, "
        f"chunks ≤ {request.max_words} words, BM25 z-scored over its "
        f"{request.keyword_scale}, word pairs weighted {request.pair_weight:g})\n\n"
        f"{markdown_table(report)}\n\n"
        f"Per-query stage latency: {stages}\n"
    )
