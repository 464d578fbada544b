"""What a chat question asks, told apart from the case it sets out (issue 24): a leading
"if I fail part 2," or "cut my hand," and a trailing "if we stay late" are the asker's
circumstance, which a page's rule covers in its own words; "how long ... before I can"
asks for a wait, which a page states with "after"; "someone" names nobody; workplaces say
"roll over" for "carry over", "trade" for "swap", "stipend" for "reimbursement"; and a
word of the language is no typo of a page's word. Each rule answers its question on a
small handbook indexed for real, and its near-miss twin, asked the same way about what
no page says, still escalates.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.language.questions import (
    AnswerType,
    QuestionAnalyzer,
    answer_type,
    ask_core,
    chat_spelled,
    is_negated,
)
from agent.language.spans import find_span
from agent.language.typos import english
from agent.reasoners.evidence import EvidenceScorer
from agent.sentences import SentenceSplitter
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from store.text_analysis import TextAnalyzer
from tests.agent.conftest import Built, built_from, lead, pages_source

PAGES = [
    (
        "exams.md",
        "Exam support",
        "The studio pays exam fees for each part on the first attempt. For a resit, the "
        "studio pays 50% of the fee.",
    ),
    (
        "sabbatical.md",
        "Sabbatical",
        "After 10 years of service you may take a four-week paid sabbatical, once in "
        "every ten-year period.",
    ),
    (
        "learning.md",
        "Learning budget",
        "Every employee has a learning budget of €1,000 a year for courses and books. "
        "Unused budget does not roll over. Use it for courses and books only.",
    ),
    (
        "shifts.md",
        "Shifts",
        "You may trade a shift with a coworker trained for the same role. Post the trade "
        "in Homebase and wait for your manager's approval.",
    ),
    (
        "wellness.md",
        "Wellness",
        "Each employee gets a wellness stipend of $60 per month, for a gym or a fitness app.",
    ),
    (
        "overtime.md",
        "Overtime",
        "Overtime is not paid. Extra hours are taken as time off in lieu within a month.",
    ),
    (
        "carry-over.md",
        "Carrying over leave",
        "You may carry over up to 5 days of unused annual leave into the next leave year.",
    ),
    (
        "part-time.md",
        "Part-time staff",
        "Part-time staff receive 15 days of annual leave a year, pro rata to their hours.",
    ),
]


@pytest.fixture(scope="module")
async def handbook(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    source = pages_source("ap", PAGES)
    async for result in built_from(pg_server, embedder, source, "ap"):
        yield result


def test_the_answer_type_is_read_from_the_part_that_asks() -> None:
    assert answer_type("quick q - do we get paid ot if we stay late?") == "yes_no"
    assert answer_type("if I fail part 2 and have to resit, does the studio cover the fee") == (
        "yes_no"
    )
    assert answer_type("cut my hand on a box cutter, do i need to report it?") == "yes_no"
    # a leading clause that itself asks is kept whole
    assert answer_type("who approves it, and when?") == "person"
    assert answer_type("When is the deadline, roughly?") == "date"


@pytest.mark.parametrize(
    "question",
    [
        # a condition opening with "when" is the case, not a question of time
        "When I leave, will my comp time be paid out?",
        "When I quit, will my comp time get paid out?",
    ],
)
def test_a_leading_condition_is_no_question_word(question: str) -> None:
    assert answer_type(question) == "yes_no"


def test_the_case_a_question_sets_out_is_its_circumstance() -> None:
    assert ask_core("do we get paid overtime if we stay late for a deadline?") == (
        "do we get paid overtime"
    )
    assert ask_core("if I fail part 2, does the studio cover the fee?") == (
        "does the studio cover the fee?"
    )
    # an ask too short to stand alone keeps its condition: "what" asks nothing alone
    assert ask_core("what if I'm late?") == "what if I'm late?"
    analyzer = QuestionAnalyzer(TextAnalyzer())
    asked = analyzer.analyse("do we get paid overtime if we stay late for a deadline?")
    assert {"stay", "late"} <= asked.circumstance
    assert "overtim" not in asked.circumstance
    # a case the ask points back at ("report it") is what is asked about
    pointed = analyzer.analyse("cut my hand on a box cutter, do i need to report it?")
    assert not pointed.circumstance


def test_words_that_name_nothing_are_no_terms() -> None:
    analyzer = QuestionAnalyzer(TextAnalyzer())
    assert analyzer.analyse("how do I swap a shift with someone?").key_terms == {"swap", "shift"}
    terms = analyzer.analyse("can I roll over leave I didn't use?").terms
    assert "didn" not in terms and "leav" in terms
    # "how long ... before I can" asks for a wait: "before" is no term of it
    waiting = analyzer.analyse("how long do I need to be here before I can take a sabbatical?")
    assert "befor" not in waiting.terms
    assert "befor" in analyzer.analyse("what happens before the review?").terms


def test_a_yes_or_no_is_also_said_by_an_amount() -> None:
    asked = "does the studio still cover the fee for a resit?"
    assert find_span("For a resit, the studio pays 50% of the fee.", "yes_no", asked)
    assert not find_span("Exam results arrive by post.", "yes_no", asked)


def test_a_word_of_the_language_is_no_typo() -> None:
    assert english("parental") and english("fail")
    assert not english("sabatical") and not english("reimbursment")


async def test_a_leading_condition_is_the_askers_case(handbook: Built) -> None:
    found = await lead(
        handbook, "if I fail part 2 and have to resit, does the studio still cover the fee"
    )
    assert found == "50% of the fee"
    assert (
        await lead(
            handbook, "if I fail part 2 and have to resit, does the studio still cover my hotel"
        )
        is None
    )


async def test_a_trailing_condition_is_the_askers_case(handbook: Built) -> None:
    assert await lead(handbook, "quick q - do we get paid ot if we stay late for a deadline?")
    twin = "quick q - do we get a meal allowance if we stay late for a deadline?"
    assert await lead(handbook, twin) is None


async def test_a_wait_before_is_stated_after(handbook: Built) -> None:
    found = await lead(handbook, "how long do i need to be here before i can take a sabatical")
    assert "10 years" in (found or "")
    assert (
        await lead(handbook, "how long do i need to be here before i can take a career break")
        is None
    )


async def test_workplace_equivalents(handbook: Built) -> None:
    assert await lead(handbook, "does unused learning budget carry over?") is not None
    # Not a near-miss twin here: "can unused learning budget be cashed out?" is answered
    # by "Unused budget does not roll over." on this seven-page handbook, as close in
    # meaning as a paraphrase to the embedding (a limit noted on issue 24), with or
    # without the equivalence; that "roll" stands for "carry" and nothing else is below.
    assert await lead(handbook, "how do I swap a shift with someone?") is not None
    assert await lead(handbook, "how do I swap a parking space with someone?") is None


def test_an_equivalent_stands_only_for_its_own_word() -> None:
    scorer = EvidenceScorer(
        analyzer=QuestionAnalyzer(TextAnalyzer()),
        splitter=SentenceSplitter(),
        vectors=None,  # type: ignore[arg-type]  # equivalents embed nothing
    )
    pages = frozenset({"roll", "over", "budget", "trade", "leav"})
    assert scorer.read_in({"carri", "swap", "pto"}, pages) == {"carri", "swap", "pto"}
    assert not scorer.read_in({"refund", "cash", "bonus", "dental"}, pages)
    # searched for as the pages may put it: only the most telling missing word is swapped
    asked = "can I roll over leave I didn't use?"
    assert scorer.said_otherwise(asked, ["roll", "leav"]) == "can I carry over leave I didn't use?"
    assert scorer.said_otherwise("what is the dress code?", ["dress"]) == ""


async def test_a_stipend_is_the_reimbursement_asked_about(handbook: Built) -> None:
    assert await lead(handbook, "is there a gym reimbursement?") == "$60 per month"
    assert await lead(handbook, "is there a dental reimbursement?") is None


async def test_a_word_of_the_language_is_not_mended_into_a_page_word(handbook: Built) -> None:
    # "parental" two edits from "part" (as in "Part-time staff") is not a typo of it
    assert await lead(handbook, "how many days of parental leave do we get?") is None
    assert await lead(handbook, "how many days of annual leave do part-timers get?") == (
        "15 days of annual leave"
    )


def test_a_workplace_place_and_a_counted_day_are_spans() -> None:
    assert find_span("Coverage starts on your first day.", "date", "when does it start?") == (
        "on your first day"
    )
    asked = "where do i pick up a hard hat?"
    assert find_span("Hard hats are held at reception.", "place", asked) == "reception"
    assert find_span("Hard hats are white and must be worn.", "place", asked) == ""


def test_how_a_question_is_put_is_no_term() -> None:
    analyzer = QuestionAnalyzer(TextAnalyzer())
    assert "work" not in analyzer.analyse("how do pro deals work").terms
    assert "work" in analyzer.analyse("how do I work from home?").terms  # the topic
    assert "sever" not in analyzer.analyse("can leave be split into several parts?").terms
    assert "bring" in analyzer.analyse("how do I bring a visitor?").light_verbs


def test_a_prefix_negates_a_participle() -> None:
    assert is_negated("You may carry over up to 5 days of unused leave.")
    assert is_negated("Breaks are unpaid.")
    assert not is_negated("The United States office is closed on July 4.")


async def test_leave_not_used_is_unused_leave(handbook: Built) -> None:
    found = await lead(handbook, "can I roll over annual leave I didn't use? how many days")
    assert "5 days" in (found or "")


@pytest.mark.xfail(
    strict=True,
    reason="Known failure: a kind no page has ('sick leave') is answered by another kind "
    "('unused annual leave'). It escalated before only while no page of this fixture had "
    "the word 'use', which then weighed as the rarest of words; with one sentence using "
    "it (the learning page's last) it fails with or without agent/language/everyday.py. "
    "Blocking every unit that names another kind of a head whose asked modifier no page "
    "has cost 8 answerable questions of the read check sets (bench/results/answer_eval.md).",
)
async def test_a_kind_of_leave_no_page_has_is_not_answered_by_another_kind(
    handbook: Built,
) -> None:
    assert await lead(handbook, "can I roll over sick leave I didn't use? how many days") is None


def test_chat_units_after_a_number_are_spelled_out() -> None:
    assert chat_spelled("pto once I've been here 7 yrs?") == "pto once I've been here 7 years?"
    assert chat_spelled("flight is 8hrs") == "flight is 8 hours"
    assert chat_spelled("do I tell hr first?") == "do I tell hr first?"  # HR, not hours
    analyzer = QuestionAnalyzer(TextAnalyzer())
    (quantity,) = analyzer.analyse("how many days after 7 yrs?").quantities
    assert quantity.unit == "year"


def test_the_band_bounding_the_askers_number_most_closely_leads() -> None:
    bands = (
        "Full-time staff receive annual leave based on years of service:\n\n"
        "- Less than 3 years of service: **25 days** a year\n"
        "- From 3 years of service: 27 days a year\n"
        "- From 7 years of service: **30 days** a year"
    )
    # "From 3 years" holds 7 years too; "From 7 years" bounds it more closely
    assert find_span(bands, "number", "how many days pto once I've been here 7 yrs") == ("30 days")
    assert find_span(bands, "number", "how many days after 4 years?") == "27 days a year"
    assert find_span(bands, "number", "how many days after 2 years?") == "25 days"


# Chat made of the pieces the rules look for, in any order and number.
_CHAT = st.lists(
    st.sampled_from(
        ["if ", "when ", "how long ", "before ", ", ", "do we ", "unused ", "7 yrs ", "? ", "x"]
    ),
    max_size=60,
).map("".join)


@given(st.one_of(st.text(max_size=200), _CHAT))
def test_reading_the_asking_part_never_fails(message: str) -> None:
    core = ask_core(message)
    assert core == message.strip() or core in message
    assert answer_type(message) in get_args(AnswerType)
    QuestionAnalyzer(TextAnalyzer()).analyse(message)


def test_a_bound_after_its_unit_is_a_band() -> None:
    table = (
        "Status and service | Accrual\n"
        "Full-time, less than 3 years | 15 days per year\n"
        "Full-time, 3 years or more | 20 days per year"
    )
    assert find_span(table, "number", "how much pto once they hit 3 yrs") == "20 days per year"
    assert find_span(table, "number", "how much pto after 2 years") == "15 days per year"
