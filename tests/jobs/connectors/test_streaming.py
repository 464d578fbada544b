"""A first sync of many pages streams from the connector to the writer in batches.

The Confluence connector reads its search a page of results at a time; the indexer
settles each document as it comes, so the first batch is embedded and written while the
fake has not yet served the last page of the search (memory holds a batch, not the
space). The embedder is a recording stand-in; the indexer, the store and the connector
(through atlassian-python-api, against the strict fake) are the real ones.

Notion's connector reads pages as each search answer arrives too (through notion-client
against its strict fake), and saves its cursor, the newest edit, only after the last.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest

from jobs.config import NotionSettings, NotionSourceConfig
from jobs.connectors.base import ConnectorContext
from jobs.connectors.confluence import ConfluenceSource
from jobs.connectors.notion import NotionSource
from jobs.documents import SourceDocument
from jobs.indexing import Indexer, IndexOptions
from store.documents import DocumentRepository
from tests.conftest import HashingEmbedder
from tests.jobs.connectors.fake_confluence import FakeConfluence, Page, running_confluence
from tests.jobs.connectors.fake_notion import TOKEN, FakeNotion, block, running
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


async def test_notion_reads_pages_while_it_pages_through_search_and_saves_its_cursor_last() -> None:
    fake = FakeNotion()
    for n in range(6):
        fake.add_page(f"Runbook {n}", [block("paragraph", f"Restart service {n} gently.")])
    async with running(fake) as base_url:
        settings = NotionSettings(base_url=base_url, page_size=2, databases=False)
        config = NotionSourceConfig(name="notion", collection="notion", settings=settings)
        source = NotionSource(
            config=config, context=ConnectorContext(credentials={"NOTION_TOKEN": TOKEN})
        )
        items = []
        async for item in source.documents():
            items.append(item)
            if len(items) < 6:  # not all read yet: no cursor to save
                assert source.new_cursor is None
    titles = [item.title for item in items if isinstance(item, SourceDocument)]
    assert sorted(titles) == [f"Runbook {n}" for n in range(6)]
    paths = [path for _, path in fake.requests]
    searches = [at for at, path in enumerate(paths) if path == "/v1/search"]
    reads = [at for at, path in enumerate(paths) if path.endswith("/children")]
    assert len(searches) == 3  # 6 pages, 2 per answer
    # The first pages' blocks were read before the last search answer was asked for.
    assert reads[0] < searches[1] and reads[-1] > searches[-1]
    # The cursor is the newest edit, which the first answer listed.
    newest = max(page.edited for page in fake.pages.values())
    assert source.new_cursor is not None
    assert source.new_cursor["since"] == newest.strftime("%Y-%m-%dT%H:%M:00.000Z")
