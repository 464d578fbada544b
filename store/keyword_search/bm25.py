"""The BM25 scorer: rank-bm25's `BM25Okapi` exactly, over term ids.

k1, b, and negative idfs replaced by epsilon × the mean idf, computed eagerly: every
(term, chunk) weight is worked out when the index is built and stored by term, so a
query only adds up the postings of its own terms. That is what bm25s does too; doing it
here keeps rank-bm25's idf (bm25s has no epsilon floor) and lets a filter mask apply
before the top-k cut. At 100k chunks a query takes milliseconds where rank-bm25 takes
~150 ms (bench/retrieval_latency.py). tests/store/test_keyword_search.py checks the
scores against rank-bm25.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from store.keyword_search.terms import BREAK, TermSequences, concat, grouped


@dataclass(frozen=True, slots=True)
class Bm25Parameters:
    """rank-bm25's BM25Okapi defaults."""

    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25


@dataclass(frozen=True, slots=True)
class Bm25Index:
    """Eager BM25 weights stored by term: postings of term t are [start[t], start[t + 1])."""

    size: int
    start: np.ndarray  # int64, one more than the vocabulary size
    documents: np.ndarray  # int32 document positions
    weights: np.ndarray  # float32 BM25 weight of the term in that document

    @classmethod
    def build(
        cls,
        encoded: Sequence[tuple[np.ndarray, np.ndarray]],
        *,
        vocabulary_size: int,
        parameters: Bm25Parameters | None = None,
    ) -> Bm25Index:
        """Index documents given as (term ids, counts), e.g. from `Vocabulary.encode`."""
        n = len(encoded)
        terms = concat([ids for ids, _ in encoded], np.int64)
        tf = concat([counts for _, counts in encoded], np.float32)
        distinct = np.fromiter((len(ids) for ids, _ in encoded), dtype=np.int64, count=n)
        owner = np.repeat(np.arange(n, dtype=np.int64), distinct)
        order = np.lexsort((owner, terms))
        return cls.from_sorted_postings(
            terms[order],
            owner[order],
            tf[order],
            size=n,
            vocabulary_size=vocabulary_size,
            parameters=parameters,
        )

    @classmethod
    def from_sequences(
        cls,
        sequences: TermSequences,
        *,
        vocabulary_size: int,
        parameters: Bm25Parameters | None = None,
    ) -> Bm25Index:
        """Index documents given as term sequences (order and BREAKs do not matter here)."""
        present = sequences.terms != BREAK
        term, document, tf = grouped(
            sequences.terms[present], sequences.owner[present], sequences.size
        )
        return cls.from_sorted_postings(
            term,
            document,
            tf,
            size=sequences.size,
            vocabulary_size=vocabulary_size,
            parameters=parameters,
        )

    @classmethod
    def from_sorted_postings(
        cls,
        terms: np.ndarray,
        documents: np.ndarray,
        tf: np.ndarray,
        *,
        size: int,
        vocabulary_size: int,
        parameters: Bm25Parameters | None = None,
    ) -> Bm25Index:
        """Index (term, document, tf) postings sorted by term, then document."""
        p = parameters or Bm25Parameters()
        tf = tf.astype(np.float64)
        lengths = np.bincount(documents, weights=tf, minlength=size)
        df = np.bincount(terms, minlength=vocabulary_size)
        idf = okapi_idf(df, size, p.epsilon)
        average = lengths.sum() / size if size else 1.0
        norm = p.k1 * (1 - p.b + p.b * lengths / (average or 1.0))
        weights = idf[terms] * tf * (p.k1 + 1) / (tf + norm[documents])
        start = np.zeros(vocabulary_size + 1, dtype=np.int64)
        np.cumsum(df, out=start[1:])
        return cls(size, start, documents.astype(np.int32), weights.astype(np.float32))

    def scores(self, query: dict[int, int]) -> np.ndarray:
        """BM25 score of every document for a query given as term id → repeats."""
        spans = [
            (self.start[t], self.start[t + 1], repeats)
            for t, repeats in query.items()
            if t + 1 < len(self.start)
        ]
        if not spans:
            return np.zeros(self.size)
        docs = np.concatenate([self.documents[a:b] for a, b, _ in spans])
        weights = np.concatenate([self.weights[a:b] * r for a, b, r in spans])
        return np.bincount(docs, weights=weights, minlength=self.size)

    def top(
        self, query: dict[int, int], *, limit: int, allowed: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """The best (document position, score) pairs with a positive score, best first."""
        scores = self.scores(query)
        if allowed is not None:
            scores = np.where(allowed, scores, 0.0)
        return top_positive(scores, limit)


def top_positive(scores: np.ndarray, limit: int) -> list[tuple[int, float]]:
    """Positions of the `limit` highest positive scores, ties broken by position."""
    candidates = np.flatnonzero(scores > 0)
    if len(candidates) > limit:
        cut = np.argpartition(-scores[candidates], limit - 1)[:limit]
        candidates = candidates[cut]
    order = np.lexsort((candidates, -scores[candidates]))
    return [(int(candidates[i]), float(scores[candidates[i]])) for i in order]


def okapi_idf(df: np.ndarray, n: int, epsilon: float) -> np.ndarray:
    """rank-bm25's idf: log((N - df + .5) / (df + .5)), negatives → epsilon × mean idf."""
    present = df > 0
    idf = np.zeros(len(df), dtype=np.float64)
    idf[present] = np.log(n - df[present] + 0.5) - np.log(df[present] + 0.5)
    if present.any():
        floor = epsilon * idf[present].mean()
        idf[present & (idf < 0)] = floor
    return idf
