"""A query's best chunks out of a million, and the distribution of every match's score.

The query's postings are summed by position. When they are few (word pairs, rare
terms) they are summed sparsely, by sorting them, so nothing touches every position.
Otherwise they are added into one array over every position, and there compacting the
matches (`flatnonzero`, a boolean index: branchy passes) would cost more than the
scoring itself (at 1M chunks, 5–10 ms each against 0.7 ms for the sum): the best k are
taken from the positions at or above the k-th best block maximum, and the mean and
spread from sums over the whole array.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Sparse summing when there are fewer postings than one per this many positions: a sort
# costs ~50 ns a posting, a pass over every position ~0.5 ns a position, and the dense
# path makes about eight.
SPARSE_SHARE = 32
# Positions per block for the block maxima (1M positions: ~1,000 maxima).
BLOCK = 1024


@dataclass(frozen=True, slots=True)
class Distribution:
    """How many chunks matched, and their scores' mean and (population) spread."""

    count: int
    mean: float
    spread: float

    @classmethod
    def of(cls, scores: np.ndarray) -> Distribution:
        """Of the positive entries of `scores` (the others are 0): sums over the whole array,
        no compaction."""
        count = int(np.count_nonzero(scores))
        if not count:
            return cls(0, 0.0, 0.0)
        mean = float(scores.sum()) / count
        variance = float(scores @ scores) / count - mean * mean
        return cls(count, mean, float(np.sqrt(max(variance, 0.0))))


def summed(positions: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct positions ascending, the sum of their weights): sparse, by sorting."""
    distinct, inverse = np.unique(positions, return_inverse=True)
    return distinct, np.bincount(inverse.reshape(-1), weights, minlength=len(distinct))


def sparse(postings: int, size: int) -> bool:
    """Whether this many postings are few enough to sum sparsely over `size` positions."""
    return postings * SPARSE_SHARE < size


def candidates(dense: np.ndarray, limit: int) -> np.ndarray:
    """Positions of every positive score that can be among the best `limit` of `dense`
    (every score there ≥ 0): those at or above the `limit`-th best block maximum, since the
    maxima of `limit` blocks are `limit` scores that reach it."""
    if not len(dense):
        return np.zeros(0, np.int64)
    maxima = np.maximum.reduceat(dense, np.arange(0, len(dense), BLOCK))
    bound = 0.0
    if len(maxima) > limit:
        bound = float(np.partition(maxima, len(maxima) - limit)[len(maxima) - limit])
    return np.flatnonzero(dense >= bound) if bound > 0 else np.flatnonzero(dense > 0)


def best(ids: np.ndarray, scores: np.ndarray, limit: int) -> list[tuple[int, float]]:
    """The `limit` best (id, score), best first, ties by id (ties at the cut included)."""
    if len(scores) > limit:
        kth = np.partition(scores, len(scores) - limit)[len(scores) - limit]
        chosen = np.flatnonzero(scores >= kth)
        ids, scores = ids[chosen], scores[chosen]
    order = np.lexsort((ids, -scores))[:limit]
    return [(int(ids[i]), float(scores[i])) for i in order]
