"""Questions written against a page to look answerable by it, with one word altered: the
reply escalates instead of answering the question the page does answer (issue 24).

Each rule has a twin, the question as the page answers it, which must still be answered.
A small office corpus, indexed for real."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent.language.prefixes import prefixed_opposites, says_the_opposite
from jobs.documents import SourceDocument, StaticSource
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from tests.agent.conftest import Built, built_from, shown

OFFICE = [
    SourceDocument(
        uri="remote-work.md",
        title="Remote work",
        url="https://kb.test/remote-work",
        text="# Remote work\n\nRemote work by contractors of the Lisbon design studio became "
        "common in 2020.",
    ),
    SourceDocument(
        uri="history.md",
        title="Company history",
        url="https://kb.test/history",
        text="# Company history\n\nAfter the death of founder Ada Park in 1998, her son "
        "Leo Park took over the company.",
    ),
]


@pytest.fixture(scope="module")
async def office(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    async for result in built_from(pg_server, embedder, StaticSource("office", OFFICE), "office"):
        yield result


async def test_a_prefixed_opposite_is_not_answered_by_the_bare_word(office: Built) -> None:
    # The page says when remote work became common; "uncommon" asks of the other state.
    answer = await office.loop().answer(
        "When did remote work by contractors of the Lisbon design studio become uncommon?"
    )
    assert answer.escalate, shown(answer)


async def test_the_bare_word_asked_is_still_answered(office: Built) -> None:
    answer = await office.loop().answer(
        "When did remote work by contractors of the Lisbon design studio become common?"
    )
    assert not answer.escalate, shown(answer)
    assert answer.claims[0].span == "2020"


async def test_born_is_not_answered_by_the_date_of_a_death(office: Built) -> None:
    answer = await office.loop().answer("When was Ada Park born?")
    assert answer.escalate, shown(answer)


async def test_the_death_asked_is_still_answered(office: Built) -> None:
    answer = await office.loop().answer("When was the death of founder Ada Park?")
    assert not answer.escalate, shown(answer)
    assert answer.claims[0].span == "1998"


@pytest.mark.parametrize(
    ("question", "sentence", "opposite"),
    [
        ("How were non-local networks set up?", "Local networks were set up in 1980.", True),
        ("How were non-local networks set up?", "Non-local networks used leased lines.", False),
        ("Which marriage became uncommon?", "Marriage between the two became common.", True),
        ("Which marriage became uncommon?", "It became uncommon after 1200.", False),
        ("Which employees are non-exempt?", "Nonexempt employees earn overtime.", False),
        # Not prefixed words: the rest is no word of four letters, or the word is listed.
        ("When is the union meeting?", "The ion channel opens.", False),
        ("What happens unless I file?", "It costs less.", False),
    ],
)
def test_which_sentences_say_the_opposite(question: str, sentence: str, opposite: bool) -> None:
    assert says_the_opposite(question, sentence) is opposite


def test_prefixed_words_are_found_with_or_without_a_hyphen() -> None:
    assert prefixed_opposites("Are non-exempt or unpaid interns covered?") == [
        ("non-exempt", "exempt"),
        ("unpaid", "paid"),
    ]
