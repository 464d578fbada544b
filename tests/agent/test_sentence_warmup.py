"""Sentences embedded ahead of the questions: every quotable unit once, then none again.

Without the warm-up, the first question to read a page embeds its sentences; after it,
a question over the same pages embeds only what it asks (the check fails if the warm-up
embeds other texts than the scorer's units, or skips some).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence

import numpy as np
import pytest

from agent.reasoners.evidence import EvidenceScorer, quotable_units
from agent.reasoners.extractive import ExtractiveReasoner
from agent.sentence_vectors import SentenceVectors
from agent.sentence_warmup import warm_sentences
from agent.sentences import SentenceSplitter
from jobs.documents import StaticSource
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from store.sentence_vectors import SentenceVectorRepository, text_hash
from tests.agent.conftest import Built, built, drop, indexed_database
from tests.agent.test_loop_scenarios import DOCUMENTS


@pytest.fixture(scope="module")
async def notes(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    dsn, name = await indexed_database(
        pg_server, embedder, StaticSource("notes", DOCUMENTS), "notes"
    )
    try:
        async for result in built(dsn, embedder):
            yield result
    finally:
        await drop(pg_server, name)


def vectors_of(notes: Built) -> SentenceVectors:
    return SentenceVectors(embedder=notes.embedder, store=SentenceVectorRepository(notes.pool))


async def test_every_quotable_unit_is_embedded_once_and_questions_then_embed_none(
    notes: Built,
) -> None:
    store = SentenceVectorRepository(notes.pool)
    model = notes.embedder.identity.name
    before = await store.count(model=model)
    first = await warm_sentences(
        corpus=notes.corpus, vectors=vectors_of(notes), splitter=SentenceSplitter()
    )
    assert first.chunks >= len(DOCUMENTS) and first.units > first.chunks
    assert await store.count(model=model) == before + first.embedded
    again = await warm_sentences(
        corpus=notes.corpus, vectors=vectors_of(notes), splitter=SentenceSplitter()
    )
    assert (again.units, again.embedded) == (first.units, 0)

    recording = RecordingStore(SentenceVectorRepository(notes.pool))
    vectors = SentenceVectors(embedder=notes.embedder, store=recording)
    scorer = EvidenceScorer(analyzer=notes.analyzer, splitter=SentenceSplitter(), vectors=vectors)
    reasoner = ExtractiveReasoner(analyzer=notes.analyzer, scorer=scorer)
    answer = await notes.loop(reasoner=reasoner, fallback=reasoner).answer(
        "What post is held by the person who draws up the night shift rota each quarter?"
    )
    assert answer.claims
    # What the question made the model embed is what it asked (the question, the page
    # titles it searched with), never a unit of a stored chunk: those were embedded ahead.
    units = set()
    async with notes.corpus.full_read() as read:
        async for batch in read.batches(100):
            units |= {
                text_hash(u.text) for c in batch for u in quotable_units(SentenceSplitter(), c.text)
            }
    assert recording.put_hashes and not recording.put_hashes & units


class RecordingStore:
    """The sentence_vectors table, remembering which hashes were written through it."""

    def __init__(self, inner: SentenceVectorRepository) -> None:
        self._inner = inner
        self.put_hashes: set[str] = set()

    async def get(self, *, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        return await self._inner.get(model=model, hashes=hashes)

    async def put(self, *, model: str, vectors: Mapping[str, np.ndarray]) -> None:
        self.put_hashes |= set(vectors)
        await self._inner.put(model=model, vectors=vectors)


def test_quotable_units_quote_a_list_with_its_lead_in_and_a_pronoun_with_its_antecedent() -> None:
    text = (
        "To request leave:\n\n- open Workday\n- pick the dates\n\n"
        "Mirela Voss drafts the rota. She posts it on Fridays."
    )
    units = [u.text for u in quotable_units(SentenceSplitter(), text)]
    assert not any(u == "To request leave:" for u in units)  # only with its items
    assert any(u.startswith("To request leave:") and "pick the dates" in u for u in units)
    assert "Mirela Voss drafts the rota. She posts it on Fridays." in units
