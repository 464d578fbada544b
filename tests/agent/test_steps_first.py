"""For a procedure question, the answering page's steps take a place before its sentences
that only point elsewhere (agent/reasoners/steps_first.py), through the whole loop on a
real index; a near miss on the same page stays escalated. Fails with the rule reverted.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent.loop import AgentLoop
from agent.reasoners.extractive import ExtractiveOptions
from agent.reasoners.steps_first import holds_steps
from jobs.documents import SourceDocument, StaticSource
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from tests.agent.conftest import Built, all_quotes_stored, built_from

PAGES = [
    SourceDocument(
        uri="captioning.md",
        title="Captioning",
        url="https://kb.test/captioning",
        text="# Captioning\n\n"
        "Visit the captioning documentation page for further details on how to order "
        "captioning.\n\n"
        "Visit the captioning help page for more on ordering live captioning in meetings."
        "\n\n"
        "To access captioning services:\n\n"
        "- Send an email at least 12 hours before the meeting to captions@kb.test to "
        "order the captioning.\n"
        "- Include the meeting link and its length.\n",
    ),
    SourceDocument(
        uri="meetings.md",
        title="Meetings",
        url="https://kb.test/meetings",
        text="# Meetings\n\nBook meeting rooms through the room calendar.",
    ),
]


@pytest.fixture(scope="module")
async def pages(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    async for result in built_from(pg_server, embedder, StaticSource("sf", PAGES), "sf"):
        yield result


def _two_places(pages: Built) -> AgentLoop:
    """Two places per sub-question: which quote takes the second is the rule's choice."""
    return pages.loop(reasoner=pages.extractive(ExtractiveOptions(claims_per_question=2)))


async def test_the_steps_of_the_answering_page_take_a_place_before_pointers(
    pages: Built,
) -> None:
    answer = await _two_places(pages).answer("how do I order captioning?")
    assert not answer.escalate, answer.gaps
    quotes = [c.quote for c in answer.claims]
    assert any(holds_steps(q) and "captions@kb.test" in q for q in quotes), quotes
    assert await all_quotes_stored(pages.pool, answer)


async def test_a_near_miss_on_the_steps_page_stays_escalated(pages: Built) -> None:
    answer = await _two_places(pages).answer("how much does captioning cost per hour?")
    assert answer.escalate


def test_a_lead_in_with_its_list_holds_steps_and_a_sentence_does_not() -> None:
    assert holds_steps("To order captioning:\n\n- Send an email.\n- Include the link.")
    assert holds_steps("Steps:\n1. Open the form")
    assert not holds_steps("Visit the page: it has the details.")
