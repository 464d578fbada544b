"""Answerable chat questions on a small knowledge base are answered; their near-miss twins
still escalate (issue 24, h22).

A small handbook of an invented employer, indexed for real. Each rule comes with a
question the pages answer, written as a chat message writes it, and a twin that asks the
same way about something no page says: the rule must answer the first without answering
the second. Each answerable question escalated before its rule (on a set written before
its failures were read, bench/check_sets/harborline).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent.language.questions import QuestionAnalyzer, answer_type
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from store.text_analysis import TextAnalyzer
from tests.agent.conftest import Built, built_from, lead, pages_source

PAGES = [
    (
        "pay.md",
        "Pay",
        "Fernwood pays monthly, on the 25th. Payslips are published in the HR "
        "portal two days before payday. Salary advances are not offered.",
    ),
    (
        "hours.md",
        "Working hours",
        "No employee may work more than 10 hours in a single day, "
        "overtime included. Overtime is paid at one and a half times the base rate.",
    ),
    (
        "wellbeing.md",
        "Wellbeing",
        "The employee assistance programme offers confidential "
        "counselling by phone at +44 20 7946 0958, day and night.",
    ),
    (
        "sickness.md",
        "Sickness",
        "Tell your manager before your shift if you are ill. From the "
        "third consecutive day of illness you need a doctor's note.",
    ),
    (
        "security.md",
        "Security",
        "Passwords must be at least 12 characters long and are changed every 90 days.",
    ),
    (
        "forklifts.md",
        "Forklifts",
        "Only certified drivers may use a forklift. Certification takes a two-day course "
        "and is renewed every three years.",
    ),
    ("travel.md", "Travel", "Book train tickets through the travel desk at least a week ahead."),
    ("leave.md", "Annual leave", "Full-time employees get 25 days of annual leave a year."),
    ("benefits.md", "Benefits", "Fernwood matches pension contributions up to 5% of salary."),
]


@pytest.fixture(scope="module")
async def handbook(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    source = pages_source("fw", PAGES)
    async for result in built_from(pg_server, embedder, source, "fw"):
        yield result


def test_chat_spells_a_question_word_without_its_apostrophe() -> None:
    analyzer = QuestionAnalyzer(TextAnalyzer())
    asked = analyzer.analyse("whats the max hours incl overtime?")
    assert asked.answer_type == "number"
    assert "what" not in asked.key_terms and "incl" not in asked.key_terms
    assert "includ" in asked.key_terms  # "incl" is "including", as the page writes it


async def test_a_chat_question_word_and_shorthand_are_read_as_written_out(
    handbook: Built,
) -> None:
    # The whole loop on chat spelling. On this small index the reply is the same without
    # the spelling rule (the terse-question rule reads "whats the max" as a number, and
    # the sentence is close enough in meaning); the analysis test above is the one that
    # fails without it, and on bench/check_sets/harborline hl-a4 escalates without it.
    assert await lead(handbook, "whats the max hours I can work in one day incl overtime pls?") == (
        "more than 10 hours"
    )
    # Asked the same way of what no page says: the topic word still counts.
    assert await lead(handbook, "whats the max hours of night shifts incl weekends?") is None


async def test_no_one_may_do_more_than_states_a_maximum(handbook: Built) -> None:
    assert await lead(handbook, "What is the maximum number of hours I can work in a day?") == (
        "more than 10 hours"
    )
    assert await lead(handbook, "What is the maximum number of sick days I can take?") is None


async def test_a_light_verbs_particle_is_part_of_the_verb(handbook: Built) -> None:
    assert await lead(handbook, "when do payslips come out?") == "two days before payday"
    assert await lead(handbook, "when do bonuses come out?") is None


def test_a_terse_question_without_a_question_word_asks_for_what_its_words_name() -> None:
    assert answer_type("min password length?") == "number"
    assert answer_type("max hours per week?") == "number"
    assert answer_type("password rules?") == "entity"


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("IT helpdesk email?", "contact"),
        ("payroll phone number?", "contact"),
        ("helpdesk after hours number?", "contact"),
        ("HR contact?", "contact"),
        # a bound before a contact noun still asks for a measure
        ("max email size?", "number"),
        # "number" before what it counts is a count, not one to call
        ("number of days off?", "entity"),
        # a question word decides as before
        ("can I email my manager?", "yes_no"),
        ("how many phone lines does reception have?", "number"),
    ],
)
def test_a_terse_question_naming_a_contact_noun_asks_for_a_contact(
    question: str, kind: str
) -> None:
    assert answer_type(question) == kind


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("wen does pay go in", "date"),
        ("wat time does the office open?", "date"),
        ("latest time to ring in sick before a night shift", "date"),
        ("what's the earliest date I can retire?", "date"),
        ("what score do u need to pass the induction quiz", "number"),
    ],
)
def test_a_question_word_as_chat_spells_it_and_a_score_or_a_bound_of_time_are_read(
    question: str, kind: str
) -> None:
    assert answer_type(question) == kind


async def test_a_terse_question_for_a_measure_is_answered_by_one(handbook: Built) -> None:
    assert await lead(handbook, "min password length?") == "at least 12 characters long"
    assert await lead(handbook, "min PIN length?") is None


async def test_is_there_a_number_to_call_asks_for_the_number(handbook: Built) -> None:
    assert answer_type("is there a number I can call for counselling?") == "contact"
    assert answer_type("is there a number limit?") == "yes_no"
    assert await lead(handbook, "is there a number I can call for counselling?") == (
        "+44 20 7946 0958"
    )
    assert await lead(handbook, "is there a number I can call for legal advice?") is None
    # "what number do I call?" asks for the one to dial, "what number of days" a count.
    assert answer_type("lost my fuel card, what number do i call") == "contact"
    assert answer_type("what number of days do I get?") == "number"
    assert await lead(handbook, "what number do i call for counselling?") == "+44 20 7946 0958"


async def test_from_the_nth_day_answers_when(handbook: Built) -> None:
    assert await lead(handbook, "when do I need a doctors note for being ill?") == (
        "From the third consecutive day"
    )
    assert await lead(handbook, "when do I need a doctors note for a dentist visit?") is None


async def test_how_often_is_answered_by_a_frequency_not_by_another_duration(
    handbook: Built,
) -> None:
    assert await lead(handbook, "how often is forklift certification renewed?") == (
        "every three years"
    )
    # The page gives the course's length, not how often it runs: no frequency, a gap.
    assert await lead(handbook, "how often is the forklift course held?") is None


async def test_a_clipped_word_stands_for_the_word_it_begins(handbook: Built) -> None:
    assert await lead(handbook, "how often do forklift certs need renewing?") == (
        "every three years"
    )
    assert await lead(handbook, "how often do crane certs need renewing?") is None
