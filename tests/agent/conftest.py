"""The agent tests' corpora and loop: five real handbook pages indexed once per session, and
a small made-up corpus per module that asks for it."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest

from agent.answer import Answer
from agent.grounding import GroundingVerifier, quote_occurs
from agent.language.questions import QuestionAnalyzer
from agent.loop import AgentLoop, LoopOptions
from agent.reasoners.base import Reasoner
from agent.reasoners.evidence import EvidenceScorer
from agent.reasoners.extractive import ExtractiveOptions, ExtractiveReasoner
from agent.retrieval.hybrid import HybridRetriever
from agent.retrieval.keyword import KeywordRetriever
from agent.retrieval.reading import Reader
from agent.retrieval.rerank import TitleLinkReranker
from agent.sentence_vectors import SentenceVectors
from agent.sentences import SentenceSplitter
from agent.state import AgentState, Evidence, Goal, PlannedQuestion
from jobs.directory import DirectorySource
from jobs.documents import Source, SourceDocument, StaticSource
from jobs.indexing import Indexer, IndexOptions
from store.corpus import CorpusReader
from store.database import open_pool
from store.documents import DocumentRepository
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from store.keyword_search import KeywordSearch
from store.runs import RunRepository
from store.sentence_vectors import SentenceVectorRepository
from store.text_analysis import TextAnalyzer
from store.vector_search import VectorSearch
from tests.agent.test_hops import MemoryVectors
from tests.conftest import with_database

HANDBOOK_MINI = Path(__file__).resolve().parents[1] / "fixtures" / "handbook-mini"
SITE = "https://handbook.tts.gsa.gov/"


def handbook_mini() -> DirectorySource:
    return DirectorySource(
        name="handbook",
        root=HANDBOOK_MINI,
        include=["travel-and-leave/*.md", "tools/*.md"],
        url_style="eleventy",
        base_url=SITE,
    )


async def indexed_database(
    server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder, source: Source, collection: str
) -> tuple[str, str]:
    """A new database on the session's server with `source` indexed; (dsn, name)."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(server.dsn)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    dsn = with_database(server.dsn, name)
    pool = await open_pool(dsn, max_size=2)
    try:
        indexer = Indexer(repository=DocumentRepository(pool), embedder=embedder)
        await indexer.run(source, options=IndexOptions(collection=collection))
    finally:
        await pool.close()
    return dsn, name


async def drop(server: EmbeddedPostgres, name: str) -> None:
    admin = await asyncpg.connect(server.dsn)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


class Built:
    """A pool with its keyword index, and a factory of loops over it."""

    def __init__(self, pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder) -> None:
        self.pool = pool
        self.embedder = embedder
        self.corpus = CorpusReader(pool)
        self.keyword = KeywordSearch(self.corpus)
        self.analyzer = QuestionAnalyzer(self.keyword.analyzer)
        self.runs = RunRepository(pool)

    def extractive(self, options: ExtractiveOptions | None = None) -> ExtractiveReasoner:
        vectors = SentenceVectors(embedder=self.embedder, store=SentenceVectorRepository(self.pool))
        scorer = EvidenceScorer(
            analyzer=self.analyzer,
            splitter=SentenceSplitter(),
            vectors=vectors,
            corpus_terms=self.keyword,
        )
        return ExtractiveReasoner(analyzer=self.analyzer, scorer=scorer, options=options)

    def retriever(self) -> HybridRetriever:
        """The product's hybrid search over this corpus, re-ranked by titles."""
        return HybridRetriever(
            embedder=self.embedder,
            vector_search=VectorSearch(self.pool),
            keyword_search=self.keyword,
            corpus=self.corpus,
            reranker=TitleLinkReranker(titles=self.keyword, analyzer=self.keyword.analyzer),
        )

    def loop(
        self,
        *,
        reasoner: Reasoner | None = None,
        fallback: Reasoner | None = None,
        options: LoopOptions | None = None,
    ) -> AgentLoop:
        extractive = self.extractive()
        return AgentLoop(
            retriever=self.retriever(),
            reader=Reader(self.corpus),
            reasoner=reasoner or extractive,
            fallback=fallback or extractive,
            verifier=GroundingVerifier(self.corpus),
            stems=lambda text: frozenset(self.analyzer.stems(text)),
            runs=self.runs,
            options=options,
            corroboration=KeywordRetriever(self.keyword),
        )


