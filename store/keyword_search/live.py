"""BM25 scored when the query comes, over segments, from counts kept for the live chunks.

rank-bm25's `BM25Okapi`: a chunk scores Σ idf(t) · tf · (k1 + 1) / (tf + k1 · (1 − b +
b · length / avgdl)) over the query's terms (a repeated term counts again), with idf(t) =
log((N − df + 0.5) / (df + 0.5)) and negative idfs replaced by epsilon × the mean idf of
every term the corpus has. N, avgdl and df count the live chunks only (deleted ones stay
in their segment, masked, until a merge drops them), so one document's change moves a
few counts instead of re-weighting every posting. The mean idf comes from a histogram of
df (how many terms occur in exactly k chunks): one pass over the counts per change, and
a log per distinct count rather than per term. Summed in another order than rank-bm25
sums it, so scores agree to floating-point rounding (tests compare with rtol 1e-5).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from store.keyword_search.bm25 import Bm25Parameters
from store.keyword_search.segments import Postings


@dataclass(frozen=True, slots=True)
class Bm25Statistics:
    """What BM25 needs beyond a chunk's own tf and length, over the live chunks."""

    chunks: int
    total_length: int
    df: np.ndarray  # int32 by term id; 0 for a term no live chunk has
    floor: float  # epsilon × the mean idf

    @classmethod
    def of(
        cls, *, chunks: int, total_length: int, df: np.ndarray, parameters: Bm25Parameters
    ) -> Bm25Statistics:
        return cls(chunks, total_length, df, parameters.epsilon * mean_idf(df, chunks))

    @property
    def average_length(self) -> float:
        return self.total_length / self.chunks if self.chunks else 1.0

    def idf(self, terms: np.ndarray) -> np.ndarray:
        """rank-bm25's idf of each term id (0 for a term no live chunk has)."""
        df = np.zeros(len(terms), np.float64)
        known = terms < len(self.df)
        df[known] = self.df[terms[known]]
        idf = np.log(self.chunks - df + 0.5) - np.log(df + 0.5)
        idf[idf < 0] = self.floor
        idf[df == 0] = 0.0
        return idf


def mean_idf(df: np.ndarray, chunks: int) -> float:
    """The mean idf over every term with df > 0, from the histogram of df."""
    histogram = np.bincount(df)
    counts = np.flatnonzero(histogram[1:]) + 1
    if not len(counts):
        return 0.0
    terms = histogram[counts].astype(np.float64)
    idf = np.log(chunks - counts + 0.5) - np.log(counts + 0.5)
    return float((terms * idf).sum() / terms.sum())


def document_frequencies(segments: Sequence[tuple[Postings, np.ndarray]], size: int) -> np.ndarray:
    """df of every term id below `size` over the kept chunks of (postings, keep mask)."""
    df = np.zeros(size, np.int64)
    for postings, keep in segments:
        terms, counts = postings.document_frequencies()
        df += np.bincount(terms, weights=counts, minlength=size).astype(np.int64)
        df -= np.bincount(postings.terms_of(np.flatnonzero(~keep)), minlength=size)
    return df.astype(np.int32)


@dataclass(frozen=True, slots=True)
class LiveBm25:
    """One BM25 list (single terms, or word pairs) over a snapshot's segments, whose
    chunks take consecutive positions: segment i starts at `offsets[i]`."""

    segments: tuple[Postings, ...]
    offsets: tuple[int, ...]
    statistics: Bm25Statistics
    norm: np.ndarray  # float32 per position: k1 · (1 − b + b · length / avgdl)
    parameters: Bm25Parameters

    @classmethod
    def over(
        cls,
        segments: Sequence[Postings],
        statistics: Bm25Statistics,
        parameters: Bm25Parameters,
    ) -> LiveBm25:
        offsets = tuple(np.cumsum([0, *(s.size for s in segments)])[:-1].tolist())
        lengths = np.concatenate([s.lengths for s in segments]) if segments else np.zeros(0)
        k1, b = parameters.k1, parameters.b
        norm = k1 * (1 - b + b * lengths / (statistics.average_length or 1.0))
        return cls(tuple(segments), offsets, statistics, norm.astype(np.float32), parameters)

    @property
    def size(self) -> int:
        return len(self.norm)

    def scores(self, query: dict[int, int]) -> np.ndarray:
        """BM25 score of every position for term id → repeats (deleted chunks included:
        the caller masks them)."""
        docs, parts = self.postings(query)
        if not len(docs):
            return np.zeros(self.size)
        return np.bincount(docs, parts, minlength=self.size)

    def postings(self, query: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """Every posting of the query's terms: (position, its BM25 weight), term by term.
        Written into two arrays sized up front: at 1M chunks a query has up to ~1M postings,
        and every pass over them shows."""
        if not query:
            return np.zeros(0, np.int64), np.zeros(0)
        terms = np.fromiter(query.keys(), np.int64, count=len(query))
        repeats = np.fromiter(query.values(), np.float64, count=len(query))
        weight = self.statistics.idf(terms) * repeats * (self.parameters.k1 + 1)
        spans = []
        for postings, offset in zip(self.segments, self.offsets, strict=True):
            found, at = postings.lookup(terms)
            for i in np.flatnonzero(found & (weight != 0)):
                a, b = int(postings.start[at[i]]), int(postings.start[at[i] + 1])
                spans.append((postings, offset, a, b, weight[i]))
        docs = np.empty(sum(b - a for _, _, a, b, _ in spans), np.int64)
        parts = np.empty(len(docs))
        end = 0
        for postings, offset, a, b, term_weight in spans:
            begin, end = end, end + b - a
            local = postings.docs[a:b]
            np.add(local, offset, out=docs[begin:end], dtype=np.int64)
            tf = parts[begin:end]
            tf[:] = postings.tf[a:b]
            # weight · tf / (tf + norm), in that order: the scores rank-bm25 parity checks
            # (np.take: half the time of an index array here).
            denominator = tf + np.take(self.norm[offset : offset + postings.size], local)
            np.multiply(tf, term_weight, out=tf)
            np.divide(tf, denominator, out=tf)
        return docs, parts
