"""A sentence whose heading carries the topic ("## Core hours" > "Everyone is expected to
be available between 10:00 and 15:00") answers the question the heading names, and a
letters-and-digits word ("401k", "BSL2") is read as the page writes it apart ("401(k)",
"BSL-2"), being listed answers a yes/no question ("is Juneteenth a holiday?"), and a
name's "Jr." ends no sentence; each answerable question has a near-miss twin that must
still escalate (issue 24: answerable questions escalated on small knowledge bases)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent.language.questions import chat_spelled
from agent.language.spans import find_span
from agent.language.typos import split_alphanumeric
from agent.sentences import sentences
from jobs.documents import SourceDocument, StaticSource
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from tests.agent.conftest import Built, all_quotes_stored, built_from

PAGES = [
    SourceDocument(
        uri="remote.md",
        title="Remote and hybrid work",
        url="https://kb.test/remote",
        text="# Remote and hybrid work\n\nMost lab work has to happen on site.\n\n"
        "## Core hours\n\nEveryone is expected to be available between 10:00 and 15:00 "
        "Eastern time, whether on site or remote.\n\n## Internet\n\nHybrid employees can "
        "claim up to $50 a month towards home internet.",
    ),
    SourceDocument(
        uri="benefits.md",
        title="Benefits",
        url="https://kb.test/benefits",
        text="# Benefits\n\n## Health insurance\n\nWe offer two medical plans through Blue "
        "Harbor Health.\n\n## 401(k)\n\nYou can join the 401(k) plan from your first "
        "paycheck. Tidewater matches 100% of the first 4% of salary you contribute.",
    ),
    SourceDocument(
        uri="access.md",
        title="Lab access",
        url="https://kb.test/access",
        text="# Lab access\n\nAccess to the BSL-2 suite needs the Biosafety Level 2 "
        "training, which is held on the first Wednesday of every month.",
    ),
    SourceDocument(
        uri="time-off.md",
        title="Time off",
        url="https://kb.test/time-off",
        text="# Time off\n\n## Sick time\n\nEvery employee gets 10 sick days a year. A "
        "doctor's note is needed only for absences of more than three consecutive "
        "working days.",
    ),
    SourceDocument(
        uri="holidays.md",
        title="Holidays",
        url="https://kb.test/holidays",
        text="# Holidays\n\nTidewater observes 11 paid holidays: New Year's Day, Martin "
        "Luther King Jr. Day, Presidents' Day, Memorial Day, Juneteenth, Independence Day, "
        "Labor Day, Thanksgiving and the day after, Christmas Eve and Christmas Day.",
    ),
]


@pytest.fixture(scope="module")
async def pages(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    async for result in built_from(pg_server, embedder, StaticSource("kb", PAGES), "kb"):
        yield result


@pytest.mark.parametrize(
    ("question", "quoted"),
    [
        ("what are core hours", "between 10:00 and 15:00"),
        ("what's the 401k match?", "matches 100% of the first 4%"),
        ("when is the BSL2 training held?", "first Wednesday of every month"),
        ("is juneteenth a holiday for us?", "Juneteenth"),
    ],
)
async def test_a_sentence_under_the_heading_the_question_names_answers_it(
    pages: Built, question: str, quoted: str
) -> None:
    answer = await pages.loop().answer(question)
    assert not answer.escalate, answer.gaps
    assert any(quoted in c.quote for c in answer.claims)
    assert await all_quotes_stored(pages.pool, answer)


@pytest.mark.parametrize(
    "question",
    [
        "what are core hours in the Singapore office?",
        "what's the 401k match for interns?",
        "when is the BSL3 training held?",
        "is columbus day a holiday for us?",
    ],
)
async def test_a_heading_does_not_lift_a_near_miss(pages: Built, question: str) -> None:
    answer = await pages.loop().answer(question)
    assert answer.escalate, [c.quote for c in answer.claims]


def test_a_letters_and_digits_word_stands_for_the_part_the_pages_write_apart() -> None:
    written = " bsl 2 suit 401 k plan covid 19 test "

    def apart(parts: list[str]) -> bool:
        return f" {' '.join(parts)} " in written

    assert split_alphanumeric("bsl2", apart) == "bsl"
    assert split_alphanumeric("401k", apart) == "401"  # "k" alone is no word
    assert split_alphanumeric("covid19", apart) == "covid"
    assert split_alphanumeric("bsl3", apart) is None  # the pages write "bsl 2", not "bsl 3"
    assert split_alphanumeric("hello", apart) is None
    assert split_alphanumeric("2024", apart) is None


def test_a_duration_may_carry_two_kind_words() -> None:
    quote = "A doctor's note is needed only for absences of more than three consecutive "
    quote += "working days."
    assert find_span(quote, "date", "when do I need a doctors note?") == (
        "three consecutive working days"
    )


@pytest.mark.parametrize(
    ("question", "span"),
    [
        ("is juneteenth a holiday for us?", "Tidewater observes 11 paid holidays"),
        ("do we get christmas eve off?", "Tidewater observes 11 paid holidays"),
        ("is columbus day a holiday?", ""),  # "day" is in many items: it picks none
        ("is good friday a holiday?", ""),
    ],
)
def test_being_listed_answers_a_yes_no_question(question: str, span: str) -> None:
    quote = (
        "Tidewater observes 11 paid holidays: New Year's Day, Martin Luther King Jr. Day, "
        "Presidents' Day, Memorial Day, Juneteenth, Independence Day, Labor Day, "
        "Thanksgiving and the day after, Christmas Eve and Christmas Day."
    )
    assert find_span(quote, "yes_no", question) == span


def test_a_name_suffix_does_not_end_a_sentence() -> None:
    text = "We observe Martin Luther King Jr. Day and Memorial Day. "
    text += "Offices close early the day before."
    assert [u.text for u in sentences(text)] == [
        "We observe Martin Luther King Jr. Day and Memorial Day.",
        "Offices close early the day before.",
    ]


def test_chat_spells_work_from_home_as_wfh() -> None:
    assert chat_spelled("can i WFH on fridays?") == "can i work from home on fridays?"
