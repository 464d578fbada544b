"""A sentence that sends the reader to another page ("follow the instructions on the
Software page", "see the Timesheets page") says where the steps are, not what they are:
it is no answer to "how do I …?", and the page it points to, when read, answers. A
question of how a thing is done ("how is Christmas leave decided?") is answered by what it
is done by ("allocated by a ballot"), which no imperative says."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent.language.spans import find_span
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from tests.agent.conftest import Built, built_from, lead, pages_source

PAGES = [
    (
        "accessibility.md",
        "Accessibility at work",
        "## Assistive software\n\nScreen readers and captioning tools are installed on "
        "request. If you use other software that is not listed here, follow the "
        "instructions on the [Software](https://kb.test/software.md) page to check whether "
        "it is already approved, and how to request it.",
    ),
    (
        "software.md",
        "Software purchases",
        "## Approved software\n\nSearch the IT Standards list in the Orbit catalogue to "
        "check whether software is approved for use. If it is not listed, submit a "
        "Software Review Request to the IT service desk.",
    ),
]


@pytest.fixture(scope="module")
async def site(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    source = pages_source("pointers", PAGES)
    async for result in built_from(pg_server, embedder, source, "pointers"):
        yield result


async def test_the_page_pointed_to_answers_not_the_pointer(site: Built) -> None:
    # The pointer repeats every word of the question, so it outscored the steps it
    # points to and led the reply with "follow the instructions on the Software page".
    found = await lead(site, "how do I check whether some software is already approved?")
    assert found is not None and "Orbit catalogue" in found


@pytest.mark.parametrize(
    "sentence",
    [
        "If you use other tools, follow the instructions on the [Software](https://kb.test/s)"
        " page to check whether they are approved.",
        "See the Timesheets page.",
        "For the forms, refer to [the travel guide](https://kb.test/t) for details.",
        "Check the Holidays page for this year's dates.",
    ],
)
def test_a_pointer_to_a_page_is_no_steps(sentence: str) -> None:
    assert find_span(sentence, "procedure", "how do I do it?") == ""


@pytest.mark.parametrize(
    ("sentence", "step"),
    [
        # a step beside a pointer is still a step
        ("Submit the form to HR; see the Forms page for the template.", "Submit the form"),
        # the page is not named: a place on the page, not a pointer to another
        ("Check the box at the bottom of the page.", "Check the box"),
        # an instruction to read a thing that is not a page
        ("Read the safety card before you start.", "Read the safety card"),
    ],
)
def test_a_step_that_is_no_pointer_stays_a_step(sentence: str, step: str) -> None:
    assert find_span(sentence, "procedure", "how do I do it?").startswith(step)


def test_what_a_page_tells_how_to_do_is_no_step() -> None:
    # "… and how to request it" is what the page pointed to tells, not an instruction.
    quote = "The Software page says whether a tool is approved, and how to request it."
    assert find_span(quote, "procedure", "how do I get a tool approved?") == ""


@pytest.mark.parametrize(
    ("question", "quote", "span"),
    [
        (
            "how is xmas leave decided",
            "Leave between 20 December and 3 January is allocated by a ballot held in September.",
            "allocated by a ballot held in September",
        ),
        (
            "how is holiday pay worked out for bank staff",
            "Bank staff have no set allowance; holiday pay is accrued at 12.07% of hours worked.",
            "accrued at 12.07% of hours worked",
        ),
    ],
)
def test_how_a_thing_is_done_is_answered_by_what_it_is_done_by(
    question: str, quote: str, span: str
) -> None:
    # Without a pointer to lead with ("how to book leave" on the page's opening line),
    # such a question had no span: no step is written in the imperative.
    assert find_span(quote, "procedure", question) == span


def test_how_to_do_a_thing_is_not_answered_by_how_another_is_done() -> None:
    # "how do I …?" asks for steps; a statement of how the studio does a thing is none.
    quote = "Leave over Christmas is allocated by a ballot held in September."
    assert find_span(quote, "procedure", "how do I book leave?") == ""
