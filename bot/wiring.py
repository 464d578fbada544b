"""Builds the running objects from settings: database (embedded or not), embedder, services."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg

from agent.grounding import GroundingVerifier
from agent.language.questions import QuestionAnalyzer
from agent.loop import AgentLoop, LoopOptions
from agent.reasoners.base import Reasoner
from agent.reasoners.evidence import EvidenceScorer
from agent.reasoners.extractive import ExtractiveReasoner
from agent.retrieval.dense import Retriever
from agent.retrieval.hybrid import EF_SEARCH, HybridRetriever
from agent.retrieval.reading import Reader
from agent.retrieval.rerank import (
    ChainedReranker,
    CrossEncoderReranker,
    Reranker,
    TitleLinkReranker,
)
from agent.sentence_vectors import SentenceVectors
from agent.sentences import SentenceSplitter
from bot.settings import Settings
from jobs.indexing import Indexer
from jobs.queue_consumer import BatchOutcome, ConsumerOptions
from jobs.queued_writes import Distribution
from jobs.reindex import ReindexJob
from jobs.worker import IndexWorker, WorkerOptions, WorkerTotals
from store.corpus import CorpusReader
from store.database import describe_dsn, open_pool
from store.documents import DocumentRepository
from store.embedded import EmbeddedPostgres, start_embedded_postgres
from store.embedding import PACKAGED_MODEL_NAME, Embedder, SentenceTransformerEmbedder
from store.embedding_space import EmbeddingSpace, mismatch
from store.errors import EmbeddingModelUnavailable
from store.filters import ChunkFilter
from store.index_queue import IndexQueue
from store.index_runs import IndexRunRepository
from store.index_workers import WorkerRegistry
from store.keyword_search import KeywordSearch
from store.pgvector_version import PgvectorVersion, pgvector_version
from store.runs import RunRepository
from store.sentence_vectors import SentenceVectorRepository
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
    # One in-memory BM25 index per process, rebuilt when the corpus version moves.
    keyword_search: KeywordSearch
    pgvector: PgvectorVersion
    # Embedders loaded to answer with the index's model when another one is configured.
    extra_embedders: list[SentenceTransformerEmbedder] = field(default_factory=list)
    # The agent loop, built once per process and query model (runtime.answerer()).
    _answerers: dict[str, AgentLoop] = field(default_factory=dict)

    async def query_embedder(self) -> Embedder:
        """The model that embeds questions: the index's active model, whatever is configured.

        While the index holds another model's vectors (a model change not yet re-embedded),
        questions are answered with that model if this process can load it; otherwise
        EmbeddingModelMismatch says what to run. Nothing is ever deleted here.
        """
        configured = await self.embedder.load()
        active = await EmbeddingSpace(self.pool).active()
        if active is None or active == configured:
            return self.embedder
        other = SentenceTransformerEmbedder(
            model=None if active.name == PACKAGED_MODEL_NAME else active.name,
            torch_threads=self.settings.torch_threads,
        )
        self.extra_embedders.append(other)
        try:
            loaded = await other.load()
        except EmbeddingModelUnavailable:
            raise mismatch(active, configured) from None
        if loaded != active:
            raise mismatch(active, configured)
        log.warning(
            "answering with the index's model %s until `kb index` re-embeds with %s",
            active.name,
            configured.name,
        )
        return other

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
            distribution=Distribution(
                queue=IndexQueue(self.pool),
                workers=WorkerRegistry(self.pool),
                options=self._consumer_options(),
            ),
        )

    def index_worker(
        self,
        *,
        concurrency: int,
        on_batch: Callable[[BatchOutcome, WorkerTotals], None] | None = None,
    ) -> IndexWorker:
        """A `kb jobs --worker` process's worker: embeds queued documents of active runs."""
        return IndexWorker(
            queue=IndexQueue(self.pool),
            registry=WorkerRegistry(self.pool),
            documents=self.documents,
            embedder=self.embedder,
            consumer_options=self._consumer_options(),
            options=WorkerOptions(concurrency=concurrency),
            on_batch=on_batch,
        )

    def _consumer_options(self) -> ConsumerOptions:
        return ConsumerOptions(
            lease_seconds=self.settings.worker_lease_seconds,
            batch_chunks=self.settings.index_batch_size,
        )

    def hybrid_retriever(
        self,
        *,
        sources: Sequence[str] | None = None,
        cross_encoder: str | None = None,
        embedder: Embedder | None = None,
    ) -> HybridRetriever:
        """BM25 + vector, fused, re-ranked by title links (then a cross-encoder if given)."""
        cross_encoder = cross_encoder or self.settings.reranker_model
        reranker: Reranker = TitleLinkReranker(titles=self.keyword_search)
        if cross_encoder:
            reranker = ChainedReranker([reranker, CrossEncoderReranker(model=cross_encoder)])
        return HybridRetriever(
            embedder=embedder or self.embedder,
            vector_search=self.vector_search,
            keyword_search=self.keyword_search,
            corpus=CorpusReader(self.pool),
            reranker=reranker,
            search_filter=ChunkFilter(sources=tuple(sources) if sources else None),
        )

    def answerer(self, embedder: Embedder | None = None) -> AgentLoop:
        """The answer path the CLI and the bot call, built once per process and query
        model: the agent loop with the Claude reasoner when ANTHROPIC_API_KEY is set, else
        the extractive one (which is also Claude's fallback). Every run is stored in
        agent_runs. Pass `await query_embedder()` so questions match the stored vectors."""
        embedder = embedder or self.embedder
        key = embedder.identity.name
        if key not in self._answerers:
            self._answerers[key] = build_agent_loop(
                self.settings,
                pool=self.pool,
                embedder=embedder,
                keyword_search=self.keyword_search,
                retriever=self.hybrid_retriever(embedder=embedder),
            )
        return self._answerers[key]

    async def warm(self) -> None:
        """Load the model and build the BM25 index now, not on the first question."""
        await self.embedder.load()
        await self.keyword_search.refresh()
        await self.answerer(await self.query_embedder()).warm()


