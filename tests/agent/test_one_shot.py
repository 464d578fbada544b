"""The one-shot answerer over a small real corpus, real store and the packaged model."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from agent.grounding import quote_occurs
from agent.one_shot import OneShotAnswerer
from agent.retrieval import DenseRetriever
from jobs.directory import DirectorySource
from jobs.indexing import Indexer
from store.documents import DocumentRepository
from store.embedding import SentenceTransformerEmbedder
from store.vector_search import VectorSearch

FIXTURE_KB = Path(__file__).resolve().parents[1] / "fixtures" / "kb"


@pytest.fixture
async def answerer(pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder) -> OneShotAnswerer:
    source = DirectorySource(
        name="fixture", root=FIXTURE_KB, url_style="template", url_template="https://kb.test/{stem}"
    )
    await Indexer(repository=DocumentRepository(pool), embedder=embedder).run(source)
    retriever = DenseRetriever(embedder=embedder, search=VectorSearch(pool))
    return OneShotAnswerer(retriever=retriever, embedder=embedder)


async def test_every_quote_in_an_answer_occurs_in_its_cited_chunk(
    answerer: OneShotAnswerer, pool: asyncpg.Pool
) -> None:
    answer = await answerer.answer("How do I get reimbursed after a trip?")
    assert answer.covered and answer.claims
    by_number = {s.number: s for s in answer.sources}
    for claim in answer.claims:
        chunk = await pool.fetchrow(
            "SELECT c.text, d.title FROM chunks c JOIN documents d ON d.id = c.document_id"
            " WHERE c.id = $1",
            claim.chunk_id,
        )
        assert quote_occurs(claim.quote, chunk["text"])
        assert chunk["title"] == by_number[claim.source].title
    assert by_number[answer.claims[0].source].url == "https://kb.test/travel"
    assert any("voucher" in c.quote for c in answer.claims)


async def test_an_off_topic_question_gets_the_not_covered_answer(answerer: OneShotAnswerer) -> None:
    answer = await answerer.answer("What is the boiling point of liquid nitrogen?")
    assert answer.covered is False
    assert answer.claims == ()
    assert answer.stop_reason == "insufficient_grounding"
    assert answer.gaps


async def test_the_answer_cites_the_page_that_holds_it(answerer: OneShotAnswerer) -> None:
    answer = await answerer.answer("What should I do if my laptop breaks?")
    assert answer.covered
    assert answer.sources[0].title == "Equipment"
    assert any("ticket" in c.quote for c in answer.claims)
