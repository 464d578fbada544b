"""Abbreviations a text defines ("Full Name (FN)", the initials matching), and those a
question writes that a page only spells out ("PTO" for "paid time off")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.language import abbreviations
from agent.language.abbreviations import defined_abbreviations, implied_abbreviations
from agent.language.questions import QuestionAnalyzer
from agent.language.typos import english
from agent.reasoners.evidence import EvidenceScorer
from tests.agent.test_hops import passage

PTO_PAGE = (
    "Paid time off\n\nFull-time employees accrue 21 days of paid time off a year. "
    "Request paid time off in Workday."
)


def test_a_definition_inside_a_link_and_several_in_one_sentence_are_found() -> None:
    text = (
        "The [Employee Assistance Program (EAP)](http://eap.test/) helps. Technology "
        "Transformation Services (TTS) is part of the General Services Administration (GSA)."
    )
    assert defined_abbreviations(text) == {
        "EAP": "Employee Assistance Program",
        "TTS": "Technology Transformation Services",
        "GSA": "General Services Administration",
    }


def test_a_parenthesis_whose_letters_are_not_the_initials_defines_nothing() -> None:
    assert defined_abbreviations("He moved to the United States (USA) in 1990 (AD).") == {}


@given(st.text(alphabet=st.sampled_from("Ab (C)[]x .-EAP"), max_size=80))
def test_every_abbreviation_found_is_the_initials_of_its_name(text: str) -> None:
    for short, name in defined_abbreviations(text).items():
        assert [w[0].upper() for w in name.split()] == [c for c in short if c.isalpha()]


def test_an_initialism_the_page_spells_out_twice_is_implied() -> None:
    assert implied_abbreviations("How many PTO days do I get?", PTO_PAGE) == {
        "PTO": "paid time off"
    }
    # Written as is, or spelled out once only, or two letters: nothing is implied.
    assert implied_abbreviations("PTO?", PTO_PAGE + " PTO is paid.") == {}
    assert implied_abbreviations("PTO?", "Please turn off the lights.") == {}
    assert implied_abbreviations("Does HR know?", "Human resources. Human resources.") == {}


def test_an_initialism_chat_writes_in_lower_case_is_implied_when_it_is_no_word() -> None:
    page = "Long service leave\n\nLong service leave accrues after 10 years."
    asked = "how much extra lsl do you get every 5 yrs"
    assert implied_abbreviations(asked, page, is_word=english) == {"LSL": "long service leave"}
    # Without a lexicon, or written as is, or an English word ("leg"): nothing.
    assert implied_abbreviations(asked, page) == {}
    assert implied_abbreviations(asked, page + " Ask about lsl.", is_word=english) == {}
    assert implied_abbreviations("my leg", "Long easy gait. Long easy gait.", is_word=english) == {}


@given(
    st.lists(st.sampled_from(["PTO", "Paid", "paid", "time", "off", "of", "Oak", "."])).map(
        " ".join
    )
)
def test_every_implied_name_begins_with_the_initialisms_letters(text: str) -> None:
    for short, name in implied_abbreviations("PTO or PTOs?", text).items():
        named = [w for w in name.split() if w not in {"of"}]
        assert "".join(w[0].upper() for w in named) == short


@pytest.mark.parametrize(
    ("question", "answers"),
    [
        ("How many PTO days do full-time employees get a year?", True),
        # A near miss: contractors are named nowhere; the initialism does not cover that.
        ("How many PTO days do contractors get a year?", False),
    ],
)
async def test_a_page_spelling_out_the_initialism_answers_the_question_using_it(
    scorer: EvidenceScorer, analyzer: QuestionAnalyzer, question: str, answers: bool
) -> None:
    scored = await scorer.score(analyzer.analyse(question), [passage(1, "Paid time off", PTO_PAGE)])
    best = max(s.coverage for s in scored)
    assert (best == 1.0) is answers, [(s.unit.text, s.coverage) for s in scored]


def _used_by_every_start(text: str) -> dict[str, str]:
    """`used_abbreviations` as its docstring defines it: a run of initials tried from
    every word of the text."""
    plain = abbreviations.link_text(text)
    words = abbreviations._NAME_WORD.findall(plain)
    found = {
        short: abbreviations.repeated_name(words, short, range(len(words)))
        for short in abbreviations._USED_INITIALISM.findall(plain)
    }
    return {short: name for short, name in found.items() if name}


_PIECES = st.sampled_from(
    [
        *"professional development paid time off PD PTO DP the of and budget".split(),
        "professional development",
        "Professional Development",
        "paid time off",
        "Paid Time Off",
        "Program Director",
        "plan of the day",
    ]
)


@given(st.lists(_PIECES, max_size=30).map(" ".join))
def test_trying_only_the_words_of_the_first_letter_finds_what_every_start_finds(
    text: str,
) -> None:
    assert abbreviations.used_abbreviations(text) == _used_by_every_start(text)
