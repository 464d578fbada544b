"""Builds the running objects from settings: database (embedded or not), embedder, services."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from agent.one_shot import OneShotAnswerer
from agent.retrieval import DenseRetriever
from bot.settings import Settings
from jobs.indexing import Indexer
from jobs.reindex import ReindexJob
from store.database import describe_dsn, open_pool
from store.documents import DocumentRepository
from store.embedded import EmbeddedPostgres, start_embedded_postgres
from store.embedding import SentenceTransformerEmbedder
from store.index_runs import IndexRunRepository
from store.vector_search import VectorSearch

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Runtime:
    settings: Settings
    pool: asyncpg.Pool
    database: str
    embedder: SentenceTransformerEmbedder
    documents: DocumentRepository
    vector_search: VectorSearch

    def indexer(self) -> Indexer:
        return Indexer(
            repository=self.documents,
            embedder=self.embedder,
            embed_batch_size=self.settings.index_batch_size,
        )

    def reindex_job(self, *, base_dir: Path) -> ReindexJob:
        return ReindexJob(
            pool=self.pool,
            indexer=self.indexer(),
            documents=self.documents,
            runs=IndexRunRepository(self.pool),
            base_dir=base_dir,
        )

    def answerer(self) -> OneShotAnswerer:
        retriever = DenseRetriever(embedder=self.embedder, search=self.vector_search)
        return OneShotAnswerer(retriever=retriever, embedder=self.embedder)


@asynccontextmanager
async def open_runtime(settings: Settings) -> AsyncIterator[Runtime]:
    """Start or connect to the database and hand out the wired services; clean up after."""
    embedded: EmbeddedPostgres | None = None
    if settings.database_url is not None:
        dsn = settings.database_url.get_secret_value()
        where = describe_dsn(dsn)
    else:
        settings.kb_home.mkdir(parents=True, exist_ok=True)
        embedded = await start_embedded_postgres(settings.embedded_data_dir)
        dsn, where = embedded.dsn, f"embedded Postgres in {settings.embedded_data_dir}"
    embedder = SentenceTransformerEmbedder(
        model=settings.embedding_model, torch_threads=settings.torch_threads
    )
    try:
        pool = await open_pool(dsn)
        try:
            yield Runtime(
                settings=settings,
                pool=pool,
                database=where,
                embedder=embedder,
                documents=DocumentRepository(pool),
                vector_search=VectorSearch(pool),
            )
        finally:
            await pool.close()
    finally:
        embedder.close()
        if embedded is not None:
            embedded.stop()
