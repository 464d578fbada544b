"""A quantity the question states ("after 12 years") is met by the page's band that holds
it ("10 to 14 years of service"), and the reply leads with that band's answer; a number
no band holds is still a gap (issue 24: a constraint unmet means the sub-question is
one)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.language.questions import AnswerType, QuestionAnalyzer
from agent.language.ranges import asked_quantities, bounded, bounding_words, held, without_held
from agent.language.spans import find_span
from agent.reasoners.evidence import EvidenceScorer
from jobs.documents import SourceDocument, StaticSource
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from tests.agent.conftest import Built, built_from
from tests.agent.test_hops import passage

PAGES = [
    SourceDocument(
        uri="long-service.md",
        title="Long-service awards",
        url="https://kb.test/long-service",
        text="# Long-service awards\n\nEvery employee receives a long-service award, by "
        "completed years of service:\n\n- 5 to 9 years of service: a $250 voucher\n"
        "- 10 to 14 years of service: a $500 voucher\n- 15 to 19 years of service: a $900 "
        "voucher\n\nAwards are presented at the annual all-hands meeting.",
    ),
    SourceDocument(
        uri="parking.md",
        title="Parking",
        url="https://kb.test/parking",
        text="# Parking\n\nStaff parking is in the north garage. Visitors park on level 1.",
    ),
]


# An accrual table whose lead-in never says "PTO" (its heading does), beside a sentence
# sharing the question's "after" for another quantity ("after 60 days of employment").
PTO_PAGES = [
    SourceDocument(
        uri="paid-time-off.md",
        title="Paid time off for clinical staff",
        url="https://kb.test/paid-time-off",
        text="# Paid time off for clinical staff\n\n## How PTO accrues\n\nPTO accrues on "
        "every paid hour. Staff working 20 or more hours per week accrue at these rates per "
        "paid hour:\n\n- Less than 4 years of service: 0.0769 hours (about 20 days per year)\n"
        "- 4 to 11 years of service: 0.0962 hours (about 25 days per year)\n- 12 or more "
        "years of service: 0.1154 hours (about 30 days per year)\n\nYou may begin using PTO "
        "after 60 days of employment.",
    ),
]


@pytest.fixture(scope="module")
async def pto_pages(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    async for result in built_from(pg_server, embedder, StaticSource("pto", PTO_PAGES), "pto"):
        yield result


@pytest.fixture(scope="module")
async def pages(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    async for result in built_from(pg_server, embedder, StaticSource("kb", PAGES), "kb"):
        yield result


@pytest.mark.parametrize(
    "question",
    [
        "how much is the long-service award after 12 years?",
        # "here" is where the asker is, which no page says (agent/language/rules.py)
        "how much is the long-service award after 12 years here?",
    ],
)
async def test_the_band_holding_the_asked_number_answers(pages: Built, question: str) -> None:
    answer = await pages.loop().answer(question)
    assert not answer.escalate, answer.gaps
    assert "$500" in answer.claims[0].span, answer.claims[0].quote


@pytest.mark.parametrize(("years", "days"), [(2, "20 days"), (12, "30 days"), (15, "30 days")])
async def test_a_table_line_holding_the_asked_number_leads(
    pto_pages: Built, years: int, days: str
) -> None:
    answer = await pto_pages.loop().answer(f"how many pto days do you get after {years} yrs")
    assert not answer.escalate, answer.gaps
    assert days in answer.claims[0].span, [c.span for c in answer.claims]


async def test_the_word_bounding_the_asked_quantity_goes_with_it(
    scorer: EvidenceScorer, analyzer: QuestionAnalyzer
) -> None:
    text = (
        "Staff accrue PTO at these rates:\n\n- Less than 4 years of service: 20 days a year\n"
        "- 4 or more years of service: 25 days a year\n\nYou may begin using PTO after 90 "
        "days of employment."
    )
    question = analyzer.analyse("how many pto days do you get after 10 yrs")
    scored = await scorer.score(question, [passage(1, "Paid time off", text)])
    table = next(s for s in scored if s.unit.text.startswith("Staff accrue"))
    other = next(s for s in scored if s.unit.text.startswith("You may begin"))
    assert table.coverage == 1.0, table.covered  # "after" held with the 10 years
    assert "after" not in other.covered  # the same word, of 90 days
    assert other.coverage < table.coverage


@pytest.mark.parametrize("years", [3, 25])
async def test_a_number_no_band_holds_is_a_gap(pages: Built, years: int) -> None:
    answer = await pages.loop().answer(f"how much is the long-service award after {years} years?")
    assert answer.escalate, [c.quote for c in answer.claims]


def test_words_that_count_people_are_one_unit() -> None:
    band = "Leading hand allowance: $42.80 per week for a crew of 3 to 10 workers."
    assert held(asked_quantities("leading hand allowance if my crew is 8 people?"), band) == {"8"}
    twelve = asked_quantities("leading hand allowance if my crew is 12 people?")
    assert held(twelve, band) == set()
    assert bounded(twelve, band) == {"12"}  # a band of the asker's unit, for another case
    assert held(asked_quantities("a team of 6 employees"), "teams of 5 to 9 staff") == {"6"}


def test_bands_and_bounds_hold_by_their_words() -> None:
    four = asked_quantities("how many pto days after 4 years here?")
    assert held(four, "3 to 6 years of service") == {"4"}
    assert held(four, "between 3 and 6 years") == {"4"}
    assert held(four, "3–6 years") == {"4"}
    assert held(four, "more than 3 years") == {"4"}
    assert held(four, "fewer than 5 years") == {"4"}
    assert held(four, "at least 4 years") == {"4"}
    assert held(four, "after 4 years") == {"4"}  # a milestone: reached at 4
    assert held(four, "4 or more years of service") == {"4"}  # the bound before its unit
    assert held(four, "5 or fewer years") == {"4"}
    assert not held(four, "5 or more years")
    assert not held(four, "more than 4 years")  # the bound itself is left out
    assert not held(four, "5 to 9 years")
    assert not held(four, "3 to 6 weeks")  # another unit
    assert not held(asked_quantities("is GS-13 paid more than 4 years?"), "GS-12 to GS-14")


def test_the_word_bounding_an_asked_quantity_is_found() -> None:
    question = "how many pto days after 10 yrs, or more than $500 a year?"
    assert bounding_words(asked_quantities(question), question) == {"after", "more"}
    question = "after lunch, can I claim 3 days?"  # "after" bounds no quantity
    assert bounding_words(asked_quantities(question), question) == set()


def test_the_answer_is_read_on_the_line_of_the_band() -> None:
    table = (
        "Full-time employees earn paid time off:\n- Fewer than 3 years of service: 15 days\n"
        "- 3 to 6 years of service: 20 days\n- More than 6 years of service: 25 days"
    )
    assert find_span(table, "number", "how many pto days after 4 years?") == "20 days"
    assert find_span(table, "number", "how many pto days after 7 years?") == "25 days"
    milestones = (
        "Your allowance grows with service:\n\n- After 3 years' continuous service: 26 days\n"
        "- After 5 years' continuous service: 27 days (the maximum)"
    )
    five = find_span(milestones, "number", "how many days holiday after 5 years?")
    assert five == "27 days (the maximum)"
    assert find_span(milestones, "number", "how many days holiday after 4 years?") == "26 days"
    repay = (
        "If we pay more than $2,000 for a course and you resign soon after, you repay:\n\n"
        "- Resigning within 6 months of finishing it: 100% of the fee\n"
        "- Resigning between 6 and 12 months after finishing it: 50% of the fee"
    )
    # The band blanked out, the words around it are no span: "Resigning   of finishing".
    owe = "if i quit 4 months after finishing a $3,000 course do i owe the money back"
    assert find_span(repay, "yes_no", owe) == "100% of the fee"


@given(
    low=st.integers(0, 50),
    width=st.integers(1, 50),
    asked=st.integers(0, 120),
    unit=st.sampled_from(["years", "weeks", "days", "hours"]),
)
def test_a_band_holds_exactly_the_numbers_between_its_ends(
    low: int, width: int, asked: int, unit: str
) -> None:
    quantities = asked_quantities(f"what do I get after {asked} {unit}?")
    band = f"{low} to {low + width} {unit} of service: a bonus"
    inside = low <= asked <= low + width
    assert bool(held(quantities, band)) == inside
    assert ("to" not in without_held(quantities, band).split()) == inside


@given(
    low=st.integers(1, 30),
    width=st.integers(1, 30),
    asked=st.integers(0, 70),
    lead=st.sampled_from(["Resigning", "Leaving the team", "Staff", ""]),
    kind=st.sampled_from(["yes_no", "entity", "number", "date"]),
)
def test_a_span_read_on_a_band_line_is_written_in_the_quote(
    low: int, width: int, asked: int, lead: str, kind: AnswerType
) -> None:
    quote = (
        "You repay part of the fee:\n\n"
        f"- {lead} within {low} months of finishing it: 100% of the fee\n"
        f"- {lead} between {low} and {low + width} months after finishing it: 50% of the fee"
    )
    span = find_span(quote, kind, f"if i quit {asked} months after finishing do i owe it back?")
    assert span in quote
