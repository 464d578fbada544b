"""A unit naming the question's noun with another count or ordinal ("your second day" for
"my third day", "the fourth session" for "the fifth") is about another member of the
series: it answers nothing, while the member asked for is still found (issue 24)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from jobs.documents import SourceDocument, StaticSource
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from tests.agent.conftest import Built, built_from

PAGES = [
    SourceDocument(
        uri="first-week.md",
        title="Your first week",
        url="https://kb.test/first-week",
        text="# Your first week\n\nOn your first day, pick up your laptop at the IT desk on "
        "floor 2. On your second day, meet your onboarding buddy at 10:00 in the lobby.",
    ),
    SourceDocument(
        uri="reviews.md",
        title="Performance reviews",
        url="https://kb.test/reviews",
        text="# Performance reviews\n\nThe first review is held after 90 days, with your "
        "manager. The second review is held at the end of the first year, with a panel "
        "of two senior staff.",
    ),
    SourceDocument(
        uri="training.md",
        title="Safety training",
        url="https://kb.test/training",
        text="# Safety training\n\nThe first session starts at 09:00 in room 4. The second "
        "session starts at 13:30 in room 4. The third session is held online, at a time "
        "your trainer sets.",
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
    ("question", "member"),
    [
        ("what time do I meet my buddy on my second day?", "second day"),
        ("what time does the second training session start?", "second session"),
    ],
)
async def test_the_member_asked_for_is_found(pages: Built, question: str, member: str) -> None:
    answer = await pages.loop().answer(question)
    assert not answer.escalate, answer.gaps
    assert member in answer.claims[0].quote


@pytest.mark.parametrize(
    "question",
    [
        "what time do I meet my buddy on my third day?",
        "who holds the third review?",
        "what time does the fourth safety training session start?",
    ],
)
async def test_another_member_of_the_series_answers_nothing(pages: Built, question: str) -> None:
    answer = await pages.loop().answer(question)
    assert answer.escalate, [c.quote for c in answer.claims]
