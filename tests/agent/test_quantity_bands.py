"""A quantity the question states ("after 12 years") is met by the page's band that holds
it ("10 to 14 years of service"), and the reply leads with that band's answer; a number
no band holds is still a gap (issue 24: a constraint unmet means the sub-question is
one)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.language.ranges import asked_quantities, bounded, held, without_held
from agent.language.spans import find_span
from jobs.documents import SourceDocument, StaticSource
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from tests.agent.conftest import Built, built_from

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
    assert not held(four, "more than 4 years")  # the bound itself is left out
    assert not held(four, "5 to 9 years")
    assert not held(four, "3 to 6 weeks")  # another unit
    assert not held(asked_quantities("is GS-13 paid more than 4 years?"), "GS-12 to GS-14")


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
