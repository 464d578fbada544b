"""Lists, initialisms and chat read as pages and people write them (issue 24): the item of
a list naming what is asked answers it ("Toronto and Vancouver: $250"), "these nightly
limits" state a cap, a page's "PD" is the "professional development" it spells out, and
"bc" is "because". Each has a twin the pages do not answer, which still escalates.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent.language.abbreviations import defined_abbreviations, used_abbreviations
from agent.language.questions import QuestionAnalyzer, answer_type, chat_spelled
from agent.language.spans import constraints_met
from agent.reasoners.evidence import quotable_units
from agent.sentences import SentenceSplitter
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from store.text_analysis import TextAnalyzer
from tests.agent.conftest import (
    Built,
    KnownWords,
    built_from,
    judged_answered,
    lead,
    pages_source,
    partial_quote,
)

PAGES = [
    (
        "travel.md",
        "Business Travel",
        "## Hotels\n\nThe Travel Desk books hotels within these nightly limits, before "
        "taxes:\n\n- Calgary and Halifax: $200\n- Toronto and Vancouver: $250\n"
        "- All other Canadian locations: $175\n\nIf a hotel over the limit is the only "
        "option, the Travel Desk needs written approval from your department director.",
    ),
    (
        "lab.md",
        "Soils Laboratory",
        "## Standard turnaround times\n\nCounted in business days from the test request, "
        "not from sample arrival:\n\n- Moisture content: 2 business days\n"
        "- Sieve analysis: 4 business days\n- Atterberg limits: 5 business days\n"
        "- Consolidation: 15 business days\n\nThe Lab Supervisor must accept a rush "
        "request before it is promised to a client.",
    ),
    (
        "badges.md",
        "ID Badges",
        "## Lost badges\n\nReport a lost badge to Security at ext. 5000. The first "
        "replacement badge is free; you pay $15 for a second replacement badge and $25 "
        "for any further one.",
    ),
    (
        "development.md",
        "Professional Development",
        "Each employee has a yearly professional development budget of $2,000, which "
        "covers courses, conferences and exam fees. Fill in the PD Request form at "
        "least 3 weeks before the course.",
    ),
]


@pytest.fixture(scope="module")
async def handbook(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    async for result in built_from(pg_server, embedder, pages_source("li", PAGES), "li"):
        yield result


async def test_the_item_naming_what_is_asked_answers_it(handbook: Built) -> None:
    # not the list's first figure ($200), and read under its lead-in: embedded whole,
    # the list was too far from a question about one of its lines
    assert await lead(handbook, "hotel cap in vancuver?") == "$250"
    assert await lead(handbook, "turnaround on atterberg limits?") == "5 business days"
    # no line names it: the list answers neither
    assert await lead(handbook, "turnaround on a triaxial test?") is None


def test_plural_limits_state_a_cap() -> None:
    asked = "hotel cap in vancouver?"
    assert constraints_met(asked, "books hotels within these nightly limits", "number")
    assert not constraints_met(asked, "books hotels at these nightly rates", "number")
    assert answer_type("turnaround on atterberg limits?") == "date"


def test_an_initialism_a_page_writes_beside_its_name() -> None:
    page = PAGES[3][1] + "\n" + PAGES[3][2]
    assert used_abbreviations(page) == {"PD": "professional development"}
    # "How to request" twice is no name of an "HR" the page writes
    assert used_abbreviations("## How to request\nHR says: How to request leave.") == {}


async def test_a_page_initialism_is_asked_in_lower_case(handbook: Built) -> None:
    assert await lead(handbook, "whats my pd budget?") == "$2,000"
    # an initialism no page writes names nothing of the budget
    assert await lead(handbook, "whats my cpd budget?") is None


async def test_a_number_the_asker_states_is_their_case(handbook: Built) -> None:
    # no page says "4am" or "5th": the asker's time and count are no topic the answer
    # must repeat
    asked = "lost my badge at 4am, how much do i pay for the replacement?"
    assert await lead(handbook, asked) == "$15"
    asked = "lost my badge for the 5th time, how much do i pay for the replacement?"
    assert await lead(handbook, asked) == "$15"
    # a number that names something (a year, a code) still must be said
    asked = "lost my badge in 2019, how much do i pay for the replacement?"
    assert await lead(handbook, asked) is None


async def test_the_judge_holds_no_stated_number_against_the_quotes() -> None:
    words = KnownWords({"page", "start", "late", "night", "hour"})
    quote = "If you are paged at night, you may start up to 3 hours late."
    quotes = [partial_quote(quote, {"page", "start", "late", "night"})]
    # the asker's clock time is their case: the quote need not repeat it
    assert await judged_answered("paged at 2am last night, how late can I start?", quotes, words)
    # a year names something: it is still missing
    assert not await judged_answered("paged in 2019 at night, how late can I start?", quotes, words)


async def test_quotes_of_several_pages_do_not_answer_what_no_page_speaks_of() -> None:
    # a word no page has weighed lightly enough that the quotes' share alone would answer
    words = KnownWords({"leav", "pay", "full", "salari", "sick", "call", "matern"}, unheard=2.0)
    quotes = [
        partial_quote("Sick leave: full pay for up to 10 days.", {"leav", "pay", "full"}),
        partial_quote(
            "On-call pay is paid with the month's salary.", {"pay", "salari"}, document=2
        ),
    ]
    # "paternity": no page has the word, so two pages' pay sentences do not answer it
    assert not await judged_answered("is paternity leave paid at full salary?", quotes, words)
    # a word the knowledge base has, missing from these quotes, weighs as it did
    assert await judged_answered("is maternity leave paid at full salary?", quotes, words)


def test_an_irregular_past_is_its_verb() -> None:
    analyzer = QuestionAnalyzer(TextAnalyzer())
    assert "lose" in analyzer.stems("TOIL not taken within 3 months is lost.")
    assert "take" in analyzer.stems("TOIL not taken within 3 months is lost.")
    assert analyzer.stems("paid leave") == analyzer.stems("pay leave")
    # a form of another sense is left as written: "left" is also a side
    assert "leav" not in analyzer.stems("the door on the left")


def test_a_plural_initialism_is_defined_too() -> None:
    text = "It applies to registered nurses (RNs) and licensed practical nurses (LPNs)."
    assert defined_abbreviations(text) == {
        "RN": "registered nurses",
        "LPN": "licensed practical nurses",
    }


def test_chat_words_are_read_as_meant() -> None:
    assert chat_spelled("do i get paid bc the heat is out") == (
        "do i get paid because the heat is out"
    )
    assert chat_spelled("can u book w/o approval") == "can you book without approval"
    assert chat_spelled("Part U of the form") == "Part U of the form"
    assert chat_spelled("im off tmrw, 12 ppl this yr") == "I'm off tomorrow, 12 people this year"
    assert chat_spelled("how many hrs a week, 30 mins at xmas") == (
        "how many hours a week, 30 minutes at Christmas"
    )
    assert chat_spelled("ask the HRs") == "ask the HRs"  # upper case: HR, not hours
    assert chat_spelled("swap w another nurse thru the app til friday") == (
        "swap with another nurse through the app until friday"
    )
    assert chat_spelled("when does my insurance kick in? Building W") == (
        "when does my insurance start? Building W"
    )


def test_a_sentence_pointing_back_is_quoted_with_the_one_before() -> None:
    text = (
        "The service desk is open 8:00 to 18:00 on weekdays. Outside those hours, call "
        "the after-hours line at 555-0199."
    )
    units = quotable_units(SentenceSplitter(), text)
    assert units[-1].text == text


async def test_pages_each_saying_one_word_of_the_question_do_not_answer_it_together() -> None:
    words = KnownWords({"approv", "overtim", "contractor"})
    contractors = partial_quote(
        "Contractors can be given the same equipment as staff.", {"contractor"}, document=2
    )
    fact_sheet = partial_quote("Refer to OPM's Overtime Fact Sheet.", {"overtim"})
    asked = "who approves overtime for contractors?"
    assert not await judged_answered(asked, [fact_sheet, contractors], words)
    # a hop carrying more of the question, then the page of the rest, still answers
    approved = partial_quote("Overtime is approved by your supervisor.", {"overtim", "approv"})
    assert await judged_answered(asked, [approved, contractors], words)
