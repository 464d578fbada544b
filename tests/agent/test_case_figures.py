"""The figure of the case a question names leads, through the whole loop on a real index:
of a quote's figures, the one whose stretch names the question's case comes first
("$95 per day for international travel" for "… for international travel?"), and the
other case's question gets the other figure (agent/language/spans.py `_numbers`). The
international case fails with the rule reverted (the first figure, $75, leads).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from jobs.documents import SourceDocument, StaticSource
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from tests.agent.conftest import Built, all_quotes_stored, built_from

PAGES = [
    SourceDocument(
        uri="travel-expenses.md",
        title="Travel expenses",
        url="https://kb.test/travel-expenses",
        text="# Travel expenses\n\n"
        "The meal allowance is $75 per day for domestic travel and $95 per day for "
        "international travel. Book flights through the travel portal at least 14 days "
        "before departure.",
    ),
]


@pytest.fixture(scope="module")
async def pages(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    async for result in built_from(pg_server, embedder, StaticSource("ac", PAGES), "ac"):
        yield result


@pytest.mark.parametrize(
    ("case", "figure"), [("international", "$95 per day"), ("domestic", "$75 per day")]
)
async def test_the_figure_of_the_case_asked_leads(pages: Built, case: str, figure: str) -> None:
    answer = await pages.loop().answer(f"how much is the meal allowance for {case} travel?")
    assert not answer.escalate, answer.gaps
    assert answer.claims[0].span == figure, [c.span for c in answer.claims]
    assert await all_quotes_stored(pages.pool, answer)
