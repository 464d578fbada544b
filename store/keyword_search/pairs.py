"""The word-pair index: BM25 over adjacent word pairs ("sick leave").

A chunk that has the question's words next to each other, as a phrase, scores there
too. Pairs are int64 keys made of the two words' ids, so the index keeps no string per
pair (a corpus has tens of distinct pairs per chunk). Pairs never span a BREAK.
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