async def built(dsn: str, embedder: SentenceTransformerEmbedder) -> AsyncIterator[Built]:
    pool = await open_pool(dsn, max_size=4)
    result = Built(pool, embedder)
    try:
        await result.keyword.refresh()
        yield result
    finally:
        await result.keyword.close()
        await pool.close()


async def built_from(
    server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder, source: Source, collection: str
) -> AsyncIterator[Built]:
    """`source` indexed into a new database, served as a `Built`, and the database dropped after:
    the body of every module fixture that wants its own small corpus."""
    dsn, name = await indexed_database(server, embedder, source, collection)
    try:
        async for result in built(dsn, embedder):
            yield result
    finally:
        await drop(server, name)


def pages_source(name: str, pages: Sequence[tuple[str, str, str]]) -> StaticSource:
    """Small Markdown pages, each (file name, title, text), as a folder's would be indexed:
    the title as the page's heading, a link per page."""
    return StaticSource(
        name,
        [
            SourceDocument(
                uri=uri, title=title, url=f"https://kb.test/{uri}", text=f"# {title}\n\n{text}"
            )
            for uri, title, text in pages
        ],
    )


async def lead(built: Built, question: str) -> str | None:
    """The span the reply leads with ("" if none), or None when it escalates."""
    answer = await built.loop().answer(question)
    if answer.escalate:
        return None
    return next((c.span for c in answer.claims if c.span), "")


