"""The noun of a "which …" phrase names the answer's kind, not its topic (issue 24,
agent/language/kind_nouns.py). Each test fails with the rule removed from the scorer;
the near misses show the noun still counts where nothing else says what is asked."""

from __future__ import annotations

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


async def test_a_sentence_naming_the_system_answers_which_system(
    scorer: EvidenceScorer, analyzer: QuestionAnalyzer
) -> None:
    answer = "Travel must be booked through Concur at least two weeks before the trip."
    asked = analyzer.analyse("Which system must travel be booked through?")
    scored = await scorer.score(asked, [passage(1, "Booking travel", answer)])
    assert [(s.unit.text, s.coverage) for s in scored] == [(answer, 1.0)]


async def test_without_a_name_or_with_nothing_else_asked_the_noun_still_counts(
    scorer: EvidenceScorer, analyzer: QuestionAnalyzer
) -> None:
    # No name in the sentence: nothing in it is a system.
    unnamed = "Travel must be booked at least two weeks before the trip."
    asked = analyzer.analyse("Which system must travel be booked through?")
    scored = await scorer.score(asked, [passage(1, "Booking travel", unnamed)])
    assert all(s.coverage < 1.0 for s in scored)
    # A near miss: "airline" is all the question is about besides "use"; a page naming
    # the booking tool it uses does not answer it.
    tool = "We use Concur to book every trip."
    near_miss = analyzer.analyse("Which airline do we use?")
    scored = await scorer.score(near_miss, [passage(1, "Booking travel", tool)])
    assert all(s.coverage <= 0.5 for s in scored)
