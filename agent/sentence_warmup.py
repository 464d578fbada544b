"""Sentence vectors made ahead of the questions, so no question waits for the model.

Scoring a quote needs its unit's vector (agent/reasoners/evidence.py); the first
question to read a sentence used to embed it, which made a question's first reading of
a page several times slower than the next one. `warm_sentences` reads every stored chunk
once, in batches, and embeds the quotable units (`quotable_units`) that have no vector
from this model in the `sentence_vectors` table yet; units already there cost one
lookup. `kb serve` runs it in the background after start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agent.reasoners.evidence import quotable_units
from agent.sentence_vectors import SentenceVectors
from agent.sentences import SentenceSplitter
from store.corpus import CorpusReader


@dataclass(frozen=True, slots=True)
class WarmupReport:
    chunks: int  # chunks read
    units: int  # quotable units found in them
    embedded: int  # units that had no stored vector and were embedded now


async def warm_sentences(
    *,
    corpus: CorpusReader,
    vectors: SentenceVectors,
    splitter: SentenceSplitter,
    batch_chunks: int = 200,
    progress: Callable[[int], None] | None = None,
) -> WarmupReport:
    """Embed the quotable units of every stored chunk that has none stored yet."""
    chunks = units = 0
    before = vectors.embedded
    async with corpus.full_read() as read:
        async for batch in read.batches(batch_chunks):
            texts = list(
                dict.fromkeys(u.text for c in batch for u in quotable_units(splitter, c.text))
            )
            if texts:
                await vectors.vectors(texts)
            chunks += len(batch)
            units += len(texts)
            if progress is not None:
                progress(len(batch))
    return WarmupReport(chunks=chunks, units=units, embedded=vectors.embedded - before)