@pytest.fixture(scope="session")
async def handbook(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    """Five handbook pages, indexed once for the session's agent tests."""
    async for result in built_from(pg_server, embedder, handbook_mini(), "handbook"):
        yield result


async def all_quotes_stored(pool: asyncpg.Pool, answer: Answer) -> bool:
    """Whether every claim's quote occurs in its chunk's text as stored."""
    for claim in answer.claims:
        text = await pool.fetchval("SELECT text FROM chunks WHERE id = $1", claim.chunk_id)
        if text is None or not quote_occurs(claim.quote, text):
            return False
    return True


# --- a made-up corpus: sources that disagree, a page naming another, a bridge -----------

DOCUMENTS = [
    SourceDocument(
        uri="remote-2023.md",
        title="Remote work policy (2023)",
        url="https://kb.test/remote-2023",
        text="# Remote work policy (2023)\n\n"
        "Employees may work remotely up to 2 days per week with their supervisor's approval.",
        updated_at=datetime(2023, 3, 1, tzinfo=UTC),
    ),
    SourceDocument(
        uri="remote-2025.md",
        title="Remote work policy (2025)",
        url="https://kb.test/remote-2025",
        text="# Remote work policy (2025)\n\n"
        "Employees may work remotely up to 3 days per week with their supervisor's approval.",
        updated_at=datetime(2025, 6, 1, tzinfo=UTC),
    ),
    SourceDocument(
        uri="aurora.md",
        title="Project Aurora",
        url="https://kb.test/aurora",
        text="# Project Aurora\n\nProject Aurora is the expense dashboard everyone uses. "
        "Project Aurora is maintained by the Ledger Guild.",
    ),
    SourceDocument(
        uri="ledger-guild.md",
        title="Ledger Guild",
        url="https://kb.test/ledger-guild",
        text="# Ledger Guild\n\nThe Ledger Guild meets every Thursday at 3pm in room 12.",
    ),
    SourceDocument(
        uri="night-shift.md",
        title="Night Shift rota",
        url="https://kb.test/night-shift",
        text="# Night Shift rota\n\nThe night shift rota is drawn up each quarter by "
        "Mirela Voss, who chairs the scheduling panel.",
    ),
    SourceDocument(
        uri="mirela-voss.md",
        title="Mirela Voss",
        url="https://kb.test/mirela-voss",
        text="# Mirela Voss\n\nMirela Voss joined the company in 2016 as a nurse. "
        "She now holds the post of Director of Clinical Operations.",
    ),
]


async def made_up_corpus(
    server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    """DOCUMENTS indexed (as the source "notes", collection "notes") in a new database."""
    async for result in built_from(server, embedder, StaticSource("notes", DOCUMENTS), "notes"):
        yield result


@pytest.fixture(scope="module")
async def made_up(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    async for result in made_up_corpus(pg_server, embedder):
        yield result


@pytest.fixture
async def made_up_to_change(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    """The made-up corpus in a database of the test's own, for a test that writes to it."""
    async for result in made_up_corpus(pg_server, embedder):
        yield result


# The question analyzer and an evidence scorer over in-memory sentence vectors, for the
# tests of how questions are read and quotes scored.
@pytest.fixture(scope="module")
def analyzer() -> QuestionAnalyzer:
    return QuestionAnalyzer(TextAnalyzer())


@pytest.fixture
def scorer(embedder: SentenceTransformerEmbedder, analyzer: QuestionAnalyzer) -> EvidenceScorer:
    return EvidenceScorer(
        analyzer=analyzer,
        splitter=SentenceSplitter(),
        vectors=SentenceVectors(embedder=embedder, store=MemoryVectors()),
    )


async def statements_sent(pool: asyncpg.Pool) -> list[str]:
    """Every statement any connection of `pool` sends from now on (all of them opened)."""
    sent: list[str] = []
    size = pool.get_max_size()
    connections = [await pool.acquire() for _ in range(size)]
    for conn in connections:
        conn.add_query_logger(lambda record: sent.append(record.query))
    for conn in connections:
        await pool.release(conn)
    sent.clear()
    return sent


def shown(answer: Answer) -> list[tuple[str, str]]:
    """Each claim's answer span and quote: what an assertion on a reply prints when it fails."""
    return [(c.span, c.quote) for c in answer.claims]


class KnownWords:
    """A knowledge base's words as the keyword index tells them (the scorer's
    `CorpusTerms`): a word no page has weighs `unheard`, the rarest of all."""

    def __init__(self, words: set[str], unheard: float = 4.0) -> None:
        self._words = words
        self._unheard = unheard

    def rarity(self, terms: Iterable[str]) -> dict[str, float]:
        return {t: 1.0 if t in self._words else self._unheard for t in terms}

    def known(self, terms: Iterable[str]) -> set[str]:
        return set(terms) & self._words


def partial_quote(quote: str, covered: set[str], *, document: int = 1) -> Evidence:
    """A quote as the scorer judged it: partial support, these key terms covered."""
    return Evidence(
        sub_question=0,
        claim=quote,
        quote=quote,
        chunk_id=document,
        document_id=document,
        title="Handbook",
        url=None,
        uri=f"{document}.md",
        source="test",
        collection="default",
        section="",
        updated_at=None,
        score=1.0,
        support="partial",
        covered=frozenset(covered),
    )


async def judged_answered(asked: str, evidence: list[Evidence], words: KnownWords) -> bool:
    """Whether the extractive judge finds `asked` answered by `evidence` together, in a
    knowledge base of `words` (nothing is embedded to judge)."""
    analyzer = QuestionAnalyzer(TextAnalyzer())
    scorer = EvidenceScorer(
        analyzer=analyzer,
        splitter=SentenceSplitter(),
        vectors=None,  # type: ignore[arg-type]  # judging embeds nothing
        corpus_terms=words,
    )
    reasoner = ExtractiveReasoner(analyzer=analyzer, scorer=scorer)
    state = AgentState(Goal(asked, asked), max_steps=3, sub_questions=[PlannedQuestion(asked)])
    state.evidence = evidence
    return (await reasoner.judge(state, [0])).answered == {0}
