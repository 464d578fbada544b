"""The two derived sets of bench/answer_negatives.py: what the negatives keep, and how a
counterfactual copy changes its passage."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"


@pytest.fixture
def sets(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))
    return importlib.import_module("answer_negatives")


def test_negatives_drop_gold_and_every_passage_holding_an_answer(sets: ModuleType) -> None:
    P, Q = sets.Passage, sets.Question
    passages = [
        P("g1", "Alain Aspect", "Alain Aspect is a French physicist."),
        P("n1", "Nobel Prize", "The prize was announced in Stockholm."),
        P("n2", "Physics", "Entanglement was shown by ALAIN ASPECT."),
        P("n3", "Yes", "Yes, this passage says yes and is kept."),
        P("n4", "Quantum optics", "Quantum optics studies light."),
    ]
    questions = [
        Q("q1", "Who won the prize?", True, ("Alain Aspect",), ("g1",)),
        Q("q2", "Is optics a field?", True, ("yes",), ()),
    ]
    kept = [p.id for p in sets.negative_passages(passages, questions)]
    # g1 is gold; n2 holds the answer once normalised ("alain aspects" is not it, but
    # "alain aspect s" is); a yes/no answer removes nothing.
    assert kept == ["n1", "n3", "n4"]


def test_a_counterfactual_swaps_the_answer_for_one_of_its_kind(sets: ModuleType) -> None:
    P, Q = sets.Passage, sets.Question
    passages = [
        P("a", "Tower", "The tower was finished in 1889 by Gustave Eiffel."),
        P("b", "Bridge", "The bridge opened in 1937 under Joseph Strauss."),
    ]
    questions = [
        Q("q1", "When was the tower finished?", True, ("1889",), ("a",)),
        Q("q2", "When did the bridge open?", True, ("1937",), ("b",)),
        Q("q3", "Who built the bridge?", True, ("Joseph Strauss",), ("b",)),
    ]
    made = {c.question.id: c for c in sets.counterfactuals(passages, questions, seed=1)}
    assert made["q1"].false_value == "1937"  # a year for a year, never a name
    assert made["q1"].passage == P("a-cf", "Tower (revised)", made["q1"].passage.text)
    assert "1937" in made["q1"].passage.text and "1889" not in made["q1"].passage.text
    assert "q3" not in made  # no other name of its kind to swap in
