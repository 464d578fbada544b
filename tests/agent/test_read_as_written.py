"""A question's words read as the pages write them (issue 24): "oncall" is the pages'
"on-call", "grads" their "graduates" wherever coverage is judged, a "budget" the sum a
page states, and a sentence saying every word of a yes/no question says the yes. A word
one letter longer is another word ("driver" is no "drive"), so the near-miss twin of each
rule, asked the same way about what no page says, still escalates.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent.language.questions import chat_spelled
from agent.language.ranges import asked_quantities, held
from agent.language.typos import clipped, written_as_two
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
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
        "oncall.md",
        "On-call",
        "Every engineer joins the on-call rotation after their first 90 days. A shift "
        "lasts one week and hands over on Mondays. You can swap a shift with a teammate "
        "as long as you update the schedule in PagerDuty before the handover.",
    ),
    (
        "cpd.md",
        "CPD",
        "Each year the practice gives you a CPD allowance:\n\n"
        "- Vets: £1,200 and 5 paid CPD days.\n"
        "- Nurses: £600 and 3 paid CPD days.\n\n"
        "New graduates get an extra 2 paid CPD days in their first year. Vets log "
        "their CPD hours in the CPD portal; the RCVS asks vets for 35 hours of CPD a year.",
    ),
    (
        "mileage.md",
        "Mileage",
        "## House visits\n\nMileage is paid at 45p a mile. If two staff travel in the "
        "same car, only the driver may claim mileage.",
    ),
    (
        "courses.md",
        "Paying for courses",
        "Complete the course request form with the course name, dates and cost. The office "
        "manager signs off courses that cost up to £500. A course that costs more than "
        "£500 also needs sign-off from the Finance Director.",
    ),
    (
        "office.md",
        "The office",
        "Bicycles can be parked in the basement garage, next to the lifts.",
    ),
    (
        "laptops.md",
        "Laptops",
        "IT issues every new starter a laptop on their first day, and vets a tablet for "
        "CPD courses. Work laptops are never shared. Lost laptops are reported to the "
        "service desk within 24 hours.\n\n## Equipment\n\nIT runs a training session on "
        "security for every starter. A replacement laptop costs £900 per person.",
    ),
]


@pytest.fixture(scope="module")
async def handbook(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    async for result in built_from(pg_server, embedder, pages_source("rw", PAGES), "rw"):
        yield result


def test_a_word_the_pages_write_as_two() -> None:
    assert written_as_two("oncall", "Join the on-call rotation.") == ("on", "call")
    assert written_as_two("helpdesk", "Ask the help desk.") == ("help", "desk")
    # only side by side: two words the pages have apart are not the asker's one word
    assert written_as_two("oncall", "Call us on Monday.") is None
    assert written_as_two("oncall", "Do not call on weekends.") is None


def test_a_clip_is_no_doer() -> None:
    assert clipped("grad", frozenset({"graduat"})) == "graduat"
    assert clipped("draw", frozenset({"drawn"})) == "drawn"  # the same word
    assert clipped("drive", frozenset({"driver"})) is None  # who drives


async def test_a_word_written_as_two_is_read_as_the_pages_write_it(handbook: Built) -> None:
    assert await lead(handbook, "can I swap my oncall week with someone?") is not None
    assert await lead(handbook, "can I swap my standby week with someone?") is None


async def test_a_budget_is_the_sum_a_page_states(handbook: Built) -> None:
    assert "£1,200" in (await lead(handbook, "whats the cpd budget for a vet") or "")
    assert await lead(handbook, "whats the conference budget for a vet") is None
    # an amount of something else is no budget of what is asked: every other word of
    # the question must be said
    assert await lead(handbook, "what's the laptop budget per person?") == "£900 per person"
    assert await lead(handbook, "what's the laptop training budget per person?") is None


async def test_a_yes_no_said_in_full_by_a_sentence(handbook: Built) -> None:
    # "grads" is read as the quote's "graduates" where the quote is judged, and the
    # sentence saying every word asked says the yes
    found = await lead(handbook, "do new grads get any extra cpd days")
    assert found == "New graduates get an extra 2 paid CPD days in their first year."
    assert await lead(handbook, "do new locums get any extra cpd days") is None


async def test_a_word_one_letter_longer_is_another_word(handbook: Built) -> None:
    # "driving" is no typo of the "driver" the page writes: the page says nothing of
    # whether driving time is paid as working time
    assert await lead(handbook, "is driving time on house visits paid as working time?") is None


async def test_the_judge_reads_typos_as_the_quotes_write_them() -> None:
    words = KnownWords({"new", "graduat", "get", "paid", "cpd", "day", "vet", "week"})
    # two partial quotes, as the scorer judged them: its coverage has the quote's
    # "graduat" for the question's "grads"
    quotes = [
        partial_quote("New graduates get an extra week.", {"new", "graduat", "get"}),
        partial_quote("Vets get 5 paid CPD days.", {"pay", "cpd", "day", "get"}),
    ]
    # (read as "grad", it is missing: one of two rare words, and the share falls short)
    assert await judged_answered("how many paid cpd days do new grads get?", quotes, words)


def test_a_sum_is_held_by_a_threshold() -> None:
    asked = asked_quantities("my drawer was $8 short at close, who do i tell")
    assert held(asked, "A drawer more than $5 over or short is reported.") == {"8"}
    assert not held(asked, "A drawer more than $10 over or short is reported.")
    assert not held(asked, "Anything above £5 is reported.")  # another currency
    assert held(asked_quantities("is $1,200 ok?"), "Over $1,000 needs a quote.") == {"1,200"}
    assert chat_spelled("a course that costs about 800 quid?") == "a course that costs about £800?"
    assert chat_spelled("can I lift 50 pounds?") == "can I lift 50 pounds?"  # a weight


async def test_who_signs_off_depends_on_the_sum(handbook: Built) -> None:
    # the sum is the condition of a "who" question, not an amount its answer must hold
    above = await lead(handbook, "who needs to sign off a course that costs about 800 quid?")
    assert above == "the Finance Director"
    below = await lead(handbook, "who needs to sign off a course that costs about 300 quid?")
    assert below == "The office manager"


async def test_a_word_no_page_has_is_read_as_the_same_thing_said_otherwise(
    handbook: Built,
) -> None:
    # "bike" embeds as close to the page's "bicycles" as a spelling; "motorbike" is
    # another vehicle, as far from it as the siblings a near miss asks about
    assert await lead(handbook, "Where can I park my bike?") == "the basement garage"
    assert await lead(handbook, "Where can I park my motorbike?") is None


def test_a_long_run_of_digits_is_read_once() -> None:
    # one pass over a hostile run of digits and commas (it was read once per digit)
    spelled = chat_spelled("$" + "1," * 20_000 + " quid")
    assert "quid" not in spelled and spelled.startswith("$£1,1,")
    # a sum past any float is still above $5
    assert len(held(asked_quantities("$" + "1," * 20_000), "over $5")) == 1
