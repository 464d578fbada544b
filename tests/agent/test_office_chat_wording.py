"""How office chat asks, read as the pages write it (issue 24): "when are timesheets
due?" asks by when; "ot", "mgr" and "part-timers" are chat's words for overtime,
managers and part-time staff; "how much notice" asks how far ahead; what something
"charges" is an amount of money. Each rule answers its question on a small handbook
indexed for real, and its near-miss twin, asked the same way about what no page says,
still escalates. Each answerable question escalated before its rule on a set written
blind (bench/check_sets/quarry, odd-numbered questions).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent.language.questions import QuestionAnalyzer
from agent.language.spans import spells_its_type
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from store.text_analysis import TextAnalyzer
from tests.agent.conftest import Built, built_from, lead, pages_source

PAGES = [
    (
        "timesheets.md",
        "Timesheets",
        "Timesheets must be submitted by 17:00 every Friday for the current week. "
        "Overtime is not paid; approved extra hours are taken as time off in lieu.",
    ),
    (
        "site-visits.md",
        "Site visits",
        "Book every site visit with the site supervisor at least 72 hours in advance. "
        "Wear boots and a hard hat on site.",
    ),
    (
        "learning.md",
        "Learning",
        "Full-time staff complete 20 hours of training a year. Part-time staff have a "
        "target of 12 hours of training a year.",
    ),
    (
        "printing.md",
        "Printing",
        "Print jobs over 50 posters must be sent to the outside print shop. Smaller "
        "jobs are printed in the studio.",
    ),
    (
        "codes.md",
        "Time codes",
        "Non-billable hours are booked to ADM-01 (office admin), ADM-02 (bids and "
        "proposals), ADM-03 (training and conferences) or ADM-04 (leave and holidays).",
    ),
    ("canteen.md", "Canteen", "The canteen charges £3 for a hot lunch, paid by card."),
    (
        "leave.md",
        "Leave",
        "Request leave in Workday. Your line manager approves leave requests within "
        "two working days.\n\n## Leave year\n\nThe leave year runs from 1 April to 31 March.",
    ),
]


@pytest.fixture(scope="module")
async def handbook(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    source = pages_source("oc", PAGES)
    async for result in built_from(pg_server, embedder, source, "oc"):
        yield result


def test_chat_words_are_read_as_the_pages_write_them() -> None:
    analyzer = QuestionAnalyzer(TextAnalyzer())
    assert "due" not in analyzer.analyse("when are timesheets due?").key_terms
    assert "overtim" in analyzer.analyse("do we get paid ot?").key_terms
    assert "manag" in analyzer.analyse("does my mgr approve it?").key_terms
    part_timers = analyzer.analyse("how many hours do part-timers need?")
    assert "staff" in part_timers.key_terms and "timer" not in part_timers.terms
    assert {"part", "time"} <= part_timers.qualifiers  # judged as the qualifier "part-time"
    assert "notic" not in analyzer.analyse("how much notice does HR need?").key_terms
    # "notice" named as a thing, not as "how much notice", is still a term
    assert "notic" in analyzer.analyse("what is the notice period?").key_terms


async def test_due_asks_by_when(handbook: Built) -> None:
    assert (await lead(handbook, "when are timesheets due?") or "").startswith("17:00")
    assert await lead(handbook, "when are expense reports due?") is None


async def test_ot_is_overtime(handbook: Built) -> None:
    assert await lead(handbook, "do we get paid ot?") is not None
    assert await lead(handbook, "is there a monthly cap on ot hours?") is None


async def test_part_timers_are_part_time_staff(handbook: Built) -> None:
    found = await lead(handbook, "how many training hours do part-timers need?")
    assert (found or "").startswith("12 hours")
    assert await lead(handbook, "how many training hours do contractors need?") is None


async def test_how_much_notice_asks_how_far_ahead(handbook: Built) -> None:
    assert await lead(handbook, "how much notice does a site visit need?") == ("at least 72 hours")
    assert await lead(handbook, "how much notice does payroll need before a bank change?") is None


async def test_what_it_charges_is_money(handbook: Built) -> None:
    assert await lead(handbook, "how much does the canteen charge for a hot lunch?") == "£3"
    # a count ("over 50 posters") is no price: the shop's charge is not on any page
    assert await lead(handbook, "how much does the outside print shop charge per poster?") is None


async def test_a_code_is_found_by_its_spelling(handbook: Built) -> None:
    # "what is X on Y" asks what the code means where the asker met it; the embedding
    # reads the code as noise, so the unit writing it is lifted by its spelling
    assert await lead(handbook, "what is ADM-02 on clockwise?") == "bids and proposals"
    assert await lead(handbook, "what is ADM-07 on clockwise?") is None


async def test_a_date_span_says_when_something_starts(handbook: Built) -> None:
    assert await lead(handbook, "when does the leave year start?") == "1 April"
    assert await lead(handbook, "when does the bonus year start?") is None


def test_a_start_is_said_only_by_a_unit_that_says_something_starts() -> None:
    said = "The leave year runs from 1 April to 31 March."
    assert spells_its_type("1 April", "date", unit=said, start=True)
    unsaid = "Your manager approves leave requests within two working days."
    assert not spells_its_type("within two working days", "date", unit=unsaid, start=True)
    assert spells_its_type("within two working days", "date", unit=unsaid)  # "timing"
