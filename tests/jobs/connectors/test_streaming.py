"""A first sync of many pages streams from the connector to the writer in batches.

The Confluence connector reads its search a page of results at a time; the indexer
settles each document as it comes, so the first batch is embedded and written while the
fake has not yet served the last page of the search (memory holds a batch, not the
space). The embedder is a recording stand-in; the indexer, the store and the connector
(through atlassian-python-api, against the strict fake) are the real ones.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from jobs.connectors.base import ConnectorContext
from jobs.connectors.confluence import ConfluenceSource
from jobs.indexing import Indexer, IndexOptions
from store.documents import DocumentRepository
from tests.conftest import HashingEmbedder
from tests.jobs.connectors.fake_confluence import FakeConfluence, Page, running_confluence
from tests.jobs.connectors.test_confluence import ENV, FAST, confluence

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
SEARCH = "/rest/api/content/search"


class RecordingEmbedder(HashingEmbedder):
    """Notes, at each batch it embeds, how many search pages the fake had served and how
    many documents the store held."""

    def __init__(self, fake: FakeConfluence, pool: asyncpg.Pool) -> None:
        super().__init__("h", 64)
        self.fake = fake
        self.pool = pool
        self.seen: list[tuple[int, int]] = []  # (search answers served, documents stored)

    async def embed_batch(self, texts: list[str]) -> Any:
        stored = await self.pool.fetchval("SELECT count(*) FROM documents")
        self.seen.append((self.fake.calls(SEARCH), stored))
        return await super().embed_batch(texts)


@pytest.fixture
async def fake() -> AsyncIterator[FakeConfluence]:
    fake = FakeConfluence()
    for n in range(30):
        body = f"<h2>Service {n}</h2><p>Restart service {n} after checking its queue.</p>"
        fake.add(Page(str(500 + n), "ENG", f"Runbook {n}", body, T0 + timedelta(minutes=n)))
    async with running_confluence(fake):
        yield fake


async def test_the_first_batch_is_written_before_the_last_search_page_is_served(
    pool: asyncpg.Pool, fake: FakeConfluence
) -> None:
    repository = DocumentRepository(pool)
    embedder = RecordingEmbedder(fake, pool)
    indexer = Indexer(repository=repository, embedder=embedder, embed_batch_size=4)
    source = ConfluenceSource(
        name="wiki",
        config=confluence(fake, page_size=5, attachments=False),
        context=ConnectorContext(credentials=ENV),
        policy=FAST,
    )
    report = await indexer.run(source, options=IndexOptions(kind="confluence"))
    assert report.documents_added == 30 and not report.failures
    assert fake.calls(SEARCH) == 6  # 30 pages, 5 per search answer
    # The first batch was embedded after the first search answers, not after the sixth,
    # and documents were already in the store while the search had answers to go.
    assert embedder.seen[0][0] <= 2
    assert any(stored > 0 and searches < 6 for searches, stored in embedder.seen)
