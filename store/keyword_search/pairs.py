"""The word-pair index: BM25 over adjacent word pairs ("sick leave").

A chunk that has the question's words next to each other, as a phrase, scores there
too. Pairs are int64 keys made of the two words' ids, so the index keeps no string per
pair (a corpus has tens of distinct pairs per chunk). Pairs never span a BREAK.

`PairIndex` is the eager, one-shot form (checked against rank-bm25 over pair tokens);
`PairVocabulary` gives pairs dense ids that stay fixed as the corpus grows, so the
segmented index (store/keyword_search/segmented.py) treats pairs as plain terms.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from store.keyword_search.bm25 import Bm25Index, Bm25Parameters
from store.keyword_search.terms import BREAK, TermSequences, grouped


@dataclass(frozen=True, slots=True)
class PairIndex:
    """BM25 over adjacent word pairs. A pair (a, b) of word ids has the key a × width + b;
    its term id is the key's position in the sorted `keys`."""

    keys: np.ndarray  # int64, sorted, distinct
    width: int  # one more than the largest word id indexed
    index: Bm25Index

    @classmethod
    def build(
        cls, sequences: TermSequences, *, parameters: Bm25Parameters | None = None
    ) -> PairIndex:
        t, owner = sequences.terms.astype(np.int64), sequences.owner
        width = int(t.max()) + 1 if len(t) else 1
        adjacent = (t[:-1] != BREAK) & (t[1:] != BREAK) & (owner[:-1] == owner[1:])
        keys = (t[:-1] * width + t[1:])[adjacent]
        key, document, tf = grouped(keys, owner[:-1][adjacent], sequences.size)
        first = np.r_[True, key[1:] != key[:-1]] if len(key) else np.zeros(0, bool)
        index = Bm25Index.from_sorted_postings(
            np.cumsum(first) - 1,
            document,
            tf,
            size=sequences.size,
            vocabulary_size=int(first.sum()),
            parameters=parameters,
        )
        return cls(key[first], width, index)

    def query(self, word_ids: np.ndarray) -> dict[int, int]:
        """Pair term id → how often the query has that pair, given the query's word ids in
        order (-1 for a word the vocabulary does not know)."""
        ids = word_ids.astype(np.int64)
        known = (ids[:-1] >= 0) & (ids[1:] >= 0) & (ids[:-1] < self.width) & (ids[1:] < self.width)
        keys = (ids[:-1] * self.width + ids[1:])[known]
        if not len(self.keys) or not len(keys):
            return {}
        positions = np.searchsorted(self.keys, keys).clip(max=len(self.keys) - 1)
        found = positions[self.keys[positions] == keys]
        return dict(Counter(found.tolist()))


# Word ids are int32, so (a, b) packs into a << 31 | b without two pairs colliding.
_SHIFT = 31


def pair_occurrences(sequences: TermSequences) -> tuple[np.ndarray, np.ndarray]:
    """(key, document) of every adjacent word pair in the sequences, in order."""
    t, owner = sequences.terms.astype(np.int64), sequences.owner
    adjacent = (t[:-1] != BREAK) & (t[1:] != BREAK) & (owner[:-1] == owner[1:])
    return ((t[:-1] << _SHIFT) | t[1:])[adjacent], owner[:-1][adjacent]


def query_pairs(word_ids: np.ndarray) -> np.ndarray:
    """The keys of a query's adjacent pairs of known words (-1: a word never seen)."""
    ids = word_ids.astype(np.int64)
    known = (ids[:-1] >= 0) & (ids[1:] >= 0)
    return ((ids[:-1] << _SHIFT) | ids[1:])[known]


class PairVocabulary:
    """Pair key → dense id, growing as new pairs are seen (ids are never reused).

    Sorted keys with their ids, replaced whole on every addition (one tuple, so a reader
    on another thread sees the old table or the new, never half of each).
    """

    def __init__(self) -> None:
        self._table: tuple[np.ndarray, np.ndarray] = (np.zeros(0, np.int64), np.zeros(0, np.int32))

    def __len__(self) -> int:
        return len(self._table[0])

    def nbytes(self) -> int:
        return sum(a.nbytes for a in self._table)

    def ids(self, keys: np.ndarray) -> np.ndarray:
        """The id of each key, in order (new keys get new ids)."""
        distinct, inverse = np.unique(keys, return_inverse=True)
        found, ids = self._find(distinct)
        new = distinct[~found]
        if len(new):
            ids[~found] = np.arange(len(self), len(self) + len(new), dtype=np.int32)
            sorted_keys, sorted_ids = self._table
            at = np.searchsorted(sorted_keys, new)
            self._table = (
                np.insert(sorted_keys, at, new),
                np.insert(sorted_ids, at, ids[~found]),
            )
        return ids[inverse.reshape(-1)]

    def known(self, keys: np.ndarray) -> dict[int, int]:
        """Known pair id → how often `keys` has it; unknown pairs score nothing."""
        found, ids = self._find(keys)
        return dict(Counter(ids[found].tolist()))

    def _find(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        sorted_keys, sorted_ids = self._table
        if not len(sorted_keys):
            return np.zeros(len(keys), bool), np.zeros(len(keys), np.int32)
        at = np.searchsorted(sorted_keys, keys).clip(max=len(sorted_keys) - 1)
        found = sorted_keys[at] == keys
        return found, np.where(found, sorted_ids[at], 0).astype(np.int32)
