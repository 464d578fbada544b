"""The one end-to-end test over the whole bundled handbook: index it, ask, check the answers.

It is the slowest test (it embeds ~1,700 chunks), so it is the only one that uses the
whole handbook; everything else runs on small fixture corpora.
"""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from agent.grounding import quote_occurs
from agent.one_shot import OneShotAnswerer
from agent.retrieval import DenseRetriever
from jobs.directory import handbook_source
from jobs.indexing import Indexer
from store.documents import DocumentRepository
from store.embedding import SentenceTransformerEmbedder
from store.vector_search import VectorSearch

HANDBOOK = Path(__file__).resolve().parents[1] / "kb-data" / "handbook"
SITE = "https://handbook.tts.gsa.gov/"


@pytest.mark.slow
async def test_the_bundled_handbook_answers_with_verified_quotes_and_live_urls(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder
) -> None:
    repository = DocumentRepository(pool)
    report = await Indexer(repository=repository, embedder=embedder).run(handbook_source(HANDBOOK))
    assert (report.documents_added, report.documents_failed) == (199, 0)

    answerer = OneShotAnswerer(
        retriever=DenseRetriever(embedder=embedder, search=VectorSearch(pool)), embedder=embedder
    )
    leave = await answerer.answer("How do I request leave?")
    assert leave.covered and leave.claims
    assert all(s.url and s.url.startswith(SITE) for s in leave.sources)
    assert any("leave" in (s.url or "") or "hrlinks" in (s.url or "") for s in leave.sources)
    assert any("leave" in c.quote.lower() for c in leave.claims)
    for claim in leave.claims:
        chunk = await pool.fetchval("SELECT text FROM chunks WHERE id = $1", claim.chunk_id)
        assert quote_occurs(claim.quote, chunk)

    off_topic = await answerer.answer("What is the airspeed velocity of an unladen swallow?")
    assert off_topic.covered is False and off_topic.claims == ()

    again = await Indexer(repository=repository, embedder=embedder).run(handbook_source(HANDBOOK))
    assert (again.documents_unchanged, again.chunks_embedded) == (199, 0)
