"""Rank fusion and recency weighting, on hand-made lists."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent.retrieval.fusion import (
    FusionOptions,
    RecencyOptions,
    ScoreDistribution,
    asks_about_recent,
    fuse,
    recency_weighted,
    reciprocal_rank_fusion,
    score_fusion,
)

KEYWORD = [("a", 12.0), ("b", 9.0), ("c", 1.0)]
VECTOR = [("b", 0.81), ("d", 0.80), ("a", 0.20)]


def test_rrf_adds_one_over_k_plus_rank() -> None:
    fused = dict(reciprocal_rank_fusion([KEYWORD, VECTOR], k=60))
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 63)
    assert fused["d"] == pytest.approx(1 / 62)
    assert [key for key, _ in reciprocal_rank_fusion([KEYWORD, VECTOR])][:2] == ["b", "a"]


def test_rrf_weights_favour_one_list() -> None:
    only_vector = reciprocal_rank_fusion([KEYWORD, VECTOR], weights=[0.0, 1.0])
    assert [key for key, _ in only_vector][:3] == ["b", "d", "a"]
    assert dict(only_vector)["c"] == 0.0


def test_minmax_fusion_uses_the_scores_and_gives_absent_keys_the_floor() -> None:
    fused = dict(score_fusion([KEYWORD, VECTOR], normalise="minmax"))
    assert fused["a"] == pytest.approx(1.0 + 0.0)
    assert fused["b"] == pytest.approx((9 - 1) / 11 + 1.0)
    assert fused["c"] == pytest.approx(0.0)
    assert fused["d"] == pytest.approx(0.60 / 0.61)


def test_zscore_fusion_ranks_the_key_both_lists_like_first() -> None:
    assert fuse([KEYWORD, VECTOR], FusionOptions(method="zscore"))[0][0] == "b"


def test_a_given_score_distribution_scales_its_list_instead_of_the_candidates() -> None:
    keyword_over_all = ScoreDistribution(mean=2.0, spread=4.0)
    fused = dict(
        score_fusion([KEYWORD, VECTOR], normalise="zscore", distributions=[keyword_over_all, None])
    )
    v_mean = (0.81 + 0.80 + 0.20) / 3
    v_spread = (sum((v - v_mean) ** 2 for v in (0.81, 0.80, 0.20)) / 3) ** 0.5
    # "a": (12 - 2) / 4 from the keyword list; "d" lacks a keyword score: the list's floor,
    # the lowest of its candidates on the given scale, (1 - 2) / 4.
    assert fused["a"] == pytest.approx((12 - 2) / 4 + (0.20 - v_mean) / v_spread)
    assert fused["d"] == pytest.approx((1 - 2) / 4 + (0.80 - v_mean) / v_spread)
    # Against the candidates' own scale, a's lead in BM25 counts for less.
    own = dict(score_fusion([KEYWORD, VECTOR], normalise="zscore"))
    assert fused["a"] - fused["b"] > own["a"] - own["b"]


def test_one_distribution_per_list_is_required() -> None:
    with pytest.raises(ValueError, match="2 lists"):
        score_fusion([KEYWORD, VECTOR], normalise="zscore", distributions=[None])


def test_a_weight_per_list_is_required() -> None:
    with pytest.raises(ValueError, match="2 lists"):
        fuse([KEYWORD, VECTOR], FusionOptions(weights=(1.0,)))


def test_recency_halves_the_boosted_part_every_half_life() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    dates = {"old": now - timedelta(days=90), "new": now, "undated": None}
    ranked = [("old", 1.0), ("new", 0.8), ("undated", 0.9)]
    weighted = dict(
        recency_weighted(
            ranked, dates, now=now, options=RecencyOptions(half_life_days=90, strength=1.0)
        )
    )
    assert weighted == pytest.approx({"old": 0.5, "new": 0.8, "undated": 0.0})


@pytest.mark.parametrize(
    ("question", "recent"),
    [
        ("What changed in the travel policy this year?", True),
        ("What is the latest guidance on laptops?", True),
        ("How do I request leave?", False),
    ],
)
def test_questions_about_what_is_recent_are_recognised(question: str, recent: bool) -> None:
    assert asks_about_recent(question) is recent
