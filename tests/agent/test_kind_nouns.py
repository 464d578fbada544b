"""The noun of a "which …" phrase names the answer's kind, not its topic (issue 24,
agent/language/kind_nouns.py). Each test fails with the rule removed from the scorer;
the near misses show the noun still counts where nothing else says what is asked."""

from __future__ import annotations

import pytest

from agent.language.questions import QuestionAnalyzer
from agent.reasoners.evidence import EvidenceScorer
from tests.agent.test_hops import passage


def test_the_head_noun_of_a_which_phrase_is_read_as_the_answers_kind(
    analyzer: QuestionAnalyzer,
) -> None:
    asked = analyzer.analyse("Which system must travel be booked through?")
    assert asked.kind_nouns == {"system"}
    assert analyzer.analyse("What app do I use for multi-factor authentication?").kind_nouns == {
        "app"
    }
    # No "which NOUN <auxiliary>" phrase: no kind noun.
    assert not analyzer.analyse("Is the booking system down?").kind_nouns


@pytest.mark.parametrize(
    ("question", "sentence", "coverage_range"),
    [
        # The sentence names the system: the noun "system" is what is asked, not a word to find.
        (
            "Which system must travel be booked through?",
            "Travel must be booked through Concur at least two weeks before the trip.",
            (1.0, 1.0),
        ),
        # No name in the sentence: nothing in it is a system, so the noun still counts.
        (
            "Which system must travel be booked through?",
            "Travel must be booked at least two weeks before the trip.",
            (0.0, 0.99),
        ),
        # A near miss: "airline" is all the question is about besides "use"; a page naming
        # the booking tool it uses does not answer it.
        ("Which airline do we use?", "We use Concur to book every trip.", (0.0, 0.5)),
    ],
)
async def test_the_kind_noun_is_answered_only_by_a_sentence_naming_one(
    scorer: EvidenceScorer,
    analyzer: QuestionAnalyzer,
    question: str,
    sentence: str,
    coverage_range: tuple[float, float],
) -> None:
    asked = analyzer.analyse(question)
    scored = await scorer.score(asked, [passage(1, "Booking travel", sentence)])
    low, high = coverage_range
    assert scored and all(low <= s.coverage <= high for s in scored), [
        (s.unit.text, s.coverage) for s in scored
    ]
