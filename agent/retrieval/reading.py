"""Reading around hits: each hit grows into its neighbouring chunks, within a token budget.

A passage is always an exact cut of the stored document text (`text[start:end]`), so a
quote taken from it can be verified against the document. Passages of the same document
that overlap or touch are merged, so no text is ever read twice; the section heading
path travels with each passage as a label, not as part of its text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from store.corpus import ChunkSpan, CorpusReader
from store.vector_search import ChunkHit

_WORD = re.compile(r"\S+")


def count_words(text: str) -> int:
    return len(_WORD.findall(text))


@dataclass(frozen=True, slots=True)
class ReadOptions:
    # Most tokens one hit may grow to (its own chunk is always kept whole).
    passage_tokens: int = 400
    # Most tokens in all passages together; the best hit's passage is always kept.
    total_tokens: int = 2400
    # How many chunks either side of a hit may be added.
    neighbours: int = 2


@dataclass(frozen=True, slots=True)
class Passage:
    document_id: int
    title: str
    url: str | None
    uri: str
    source: str
    collection: str
    heading_path: tuple[str, ...]
    char_start: int
    char_end: int
    text: str
    chunk_ids: tuple[int, ...]  # the hits this passage covers, best first
    score: float  # the best of its hits' scores
    # Every chunk the passage spans (hits and neighbours), in document order: a quote
    # cut from the passage is cited to the chunk that holds it.
    spans: tuple[ChunkSpan, ...] = ()
    # When the document last changed (the best hit's), if known.
    updated_at: datetime | None = None

    @property
    def heading(self) -> str:
        return " > ".join(self.heading_path)


@dataclass(slots=True)
class _Span:
    hit: ChunkHit
    start: int
    end: int
    hits: list[ChunkHit]
    # The document changed since the search: the hit's own text is all we can show.
    stale: bool = False
    chunks: dict[int, ChunkSpan] = field(default_factory=dict)


class Reader:
    def __init__(
        self,
        corpus: CorpusReader,
        *,
        options: ReadOptions | None = None,
        count_tokens: Callable[[str], int] = count_words,
    ) -> None:
        self._corpus = corpus
        self._options = options or ReadOptions()
        self._count = count_tokens

    async def read(self, hits: Sequence[ChunkHit]) -> list[Passage]:
        """Passages for `hits` (best first), merged per document, within the budgets."""
        if not hits:
            return []
        n = self._options.neighbours
        windows = {(h.document_id, max(h.ordinal - n, 0), h.ordinal + n) for h in hits}
        read = await self._corpus.windows(sorted(windows))
        grown = [self._grow(hit, read.spans.get(hit.document_id, []), read.texts) for hit in hits]
        return self._within_budget(_merge(grown), read.texts)

    def _grow(self, hit: ChunkHit, spans: list[ChunkSpan], texts: dict[int, str]) -> _Span:
        """The hit's span, widened chunk by chunk (next, then previous) while it fits."""
        text = texts.get(hit.document_id)
        by_ordinal = {s.ordinal: s for s in spans}
        own = by_ordinal.get(hit.ordinal)
        if text is None or own is None or own.chunk_id != hit.chunk_id:
            # The document was reindexed since the search: read the hit as it was found.
            return _Span(hit, hit.char_start, hit.char_end, [hit], True, {hit.chunk_id: _own(hit)})
        start, end, low, high = own.char_start, own.char_end, hit.ordinal, hit.ordinal
        grew = True
        while grew:
            grew = False
            for ordinal in (high + 1, low - 1):
                neighbour = by_ordinal.get(ordinal)
                if neighbour is None:
                    continue
                wider = min(start, neighbour.char_start), max(end, neighbour.char_end)
                if self._count(text[wider[0] : wider[1]]) <= self._options.passage_tokens:
                    start, end = wider
                    low, high = min(low, ordinal), max(high, ordinal)
                    grew = True
        chunks = {
            by_ordinal[o].chunk_id: by_ordinal[o] for o in range(low, high + 1) if o in by_ordinal
        }
        return _Span(hit, start, end, [hit], chunks=chunks)

    def _within_budget(self, spans: list[_Span], texts: dict[int, str]) -> list[Passage]:
        passages: list[Passage] = []
        used = 0
        for span in spans:
            passage = _passage(span, texts)
            tokens = self._count(passage.text)
            if passages and used + tokens > self._options.total_tokens:
                continue
            passages.append(passage)
            used += tokens
        return passages


def _merge(spans: list[_Span]) -> list[_Span]:
    """Overlapping or touching spans of one document become one, ranked by its best hit."""
    merged: list[_Span] = []
    for span in spans:  # best hit first
        for other in merged:
            same_document = other.hit.document_id == span.hit.document_id
            mergeable = same_document and not (span.stale or other.stale)
            if mergeable and span.start <= other.end and other.start <= span.end:
                other.start, other.end = min(other.start, span.start), max(other.end, span.end)
                other.hits.append(span.hit)
                other.chunks.update(span.chunks)
                break
        else:
            merged.append(span)
    return _merge(merged) if len(merged) < len(spans) else merged


def _passage(span: _Span, texts: dict[int, str]) -> Passage:
    hit = span.hit
    text = texts.get(hit.document_id)
    cut = hit.text if span.stale or text is None else text[span.start : span.end]
    return Passage(
        document_id=hit.document_id,
        title=hit.title,
        url=hit.url,
        uri=hit.uri,
        source=hit.source,
        collection=hit.collection,
        heading_path=hit.heading_path,
        char_start=span.start,
        char_end=span.end,
        text=cut,
        chunk_ids=tuple(dict.fromkeys(h.chunk_id for h in span.hits)),
        score=max(h.score for h in span.hits),
        spans=tuple(sorted(span.chunks.values(), key=lambda c: c.char_start)),
        updated_at=hit.updated_at,
    )


def _own(hit: ChunkHit) -> ChunkSpan:
    return ChunkSpan(
        hit.chunk_id, hit.document_id, hit.ordinal, hit.char_start, hit.char_end, hit.heading_path
    )
