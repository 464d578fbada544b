"""Sentences embedded ahead of the questions: every quotable unit once, then none again.

Without the warm-up, the first question to read a page embeds its sentences; after it,
a question over the same pages embeds only what it asks (the check fails if the warm-up
embeds other texts than the scorer's units, or skips some).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from agent.reasoners.evidence import EvidenceScorer, quotable_units
from agent.reasoners.extractive import ExtractiveReasoner
from agent.sentence_vectors import SentenceVectors
from agent.sentence_warmup import warm_sentences
from agent.sentences import SentenceSplitter
from store.sentence_vectors import SentenceVectorRepository, text_hash
from tests.agent.conftest import DOCUMENTS, Built


def vectors_of(made_up: Built) -> SentenceVectors:
    return SentenceVectors(embedder=made_up.embedder, store=SentenceVectorRepository(made_up.pool))


async def test_every_quotable_unit_is_embedded_once_and_questions_then_embed_none(
    made_up: Built,
) -> None:
    store = SentenceVectorRepository(made_up.pool)
    model = made_up.embedder.identity.name
    before = await store.count(model=model)
    first = await warm_sentences(
        corpus=made_up.corpus, vectors=vectors_of(made_up), splitter=SentenceSplitter()
    )
    assert first.chunks >= len(DOCUMENTS) and first.units > first.chunks
    assert await store.count(model=model) == before + first.embedded
    again = await warm_sentences(
        corpus=made_up.corpus, vectors=vectors_of(made_up), splitter=SentenceSplitter()
    )
    assert (again.units, again.embedded) == (first.units, 0)

    recording = RecordingStore(SentenceVectorRepository(made_up.pool))
    vectors = SentenceVectors(embedder=made_up.embedder, store=recording)
    scorer = EvidenceScorer(analyzer=made_up.analyzer, splitter=SentenceSplitter(), vectors=vectors)
    reasoner = ExtractiveReasoner(analyzer=made_up.analyzer, scorer=scorer)
    answer = await made_up.loop(reasoner=reasoner, fallback=reasoner).answer(
        "What post is held by the person who draws up the night shift rota each quarter?"
    )
    assert answer.claims
    # What the question made the model embed is what it asked (the question, the page
    # titles it searched with), never a unit of a stored chunk: those were embedded ahead.
    units = set()
    async with made_up.corpus.full_read() as read:
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
