"""Builds the running objects from settings: database (embedded or not), embedder, services."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
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
from jobs.reindex import ReindexJob
from store.corpus import CorpusReader
from store.database import describe_dsn, open_pool
from store.documents import DocumentRepository
from store.embedded import EmbeddedPostgres, start_embedded_postgres
from store.embedding import SentenceTransformerEmbedder
from store.filters import ChunkFilter
from store.index_runs import IndexRunRepository
from store.keyword_search import KeywordSearch
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
    # The agent loop, built once per process (runtime.answerer()).
    _answerer: AgentLoop | None = field(default=None)

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

    def hybrid_retriever(
        self, *, sources: Sequence[str] | None = None, cross_encoder: str | None = None
    ) -> HybridRetriever:
        """BM25 + vector, fused, re-ranked by title links (then a cross-encoder if given)."""
        cross_encoder = cross_encoder or self.settings.reranker_model
        reranker: Reranker = TitleLinkReranker(titles=self.keyword_search)
        if cross_encoder:
            reranker = ChainedReranker([reranker, CrossEncoderReranker(model=cross_encoder)])
        return HybridRetriever(
            embedder=self.embedder,
            vector_search=self.vector_search,
            keyword_search=self.keyword_search,
            corpus=CorpusReader(self.pool),
            reranker=reranker,
            search_filter=ChunkFilter(sources=tuple(sources) if sources else None),
        )

    def answerer(self) -> AgentLoop:
        """The answer path the CLI and the bot call, built once per process: the agent
        loop with the Claude reasoner when ANTHROPIC_API_KEY is set, else the extractive
        one (which is also Claude's fallback). Every run is stored in agent_runs."""
        if self._answerer is None:
            self._answerer = build_agent_loop(
                self.settings,
                pool=self.pool,
                embedder=self.embedder,
                keyword_search=self.keyword_search,
                retriever=self.hybrid_retriever(),
            )
        return self._answerer

    async def warm(self) -> None:
        """Load the model and build the BM25 index now, not on the first question."""
        await self.embedder.load()
        await self.keyword_search.refresh()
        await self.answerer().warm()


def build_agent_loop(
    settings: Settings,
    *,
    pool: asyncpg.Pool,
    embedder: SentenceTransformerEmbedder,
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
    try:
        pool = await open_pool(dsn)
        keyword_search = KeywordSearch(CorpusReader(pool))
        try:
            yield Runtime(
                settings=settings,
                pool=pool,
                database=where,
                embedder=embedder,
                documents=DocumentRepository(pool),
                vector_search=VectorSearch(pool, ef_search=EF_SEARCH),
                keyword_search=keyword_search,
            )
        finally:
            await keyword_search.close()
            await pool.close()
    finally:
        embedder.close()
        if embedded is not None:
            embedded.stop()
