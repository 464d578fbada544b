"""Sentence vectors made ahead of the questions, so no question waits for the model.

Scoring a quote needs its unit's vector (agent/reasoners/evidence.py); the first
question to read a sentence used to embed it, which made a question's first reading of
a page several times slower than the next one. `warm_sentences` reads stored chunks in
batches and embeds the quotable units (`quotable_units`) that have no vector from this
model in the `sentence_vectors` table yet; units already there cost one lookup. The
first warm-up reads every chunk; given the `WarmupState` of an earlier one, it reads only
the chunks of the documents that changed since (the corpus change log, as the keyword
index catches up: store/corpus.py), and everything again only when too many did or the
model is another. `kb serve` runs it in the background after start-up and after each
reindex that changed documents.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from agent.reasoners.evidence import quotable_units
from agent.sentence_vectors import SentenceVectors
from agent.sentences import SentenceSplitter
from store.corpus import CorpusPoint, CorpusReader, IndexedChunk


@dataclass(frozen=True, slots=True)
class WarmupReport:
    read: Literal["full", "incremental"]  # every chunk, or the changed documents' only
    documents: int  # documents whose chunks were read
    chunks: int  # chunks read
    units: int  # quotable units found in them
    embedded: int  # units that had no stored vector and were embedded now


@dataclass(frozen=True, slots=True)
class WarmedPoint:
    """Where a finished warm-up stood: every unit visible at `snapshot` has a vector
    from `model`."""

    model: str
    snapshot: str  # a pg_snapshot's text (CorpusPoint.snapshot)


@dataclass(slots=True)
class WarmupState:
    """What the next warm-up starts from; one per process, owned by its Runtime."""

    # More changed documents than this since the last warm-up: read everything again.
    max_changed_documents: int = 2_000
    last: WarmedPoint | None = None
    # One warm-up at a time: one after a reindex waits for the start-up one, then reads
    # only what changed since, instead of a second full read beside it.
    lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)


async def warm_sentences(
    *,
    corpus: CorpusReader,
    vectors: SentenceVectors,
    splitter: SentenceSplitter,
    state: WarmupState | None = None,
    batch_chunks: int = 200,
    progress: Callable[[int], None] | None = None,
) -> WarmupReport:
    """Embed the quotable units of the stored chunks that have none stored yet: of every
    chunk, or (given the state of an earlier warm-up) of the documents changed since."""
    tally = _Tally(vectors, splitter, batch_chunks, progress)
    if state is None:
        await _full_read(corpus, tally)
        return tally.report("full")
    async with state.lock:
        changes = None
        if state.last is not None and state.last.model == vectors.model:
            changes = await corpus.changes_since(
                state.last.snapshot, max_documents=state.max_changed_documents
            )
        if changes is None:
            point = await _full_read(corpus, tally)
        else:
            await tally.add(changes.chunks)
            point = changes.point
        # Not recorded if the warm-up failed: the next one starts from the last that didn't.
        state.last = WarmedPoint(vectors.model, point.snapshot)
        return tally.report("full" if changes is None else "incremental")


async def _full_read(corpus: CorpusReader, tally: _Tally) -> CorpusPoint:
    """Every chunk; the point is the snapshot the read saw, taken before the first row, so
    a change committed during the read is among the next warm-up's changes."""
    async with corpus.full_read() as read:
        async for batch in read.batches(tally.batch_chunks):
            await tally.add(batch)
        return read.point


class _Tally:
    """Embeds the units of chunks, batch by batch, counting what it read."""

    def __init__(
        self,
        vectors: SentenceVectors,
        splitter: SentenceSplitter,
        batch_chunks: int,
        progress: Callable[[int], None] | None,
    ) -> None:
        self._vectors = vectors
        self._splitter = splitter
        self.batch_chunks = batch_chunks
        self._progress = progress
        self._embedded_before = vectors.embedded
        self._documents: set[int] = set()
        self._chunks = self._units = 0

    async def add(self, chunks: Sequence[IndexedChunk]) -> None:
        for start in range(0, len(chunks), self.batch_chunks):
            batch = chunks[start : start + self.batch_chunks]
            texts = list(
                dict.fromkeys(u.text for c in batch for u in quotable_units(self._splitter, c.text))
            )
            if texts:
                await self._vectors.vectors(texts)
            self._documents.update(c.document_id for c in batch)
            self._chunks += len(batch)
            self._units += len(texts)
            if self._progress is not None:
                self._progress(len(batch))

    def report(self, read: Literal["full", "incremental"]) -> WarmupReport:
        return WarmupReport(
            read=read,
            documents=len(self._documents),
            chunks=self._chunks,
            units=self._units,
            embedded=self._vectors.embedded - self._embedded_before,
        )
