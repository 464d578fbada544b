"""An initialism written with dots ("D.C.") is the word written without them ("DC"):
in the keyword index, in what a quote is judged to say, and in the span a reply leads
with. Before, "D.C." left no word at all (its letters are too short to keep), so "the
DC office" was never said by the page "Washington, D.C.", and a span stopped at its
full stop ("There are maps of the D.C")."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from tests.agent.conftest import Built, built_from, pages_source

PAGES = [
    (
        "washington-dc.md",
        "Washington, D.C.",
        "## Getting around\n\nThere are maps of the D.C. office in every elevator lobby. "
        "Visitors sign in at the front desk.\n\n"
        "## Gym and lockers\n\nThe gym is located in the basement. Bring your badge: you "
        "need it to get back in.",
    ),
    (
        "san-francisco.md",
        "San Francisco",
        "## Amenities\n\nThe SF office has bike parking next to the loading dock. There "
        "is no gym in the building.",
    ),
]


@pytest.fixture(scope="module")
async def offices(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    async for result in built_from(pg_server, embedder, pages_source("of", PAGES), "of"):
        yield result


async def test_the_dc_office_is_the_page_of_washington_dc(offices: Built) -> None:
    answer = await offices.loop().answer("is there a gym at the DC office?")
    assert not answer.escalate, answer.gaps
    assert "The gym is located in the basement." in [c.quote for c in answer.claims]
    assert all(c.url.endswith("washington-dc.md") for c in answer.citations)


async def test_a_span_runs_past_the_full_stop_of_an_initialism(offices: Built) -> None:
    answer = await offices.loop().answer("are there maps of the DC office?")
    assert not answer.escalate, answer.gaps
    spans = [c.span for c in answer.claims if c.span]
    assert spans and spans[0].startswith("There are maps of the D.C. office"), spans
