"""Terms as integer ids: the vocabulary, and chunks as term-id sequences in reading order.

Both BM25 indexes (single terms and word pairs) are built from these sequences, so a
chunk's text is analysed once. A chunk is one int32 array of its term ids; BREAK marks
where a run (title, heading, text, an identifier) ends, so no word pair spans two runs.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

BREAK = -1  # in a term sequence: between runs that no word pair spans


class Vocabulary:
    """Term → id, growing as new terms are seen (ids are never reused)."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def held_bytes(self) -> int:
        """Bytes of the term → id map: the dict, its strings and its ints."""
        entries = sum(sys.getsizeof(t) + sys.getsizeof(i) for t, i in self._ids.items())
        return sys.getsizeof(self._ids) + entries

    def encode(self, terms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(term ids, counts) of a document, one entry per distinct term."""
        counts = Counter(terms)
        ids = np.fromiter(
            (self._ids.setdefault(t, len(self._ids)) for t in counts),
            dtype=np.int32,
            count=len(counts),
        )
        return ids, np.fromiter(counts.values(), dtype=np.float32, count=len(counts))

    def ids(self, terms: Sequence[str]) -> np.ndarray:
        """The id of each term, in order (new terms get new ids)."""
        ids = self._ids
        return np.fromiter(
            (ids.setdefault(t, len(ids)) for t in terms), dtype=np.int64, count=len(terms)
        )

    def known_ids(self, terms: Sequence[str]) -> np.ndarray:
        """The id of each term, in order; -1 for a term never seen."""
        return np.fromiter((self._ids.get(t, -1) for t in terms), dtype=np.int64, count=len(terms))

    def lookup(self, terms: Sequence[str]) -> dict[int, int]:
        """Known term id → how often the query repeats it; unknown terms score nothing."""
        found: dict[int, int] = {}
        for term in terms:
            term_id = self._ids.get(term)
            if term_id is not None:
                found[term_id] = found.get(term_id, 0) + 1
        return found


@dataclass(frozen=True, slots=True)
class TermSequences:
    """Documents' term ids in reading order, flat: `terms[i]` belongs to document
    `owner[i]`. BREAK separates runs (title, heading, text, each identifier) so that no
    word pair spans two of them."""

    terms: np.ndarray  # int32
    owner: np.ndarray  # int32
    size: int

    @classmethod
    def of(cls, sequences: Sequence[np.ndarray]) -> TermSequences:
        lengths = np.fromiter((len(s) for s in sequences), np.int64, count=len(sequences))
        owner = np.repeat(np.arange(len(sequences), dtype=np.int32), lengths)
        return cls(concat(sequences, np.int32), owner, len(sequences))


def grouped(
    major: np.ndarray, minor: np.ndarray, minor_size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (major, minor) pairs, sorted by major then minor, and how often each
    occurs: one sort of packed int64 keys, or a two-key sort when they would overflow."""
    major, minor = major.astype(np.int64), minor.astype(np.int64)
    if not len(major):
        return major, minor, np.zeros(0, np.float32)
    if int(major.max()) < np.iinfo(np.int64).max // max(minor_size, 1) - 1:
        keys, counts = np.unique(major * minor_size + minor, return_counts=True)
        return keys // minor_size, keys % minor_size, counts.astype(np.float32)
    order = np.lexsort((minor, major))
    major, minor = major[order], minor[order]
    first = np.flatnonzero(np.r_[True, (major[1:] != major[:-1]) | (minor[1:] != minor[:-1])])
    counts = np.diff(np.r_[first, len(major)]).astype(np.float32)
    return major[first], minor[first], counts


def concat(parts: Sequence[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)
