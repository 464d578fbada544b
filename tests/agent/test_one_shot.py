"""The one-shot answerer over a small real corpus, real store and the packaged model."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import asyncpg
import pytest

from agent.answer import Answer
from agent.grounding import quote_occurs
from agent.one_shot import OneShotAnswerer
from agent.retrieval.dense import DenseRetriever
from jobs.directory import DirectorySource
from jobs.indexing import Indexer
from store.documents import DocumentRepository
from store.embedding import SentenceTransformerEmbedder
from store.filters import ChunkFilter
from store.runs import RunRepository
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
    by_number = {s.number: s for s in answer.citations}
    for claim in answer.claims:
        chunk = await pool.fetchrow(
            "SELECT c.text, d.title FROM chunks c JOIN documents d ON d.id = c.document_id"
            " WHERE c.id = $1",
            claim.chunk_id,
        )
        assert quote_occurs(claim.quote, chunk["text"])
        assert chunk["title"] == by_number[claim.citation].title
    assert by_number[answer.claims[0].citation].url == "https://kb.test/travel"
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
    assert answer.citations[0].title == "Equipment"
    assert any("ticket" in c.quote for c in answer.claims)


async def test_a_scope_without_the_relevant_source_escalates_and_cites_nothing(
    answerer: OneShotAnswerer,
) -> None:
    answer = await answerer.answer(
        "How do I get reimbursed after a trip?", scope=ChunkFilter(collections=["elsewhere"])
    )
    assert answer.claims == () and answer.citations == ()
    assert answer.escalate is True


async def test_every_run_is_stored_with_its_answer(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder
) -> None:
    source = DirectorySource(name="fixture", root=FIXTURE_KB, url_style="none")
    await Indexer(repository=DocumentRepository(pool), embedder=embedder).run(source)
    runs = RunRepository(pool)
    answerer = OneShotAnswerer(
        retriever=DenseRetriever(embedder=embedder, search=VectorSearch(pool)),
        embedder=embedder,
        runs=runs,
    )
    answer = await answerer.answer("What should I do if my laptop breaks?", origin={"user": "U1"})
    assert answer.run_id is not None
    stored = await runs.get(answer.run_id)
    assert stored is not None and stored.status == "finished"
    assert stored.origin == {"user": "U1"}
    assert stored.answer is not None
    assert Answer.from_dict(stored.answer) == dataclasses.replace(answer, run_id=None)
