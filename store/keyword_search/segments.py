"""Postings of one segment: a fixed set of chunks, by term, with raw term frequencies.

A segment never changes once built. It stores what BM25 needs of each chunk that does
not depend on the rest of the corpus (tf and chunk length), so a change elsewhere
re-weights nothing here: idf and the average length are applied when a query is scored
(store/keyword_search/live.py). Compact on purpose: int32 chunk positions, uint16 term
frequencies (uint32 in the rare segment that needs them), no per-chunk term lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from store.keyword_search.terms import grouped


@dataclass(frozen=True, slots=True)
class Postings:
    """Term `terms[i]` occurs in chunks `docs[start[i]:start[i + 1]]` (segment positions,
    ascending) `tf[...]` times each; `lengths` is each chunk's number of terms."""

    terms: np.ndarray  # int32 term ids, sorted, distinct
    start: np.ndarray  # int32 or int64, one more than `terms`
    docs: np.ndarray  # int32
    tf: np.ndarray  # uint16 or uint32
    lengths: np.ndarray  # int32, one per chunk of the segment

    @classmethod
    def build(cls, terms: np.ndarray, owner: np.ndarray, size: int) -> Postings:
        """From term occurrences: the term id of each, and the chunk (0…size-1) it is in."""
        term, doc, tf = grouped(terms, owner, size)
        counts = tf.astype(np.int64)
        first = np.flatnonzero(np.r_[True, term[1:] != term[:-1]]) if len(term) else term
        start = np.r_[first, len(term)]
        lengths = np.bincount(doc, weights=counts, minlength=size).astype(np.int32)
        return cls(
            term[first].astype(np.int32),
            start.astype(_offset_type(len(term))),
            doc.astype(np.int32),
            counts.astype(_count_type(counts)),
            lengths,
        )

    @property
    def size(self) -> int:
        return len(self.lengths)

    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.terms, self.start, self.docs, self.tf, self.lengths))

    def document_frequencies(self) -> tuple[np.ndarray, np.ndarray]:
        """(term ids, in how many of this segment's chunks each occurs)."""
        return self.terms, np.diff(self.start)

    def lookup(self, terms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each of `terms`: (whether the segment has it, its index in `terms`)."""
        at = np.searchsorted(self.terms, terms).clip(max=max(len(self.terms) - 1, 0))
        found = (self.terms[at] == terms) if len(self.terms) else np.zeros(len(terms), bool)
        return found, at

    def terms_of(self, chunks: np.ndarray) -> np.ndarray:
        """The term id of every posting of these chunks (segment positions), repeats kept
        once per chunk: what their removal takes off each term's document frequency. One
        pass over the segment's postings, instead of keeping a term list per chunk."""
        if not len(chunks) or not len(self.docs):
            return np.zeros(0, np.int32)
        wanted = np.zeros(self.size, dtype=bool)
        wanted[chunks] = True
        hits = np.flatnonzero(wanted[self.docs])
        return self.terms[np.searchsorted(self.start, hits, side="right") - 1]

    @classmethod
    def merge(cls, parts: Sequence[tuple[Postings, np.ndarray]]) -> Postings:
        """One segment of the kept chunks of several, given as (postings, keep mask), in
        order: the kept chunks of the first, then of the second, and so on."""
        terms, docs, tf, lengths, offset = [], [], [], [], 0
        for postings, keep in parts:
            renumbered = np.cumsum(keep) - 1 + offset
            of = np.repeat(postings.terms, np.diff(postings.start).astype(np.int64))
            kept = keep[postings.docs]
            terms.append(of[kept])
            docs.append(renumbered[postings.docs[kept]])
            tf.append(postings.tf[kept].astype(np.int64))
            lengths.append(postings.lengths[keep])
            offset += int(keep.sum())
        return cls._from_postings(
            np.concatenate(terms), np.concatenate(docs), np.concatenate(tf), lengths
        )

    @classmethod
    def _from_postings(
        cls, terms: np.ndarray, docs: np.ndarray, tf: np.ndarray, lengths: list[np.ndarray]
    ) -> Postings:
        order = np.lexsort((docs, terms))
        term, doc, counts = terms[order], docs[order], tf[order]
        first = np.flatnonzero(np.r_[True, term[1:] != term[:-1]]) if len(term) else term
        return cls(
            term[first].astype(np.int32),
            np.r_[first, len(term)].astype(_offset_type(len(term))),
            doc.astype(np.int32),
            counts.astype(_count_type(counts)),
            np.concatenate(lengths).astype(np.int32) if lengths else np.zeros(0, np.int32),
        )


def _offset_type(n: int) -> type:
    return np.int32 if n < np.iinfo(np.int32).max else np.int64


def _count_type(counts: np.ndarray) -> type:
    fits = not len(counts) or int(counts.max()) <= np.iinfo(np.uint16).max
    return np.uint16 if fits else np.uint32
