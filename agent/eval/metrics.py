"""Retrieval quality metrics over ranked document ids, and paired-bootstrap intervals.

Gains are the graded relevance judgements (BEIR/trec_eval's linear-gain nDCG); a
judgement of 0 or less counts as not relevant. Recall divides by every relevant document
of the query, so a query with three relevant documents can reach 1.0 only if all three
are retrieved.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

METRIC_NAMES = (
    "hit@1",
    "hit@5",
    "hit@10",
    "mrr@10",
    "ndcg@10",
    "recall@10",
    "recall@100",
    "all@10",
)


@dataclass(frozen=True, slots=True)
class QueryMetrics:
    hit_1: float
    hit_5: float
    hit_10: float
    mrr_10: float
    ndcg_10: float
    recall_10: float
    recall_100: float
    all_10: float

    def values(self) -> tuple[float, ...]:
        return tuple(asdict(self).values())


def query_metrics(ranked: Sequence[str], relevance: Mapping[str, float]) -> QueryMetrics:
    """Metrics of one query's ranking (document ids, best first, no repeats)."""
    relevant = {doc for doc, grade in relevance.items() if grade > 0}
    if not relevant:
        raise ValueError("a query needs at least one relevant document to be evaluated")
    first = next((rank for rank, doc in enumerate(ranked[:10], 1) if doc in relevant), None)
    found_10 = len(relevant.intersection(ranked[:10]))
    return QueryMetrics(
        hit_1=float(first == 1),
        hit_5=float(first is not None and first <= 5),
        hit_10=float(first is not None),
        mrr_10=1.0 / first if first else 0.0,
        ndcg_10=ndcg(ranked, relevance, k=10),
        recall_10=found_10 / len(relevant),
        recall_100=len(relevant.intersection(ranked[:100])) / len(relevant),
        all_10=float(found_10 == len(relevant)),
    )


def ndcg(ranked: Sequence[str], relevance: Mapping[str, float], *, k: int) -> float:
    gains = [max(relevance.get(doc, 0.0), 0.0) for doc in ranked[:k]]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sorted((g for g in relevance.values() if g > 0), reverse=True)[:k]
    best = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / best if best else 0.0


@dataclass(frozen=True, slots=True)
class Interval:
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class Summary:
    """Mean metrics over queries, with a bootstrap interval on nDCG@10."""

    means: dict[str, float]
    ndcg_interval: Interval
    queries: int

    def as_dict(self) -> dict[str, object]:
        return {
            **{name: round(value, 4) for name, value in self.means.items()},
            "ndcg@10_ci95": [round(self.ndcg_interval.low, 4), round(self.ndcg_interval.high, 4)],
            "queries": self.queries,
        }


def per_query_matrix(metrics: Sequence[QueryMetrics]) -> np.ndarray:
    """Queries × metrics, columns in METRIC_NAMES order."""
    return np.array([m.values() for m in metrics], dtype=np.float64).reshape(-1, len(METRIC_NAMES))


def bootstrap_samples(queries: int, *, resamples: int = 2000, seed: int = 0) -> np.ndarray:
    """Resampled query indices, shared by every system so the comparison is paired."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, queries, size=(resamples, queries))


def summarise(metrics: Sequence[QueryMetrics], samples: np.ndarray) -> Summary:
    matrix = per_query_matrix(metrics)
    means = dict(zip(METRIC_NAMES, matrix.mean(axis=0).tolist(), strict=True))
    ndcg_column = matrix[:, METRIC_NAMES.index("ndcg@10")]
    return Summary(means, percentile_interval(ndcg_column[samples].mean(axis=1)), len(metrics))


def paired_difference(
    system: Sequence[QueryMetrics],
    baseline: Sequence[QueryMetrics],
    samples: np.ndarray,
    *,
    metric: str = "ndcg@10",
) -> tuple[float, Interval]:
    """Mean difference system − baseline on `metric` and its paired-bootstrap 95% interval."""
    column = METRIC_NAMES.index(metric)
    delta = per_query_matrix(system)[:, column] - per_query_matrix(baseline)[:, column]
    return float(delta.mean()), percentile_interval(delta[samples].mean(axis=1))


def percentile_interval(values: np.ndarray, *, level: float = 0.95) -> Interval:
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return Interval(float(low), float(high))


def document_ranking(chunk_documents: Sequence[str]) -> list[str]:
    """Documents in the order of their best chunk (a document's rank is its best chunk's)."""
    return list(dict.fromkeys(chunk_documents))
