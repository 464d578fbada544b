"""Fusing ranked lists (keyword, vector, …) into one, and weighting by recency.

Each input is a list of (key, score), best first. Reciprocal rank fusion uses only the
ranks (k = 60, as in Cormack et al.); min-max and z-score fusion use the scores, each list
normalised over its own candidates, so a key missing from a list gets that list's floor.
Weights are per list. Time weighting multiplies a fused score by a half-life decay of the
document's age, for questions about what is recent.
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, TypeVar

K = TypeVar("K", bound=Hashable)
Ranked = Sequence[tuple[K, float]]

FusionMethod = Literal["rrf", "minmax", "zscore"]


@dataclass(frozen=True, slots=True)
class FusionOptions:
    method: FusionMethod = "rrf"
    # RRF's constant: 1 / (k + rank).
    k: int = 60
    # One weight per input list, in order; None weighs every list 1.
    weights: tuple[float, ...] | None = None


@dataclass(frozen=True, slots=True)
class ScoreDistribution:
    """Mean and spread of a list's scores over more than its candidates (z-score fusion)."""

    mean: float
    spread: float


def fuse(
    lists: Sequence[Ranked[K]],
    options: FusionOptions | None = None,
    *,
    distributions: Sequence[ScoreDistribution | None] | None = None,
) -> list[tuple[K, float]]:
    """One list, best first, by the configured method."""
    options = options or FusionOptions()
    weights = _weights(lists, options.weights)
    if options.method == "rrf":
        return reciprocal_rank_fusion(lists, k=options.k, weights=weights)
    return score_fusion(
        lists, weights=weights, normalise=options.method, distributions=distributions
    )


def reciprocal_rank_fusion(
    lists: Sequence[Ranked[K]], *, k: int = 60, weights: Sequence[float] | None = None
) -> list[tuple[K, float]]:
    """Σ weight / (k + rank) over the lists a key appears in (rank counts from 1)."""
    fused: dict[K, float] = {}
    for ranked, weight in zip(lists, _weights(lists, weights), strict=True):
        for rank, (key, _) in enumerate(ranked, start=1):
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
    return _sorted(fused)


def score_fusion(
    lists: Sequence[Ranked[K]],
    *,
    weights: Sequence[float] | None = None,
    normalise: Literal["minmax", "zscore"] = "minmax",
    distributions: Sequence[ScoreDistribution | None] | None = None,
) -> list[tuple[K, float]]:
    """Σ weight × normalised score; a key absent from a list gets that list's lowest value.

    For z-scores, a list given a distribution is scaled by it instead of by its own
    candidates' mean and spread (a top-100 is a truncated, compressed sample of a score
    distribution; BM25, for one, scores every matching chunk and can say more).
    """
    given = distributions or [None] * len(lists)
    if len(given) != len(lists):
        raise ValueError(f"{len(given)} score distributions given for {len(lists)} lists")
    normalised = [
        _normalise(ranked, normalise, known) for ranked, known in zip(lists, given, strict=True)
    ]
    keys = dict.fromkeys(key for ranked in lists for key, _ in ranked)
    fused = {
        key: sum(
            weight * scores.get(key, floor)
            for (scores, floor), weight in zip(normalised, _weights(lists, weights), strict=True)
        )
        for key in keys
    }
    return _sorted(fused)


def _normalise(
    ranked: Ranked[K], method: str, known: ScoreDistribution | None = None
) -> tuple[dict[K, float], float]:
    """Scores mapped to a common scale, and the value given to keys the list lacks."""
    if not ranked:
        return {}, 0.0
    values = [score for _, score in ranked]
    if method == "minmax":
        low, high = min(values), max(values)
        span = high - low
        return {key: (s - low) / span if span else 1.0 for key, s in ranked}, 0.0
    if known is not None:
        mean, spread = known.mean, known.spread or 1.0
    else:
        mean = sum(values) / len(values)
        spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)) or 1.0
    scaled = {key: (s - mean) / spread for key, s in ranked}
    return scaled, min(scaled.values())


def _weights(lists: Sequence[object], weights: Sequence[float] | None) -> Sequence[float]:
    if weights is None:
        return [1.0] * len(lists)
    if len(weights) != len(lists):
        raise ValueError(f"{len(weights)} fusion weights given for {len(lists)} lists")
    return weights


def _sorted(fused: Mapping[K, float]) -> list[tuple[K, float]]:
    # Stable: equal scores keep first-seen order (the first list's order wins ties).
    return sorted(fused.items(), key=lambda item: -item[1])


@dataclass(frozen=True, slots=True)
class RecencyOptions:
    half_life_days: float = 90.0
    # 1.0 multiplies by the decay itself; 0.5 keeps half of the score whatever the age.
    strength: float = 0.5


def recency_weighted(
    fused: Ranked[K],
    updated_at: Mapping[K, datetime | None],
    *,
    now: datetime,
    options: RecencyOptions | None = None,
) -> list[tuple[K, float]]:
    """Scores × ((1 − strength) + strength × 0.5^(age / half-life)); undated keys decay fully."""
    options = options or RecencyOptions()
    weighted = {}
    for key, score in fused:
        when = updated_at.get(key)
        decay = 0.0
        if when is not None:
            age_days = max((now - when).total_seconds(), 0.0) / 86400
            decay = 0.5 ** (age_days / options.half_life_days)
        weighted[key] = score * ((1 - options.strength) + options.strength * decay)
    return _sorted(weighted)


_RECENT = re.compile(
    r"\b(?:recent(?:ly)?|latest|newest|new|updated?|changed?|changes|current(?:ly)?|now|"
    r"today|yesterday|this (?:week|month|quarter|year)|last (?:week|month|quarter|year)|"
    r"so far|as of)\b",
    re.IGNORECASE,
)


def asks_about_recent(question: str) -> bool:
    """True when a question is about what is new or current (so recency should count)."""
    return bool(_RECENT.search(question))
