"""Sentences embedded ahead of the questions: every quotable unit once, then none again.

Without the warm-up, the first question to read a page embeds its sentences; after it,
a question over the same pages embeds only what it asks (the check fails if the warm-up
embeds other texts than the scorer's units, or skips some). After a reindex, the next
warm-up reads only the documents that changed, unless too many did or the model changed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from agent.reasoners.evidence import EvidenceScorer, quotable_units
from agent.reasoners.extractive import ExtractiveReasoner
from agent.sentence_vectors import SentenceVectors
from agent.sentence_warmup import WarmupReport, WarmupState, warm_sentences
from agent.sentences import SentenceSplitter
from jobs.documents import SourceDocument, StaticSource
from jobs.indexing import Indexer, IndexOptions
from store.documents import DocumentRepository
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


# --- after a reindex: only what changed -------------------------------------------------

CHANGED = replace(
    DOCUMENTS[3], text=DOCUMENTS[3].text + " Minutes of each meeting go out the next morning."
)
ADDED = SourceDocument(
    uri="parking.md",
    title="Parking",
    url="https://kb.test/parking",
    text="# Parking\n\nThe car park behind building B opens at 7am. Visitors park on level 2.",
)


async def change_one_and_add_one(made_up: Built) -> None:
    """Reindex the source with CHANGED in place of its old version, and ADDED."""
    documents = [CHANGED if d.uri == CHANGED.uri else d for d in DOCUMENTS] + [ADDED]
    indexer = Indexer(repository=DocumentRepository(made_up.pool), embedder=made_up.embedder)
    await indexer.run(StaticSource("notes", documents), options=IndexOptions(collection="notes"))


async def warm(made_up: Built, state: WarmupState) -> WarmupReport:
    return await warm_sentences(
        corpus=made_up.corpus, vectors=vectors_of(made_up), splitter=SentenceSplitter(), state=state
    )


async def unit_hashes_of(made_up: Built, uris: set[str]) -> set[str]:
    """The hashes of the quotable units of these documents' chunks as stored now."""
    ids = [i for i, uri in (await made_up.corpus.chunk_uris()).items() if uri in uris]
    texts = await made_up.corpus.chunk_texts(ids)
    return {
        text_hash(u.text)
        for t in texts.values()
        for u in quotable_units(SentenceSplitter(), t.text)
    }


async def test_a_warm_up_after_a_reindex_reads_only_the_changed_documents_and_embeds_their_units(
    made_up_to_change: Built,
) -> None:
    made_up, state = made_up_to_change, WarmupState()
    first = await warm(made_up, state)
    assert (first.read, first.documents) == ("full", len(DOCUMENTS))
    await change_one_and_add_one(made_up)
    changed = await unit_hashes_of(made_up, {CHANGED.uri, ADDED.uri})
    store = SentenceVectorRepository(made_up.pool)
    model = made_up.embedder.identity.name
    missing = changed - set(await store.get(model=model, hashes=list(changed)))
    assert missing  # the new sentences: what this warm-up has to embed

    again = await warm(made_up, state)
    chunks = [
        u for u in (await made_up.corpus.chunk_uris()).values() if u in {CHANGED.uri, ADDED.uri}
    ]
    assert (again.read, again.documents, again.chunks) == ("incremental", 2, len(chunks))
    assert again.embedded == len(missing)
    assert set(await store.get(model=model, hashes=list(changed))) == changed


async def test_a_warm_up_reads_everything_again_when_more_documents_changed_than_its_bound(
    made_up_to_change: Built,
) -> None:
    made_up, state = made_up_to_change, WarmupState(max_changed_documents=1)
    await warm(made_up, state)
    await change_one_and_add_one(made_up)  # two documents changed: one too many
    again = await warm(made_up, state)
    assert (again.read, again.documents) == ("full", len(DOCUMENTS) + 1)
    # The full read's point was recorded: nothing changed since, nothing is read.
    third = await warm(made_up, state)
    assert (third.read, third.documents, third.chunks) == ("incremental", 0, 0)


async def test_a_warm_up_with_another_model_than_the_last_one_reads_everything_again(
    made_up_to_change: Built, hashing_embedder: Any
) -> None:
    made_up, state = made_up_to_change, WarmupState()
    other = hashing_embedder("hashing-words", 64)
    store = SentenceVectorRepository(made_up.pool)
    await warm_sentences(
        corpus=made_up.corpus,
        vectors=SentenceVectors(embedder=other, store=store),
        splitter=SentenceSplitter(),
        state=state,
    )
    # Nothing changed in the corpus, but no unit has a vector from the packaged model yet.
    again = await warm(made_up, state)
    assert (again.read, again.documents) == ("full", len(DOCUMENTS)) and again.embedded > 0


async def test_a_change_committed_during_a_full_read_is_read_by_the_next_warm_up(
    made_up_to_change: Built,
) -> None:
    made_up, state = made_up_to_change, WarmupState()
    store = ChangingStore(
        SentenceVectorRepository(made_up.pool), change=lambda: change_one_and_add_one(made_up)
    )
    first = await warm_sentences(
        corpus=made_up.corpus,
        vectors=SentenceVectors(embedder=made_up.embedder, store=store),
        splitter=SentenceSplitter(),
        state=state,
        batch_chunks=1,
    )
    assert store.changed and first.documents == len(DOCUMENTS)  # the read did not see it
    again = await warm(made_up, state)
    assert (again.read, again.documents) == ("incremental", 2)


async def test_a_warm_up_waits_for_the_one_under_way_then_reads_only_what_changed_since(
    made_up_to_change: Built,
) -> None:
    # As in kb serve: a reindex that finishes during the start-up warm-up warms again.
    made_up, state = made_up_to_change, WarmupState()
    first, second = await asyncio.gather(warm(made_up, state), warm(made_up, state))
    assert (first.read, first.documents) == ("full", len(DOCUMENTS))
    assert (second.read, second.documents) == ("incremental", 0)


class ChangingStore:
    """The sentence_vectors table, that runs `change` (once) before the first lookup."""

    def __init__(
        self, inner: SentenceVectorRepository, *, change: Callable[[], Awaitable[None]]
    ) -> None:
        self._inner = inner
        self._change = change
        self.changed = False

    async def get(self, *, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        if not self.changed:
            self.changed = True
            await self._change()
        return await self._inner.get(model=model, hashes=hashes)

    async def put(self, *, model: str, vectors: Mapping[str, np.ndarray]) -> None:
        await self._inner.put(model=model, vectors=vectors)
