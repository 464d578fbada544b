"""Passages on the question's topic that don't answer it: the reply escalates instead of
passing a place, a heading or the question's own words off as the answer (issue 24).

A three-page news corpus, indexed for real: each page speaks of what a question asks
about, none says the answer."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent.language.spans import find_span
from jobs.documents import SourceDocument, StaticSource
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from tests.agent.conftest import Built, built_from, shown

NEWS = [
    SourceDocument(
        uri="nobel.md",
        title="Nobel Prize in Physics",
        url="https://news.test/nobel",
        text="# Nobel Prize in Physics\n\nThe Nobel Prize in Physics 2022 was announced in "
        "Stockholm on 4 October.",
    ),
    SourceDocument(
        uri="vanguard-board.md",
        title="Vanguard leadership",
        url="https://news.test/vanguard-board",
        text="# Vanguard leadership\n\nVanguard: the board met in March to discuss the "
        "search for a new CEO.",
    ),
    SourceDocument(
        uri="vanguard-meet.md",
        title="Meet the new CEO of Vanguard",
        url="https://news.test/vanguard-meet",
        text="# Meet the new CEO of Vanguard\n\nMeet the new CEO of Vanguard at the "
        "investor day next week.",
    ),
]


@pytest.fixture(scope="module")
async def news(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    async for result in built_from(pg_server, embedder, StaticSource("news", NEWS), "news"):
        yield result


async def test_a_place_after_in_is_not_who_won(news: Built) -> None:
    # "announced in Stockholm on 4 October": a name after in/at/near is a place, and a
    # month is a date; neither is the winner a "who" question asks for.
    answer = await news.loop().answer("Who won the Nobel Prize in Physics 2022?")
    assert answer.escalate, shown(answer)
    assert "Stockholm" not in [c.span for c in answer.claims]


@pytest.mark.parametrize(
    ("quote", "question", "span"),
    [
        # A role phrase never runs across a colon: "Vanguard:" is the heading's subject.
        (
            "Vanguard: the board met in March to discuss the search for a new CEO.",
            "Who is the new CEO of Vanguard?",
            "the board",
        ),
        (
            "The Nobel Prize in Physics 2022 was announced in Stockholm on 4 October.",
            "Who won the Nobel Prize in Physics 2022?",
            "",
        ),
        # A quote that only restates the question's words holds no answer span.
        (
            "Meet the new CEO of Vanguard at the investor day next week.",
            "Who is the new CEO of Vanguard?",
            "",
        ),
        # A name that is not after a preposition of place, or inside a date, still answers.
        (
            "The prize was awarded to Alain Aspect on 4 October.",
            "Who won the prize?",
            "Alain Aspect",
        ),
        (
            "A message from Mirela Voss opened the meeting.",
            "Who opened the meeting?",
            "Mirela Voss",
        ),
        (
            "Approval from your first-line supervisor is needed.",
            "Who approves leave?",
            "your first-line supervisor",
        ),
    ],
)
def test_person_spans(quote: str, question: str, span: str) -> None:
    assert find_span(quote, "person", question) == span