def build_agent_loop(
    settings: Settings,
    *,
    pool: asyncpg.Pool,
    embedder: Embedder,
    keyword_search: KeywordSearch,
    retriever: Retriever,
) -> AgentLoop:
    """The agent loop over this pool: Claude when a key is set, the extractive reasoner
    otherwise and as Claude's fallback; runs stored in the pool's agent_runs."""
    analyzer = QuestionAnalyzer(keyword_search.analyzer)
    vectors = SentenceVectors(embedder=embedder, store=SentenceVectorRepository(pool))
    scorer = EvidenceScorer(analyzer=analyzer, splitter=SentenceSplitter(), vectors=vectors)
    extractive = ExtractiveReasoner(analyzer=analyzer, scorer=scorer)
    reasoner: Reasoner = extractive
    if settings.anthropic_api_key is not None:
        from bot.claude import claude_reasoner

        reasoner = claude_reasoner(settings)
    corpus = CorpusReader(pool)
    return AgentLoop(
        retriever=retriever,
        reader=Reader(corpus),
        reasoner=reasoner,
        fallback=extractive,
        verifier=GroundingVerifier(corpus),
        stems=lambda text: frozenset(analyzer.stems(text)),
        runs=RunRepository(pool),
        options=LoopOptions(max_steps=settings.agent_max_steps),
    )


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
    extra: list[SentenceTransformerEmbedder] = []
    try:
        pool = await open_pool(dsn)
        keyword_search = KeywordSearch(CorpusReader(pool))
        try:
            async with pool.acquire() as conn:
                version = await pgvector_version(conn)
            yield Runtime(
                settings=settings,
                pool=pool,
                database=where,
                embedder=embedder,
                documents=DocumentRepository(pool),
                vector_search=VectorSearch(
                    pool, ef_search=EF_SEARCH, iterative_scan=version.iterative_scan
                ),
                keyword_search=keyword_search,
                pgvector=version,
                extra_embedders=extra,
            )
        finally:
            await keyword_search.close()
            await pool.close()
    finally:
        for model in (embedder, *extra):
            model.close()
        if embedded is not None:
            embedded.stop()
