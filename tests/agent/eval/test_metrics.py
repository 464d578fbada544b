"""Retrieval metrics on rankings small enough to check by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agent.eval.metrics import (
    bootstrap_samples,
    document_ranking,
    paired_difference,
    query_metrics,
    summarise,
)


def test_metrics_of_a_ranking_with_one_of_two_relevant_documents_second() -> None:
    m = query_metrics(["x", "a", "y"], {"a": 1, "b": 1})
    assert (m.hit_1, m.hit_5, m.hit_10) == (0.0, 1.0, 1.0)
    assert m.mrr_10 == 0.5
    assert m.ndcg_10 == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    assert (m.recall_10, m.recall_100, m.all_10) == (0.5, 0.5, 0.0)


def test_all_at_10_needs_every_relevant_document() -> None:
    m = query_metrics(["b", "a"], {"a": 1, "b": 2, "c": 0})
    assert (m.all_10, m.recall_10) == (1.0, 1.0)
    assert m.ndcg_10 == pytest.approx(1.0)


def test_graded_judgements_are_linear_gains() -> None:
    m = query_metrics(["a", "b"], {"a": 1, "b": 2})
    ideal = 2 + 1 / math.log2(3)
    assert m.ndcg_10 == pytest.approx((1 + 2 / math.log2(3)) / ideal)


def test_a_query_without_relevant_documents_is_refused() -> None:
    with pytest.raises(ValueError, match="relevant"):
        query_metrics(["a"], {"a": 0})


def test_documents_rank_by_their_best_chunk() -> None:
    assert document_ranking(["d2", "d1", "d2", "d3"]) == ["d2", "d1", "d3"]


def test_bootstrap_interval_contains_the_mean_and_the_paired_difference_is_exact() -> None:
    better = [query_metrics(["a"], {"a": 1})] * 30 + [query_metrics(["x"], {"a": 1})] * 10
    worse = [query_metrics(["x"], {"a": 1})] * 20 + [query_metrics(["a"], {"a": 1})] * 20
    samples = bootstrap_samples(40, resamples=500)
    summary = summarise(better, samples)
    assert summary.means["ndcg@10"] == pytest.approx(0.75)
    assert summary.ndcg_interval.low < 0.75 < summary.ndcg_interval.high
    delta, interval = paired_difference(better, worse, samples)
    assert delta == pytest.approx(0.25)
    assert interval.low <= delta <= interval.high
    assert np.isfinite(interval.low)
