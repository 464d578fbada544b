"""The keyword index as immutable segments, a deletion mask, and counts for the live chunks.

A cold build makes a few large segments (bounded, so one build step's memory is); each
later change of some documents masks their old chunks (their terms' document
frequencies go down) and adds their new chunks as one small segment. Small segments are
merged once there are `SegmentPolicy.fanout` of them, which also drops masked chunks.
Every change returns a new `SegmentedIndex`, so a search holding the previous one is
never disturbed. Word pairs are segments of their own over the same chunks.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from store.keyword_search.bm25 import Bm25Parameters
from store.keyword_search.live import Bm25Statistics, LiveBm25, document_frequencies, mean_idf
from store.keyword_search.segments import Postings


@dataclass(frozen=True, slots=True)
class ChunkColumns:
    """Per chunk, by position: what results and filters need."""

    chunk_ids: np.ndarray  # int64
    document_ids: np.ndarray  # int64
    source_ids: np.ndarray  # int64
    updated_at: np.ndarray  # float64 epoch seconds
    # The document's own collection as `collection_code(name)`; 0: its source's collection.
    collection_codes: np.ndarray  # int64

    @classmethod
    def concat(cls, parts: Sequence[ChunkColumns]) -> ChunkColumns:
        def joined(name: str, dtype: type) -> np.ndarray:
            arrays = [getattr(p, name) for p in parts]
            return np.concatenate(arrays) if arrays else np.zeros(0, dtype)

        return cls(
            joined("chunk_ids", np.int64),
            joined("document_ids", np.int64),
            joined("source_ids", np.int64),
            joined("updated_at", np.float64),
            joined("collection_codes", np.int64),
        )

    def taken(self, keep: np.ndarray) -> ChunkColumns:
        return ChunkColumns(
            self.chunk_ids[keep],
            self.document_ids[keep],
            self.source_ids[keep],
            self.updated_at[keep],
            self.collection_codes[keep],
        )

    def nbytes(self) -> int:
        arrays = (
            self.chunk_ids, self.document_ids, self.source_ids, self.updated_at,
            self.collection_codes,
        )  # fmt: skip
        return sum(a.nbytes for a in arrays)


def collection_code(name: str | None) -> int:
    """A collection name as a number the index can compare in bulk; 0 for None.

    A hash rather than a table of ids: the code of a name never changes, so chunks read
    at different times agree without a shared registry (2^-62 odds of two names meeting).
    """
    if name is None:
        return 0
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest()
    return (int.from_bytes(digest, "big") >> 2) or 1


@dataclass(frozen=True, slots=True)
class Segment:
    """Some chunks: their columns, their single-term postings and (optionally) pairs."""

    columns: ChunkColumns
    words: Postings
    pairs: Postings | None

    @property
    def size(self) -> int:
        return len(self.columns.chunk_ids)


@dataclass(frozen=True, slots=True)
class SegmentPolicy:
    # Segments under this many chunks are small: merged together, `fanout` at a time.
    small: int = 50_000
    fanout: int = 8
    # A segment with this share of its chunks masked is rewritten without them (the
    # memory and the scoring work of masked chunks are otherwise never given back).
    masked: float = 0.5


@dataclass(frozen=True, slots=True)
class SegmentedIndex:
    segments: tuple[Segment, ...]
    alive: np.ndarray  # bool per position: False once a chunk is deleted or replaced
    columns: ChunkColumns  # by position
    words: LiveBm25
    pairs: LiveBm25 | None
    parameters: Bm25Parameters

    @classmethod
    def of(
        cls,
        segments: Sequence[Segment],
        *,
        alive: np.ndarray | None = None,
        vocabulary_sizes: tuple[int, int],
        parameters: Bm25Parameters,
        with_pairs: bool = True,
    ) -> SegmentedIndex:
        """The index over these segments (with pairs: each has pair postings), counts
        computed from scratch."""
        alive = np.ones(sum(s.size for s in segments), bool) if alive is None else alive
        keeps = _split(alive, segments)
        words = [(s.words, k) for s, k in zip(segments, keeps, strict=True)]
        word_df = document_frequencies(words, vocabulary_sizes[0])
        pair_df = None
        if with_pairs:
            pairs = [(s.pairs, k) for s, k in zip(segments, keeps, strict=True)]
            pair_df = document_frequencies(pairs, vocabulary_sizes[1])  # type: ignore[arg-type]
        return cls._assemble(tuple(segments), alive, word_df, pair_df, parameters)

    @property
    def size(self) -> int:
        return len(self.alive)

    @property
    def live(self) -> int:
        return self.words.statistics.chunks

    def nbytes(self) -> int:
        held = self.alive.nbytes + self.columns.nbytes() + self.words.norm.nbytes
        held += self.words.statistics.df.nbytes
        if self.pairs is not None:
            held += self.pairs.norm.nbytes + self.pairs.statistics.df.nbytes
        for s in self.segments:
            held += s.columns.nbytes() + s.words.nbytes() + (s.pairs.nbytes() if s.pairs else 0)
        return held

    def with_changes(
        self,
        *,
        removed_documents: np.ndarray,
        added: Segment | None,
        vocabulary_sizes: tuple[int, int],
    ) -> SegmentedIndex:
        """This index with every live chunk of `removed_documents` masked and `added`
        appended; only the counts those chunks touch move."""
        gone = self.alive & np.isin(self.columns.document_ids, removed_documents)
        word_df = _moved(self.words, gone, added.words if added else None, vocabulary_sizes[0])
        pair_df = None
        if self.pairs is not None:
            new_pairs = added.pairs if added else None
            pair_df = _moved(self.pairs, gone, new_pairs, vocabulary_sizes[1])
        alive = self.alive & ~gone
        segments = self.segments
        if added is not None and added.size:
            segments = (*segments, added)
            alive = np.concatenate([alive, np.ones(added.size, bool)])
        return self._assemble(segments, alive, word_df, pair_df, self.parameters)

    def merge_small(self, policy: SegmentPolicy) -> SegmentedIndex | None:
        """The small segments merged into one once there are `policy.fanout` of them, and
        any mostly masked segment rewritten, masked chunks dropped; None when nothing is
        due yet."""
        keeps = _split(self.alive, self.segments)
        small = [i for i, s in enumerate(self.segments) if s.size < policy.small]
        if len(small) < policy.fanout:
            small = []
        masked = [i for i, k in enumerate(keeps) if len(k) and 1 - k.mean() >= policy.masked]
        small = sorted(set(small) | set(masked))
        if not small:
            return None
        chosen = [(self.segments[i], keeps[i]) for i in small]
        pairs = None
        if self.pairs is not None:
            pairs = Postings.merge([(s.pairs, k) for s, k in chosen])  # type: ignore[misc]
        merged = Segment(
            ChunkColumns.concat([s.columns.taken(k) for s, k in chosen]),
            Postings.merge([(s.words, k) for s, k in chosen]),
            pairs,
        )
        others = [i for i in range(len(self.segments)) if i not in set(small)]
        segments = (*(self.segments[i] for i in others), merged)
        alive = np.concatenate([*(keeps[i] for i in others), np.ones(merged.size, bool)])
        # The masked chunks left with the merge; the live ones, and so the counts, did not.
        word_df = self.words.statistics.df
        pair_df = self.pairs.statistics.df if self.pairs is not None else None
        return self._assemble(segments, alive, word_df, pair_df, self.parameters)

    @classmethod
    def _assemble(
        cls,
        segments: tuple[Segment, ...],
        alive: np.ndarray,
        word_df: np.ndarray,
        pair_df: np.ndarray | None,
        parameters: Bm25Parameters,
    ) -> SegmentedIndex:
        live = int(alive.sum())
        words = _live(alive, [s.words for s in segments], word_df, live, parameters)
        pairs = None
        if pair_df is not None:
            postings = [s.pairs for s in segments]
            pairs = _live(alive, postings, pair_df, live, parameters)  # type: ignore[arg-type]
        columns = ChunkColumns.concat([s.columns for s in segments])
        return cls(segments, alive, columns, words, pairs, parameters)


def _live(
    alive: np.ndarray,
    segments: Sequence[Postings],
    df: np.ndarray,
    live: int,
    parameters: Bm25Parameters,
) -> LiveBm25:
    lengths = np.concatenate([s.lengths for s in segments]) if segments else np.zeros(0)
    total = int(lengths[alive].sum()) if len(lengths) else 0
    statistics = Bm25Statistics(live, total, df, parameters.epsilon * mean_idf(df, live))
    return LiveBm25.over(segments, statistics, parameters)


def _moved(
    index: LiveBm25, gone: np.ndarray, added: Postings | None, vocabulary_size: int
) -> np.ndarray:
    """Document frequencies after masking the `gone` positions and adding `added`."""
    # A copy, however few counts move: a search may be reading the previous one.
    df = np.zeros(max(vocabulary_size, len(index.statistics.df)), np.int32)
    df[: len(index.statistics.df)] = index.statistics.df
    for postings, offset in zip(index.segments, index.offsets, strict=True):
        local = np.flatnonzero(gone[offset : offset + postings.size])
        if len(local):
            np.subtract.at(df, postings.terms_of(local), 1)
    if added is not None:
        terms, counts = added.document_frequencies()
        np.add.at(df, terms, counts.astype(np.int32))
    return df


def _split(alive: np.ndarray, segments: Sequence[Segment]) -> list[np.ndarray]:
    """`alive` cut into one mask per segment."""
    bounds = np.cumsum([s.size for s in segments])[:-1]
    return np.split(alive, bounds) if segments else []
