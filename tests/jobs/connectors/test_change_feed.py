"""The change-feed framework through the real reindex: cursors, a killed run, deletions,
and a document moving collection. The connector is a tiny in-memory feed (feed.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import asyncpg
import numpy as np
import pytest

from jobs.config import SourceConfig, WebSettings, WebSourceConfig
from jobs.connectors.base import ConnectorContext
from jobs.documents import Source
from jobs.indexing import Indexer
from jobs.reindex import ReindexJob
from store.corpus import CorpusReader
from store.documents import DocumentRepository
from store.filters import ChunkFilter
from store.index_runs import IndexRunRepository
from store.keyword_search import KeywordOptions, KeywordSearch
from store.source_cursors import SourceCursorRepository
from store.vector_search import VectorSearch
from tests.conftest import HashingEmbedder
from tests.jobs.connectors.feed import FeedSource, FeedSystem, Page

# Any config will do: the builder below ignores it and builds the feed connector.
CONFIG = WebSourceConfig(
    name="feed", collection="everyone", settings=WebSettings(urls=["https://feed.example/"])
)


class Killed(BaseException):
    """What SIGKILL looks like from inside: nothing after it runs, no handler catches it
    (BaseException, so the reindex's own `except Exception` does not)."""


class DyingEmbedder(HashingEmbedder):
    """Embeds `lives` batches, then the process 'dies'."""

    def __init__(self, lives: int) -> None:
        super().__init__("hashing", 64)
        self.lives = lives

    async def embed_batch(self, texts: list[str]):  # type: ignore[no-untyped-def]
        if self.lives == 0:
            raise Killed
        self.lives -= 1
        return await super().embed_batch(texts)


def job_for(
    pool: asyncpg.Pool, system: FeedSystem, embedder: HashingEmbedder, built: list[FeedSource]
) -> ReindexJob:
    def build(config: SourceConfig, **kwargs: Any) -> Source:
        context = ConnectorContext(stored=kwargs["stored"], cursor=kwargs["cursor"])
        source = FeedSource(name=config.name, context=context, system=system)
        built.append(source)
        return source

    documents = DocumentRepository(pool)
    return ReindexJob(
        pool=pool,
        # One chunk per batch: a run dies between documents, as a SIGKILL would.
        indexer=Indexer(repository=documents, embedder=embedder, embed_batch_size=1),
        documents=documents,
        runs=IndexRunRepository(pool),
        base_dir=Path.cwd(),
        build=build,
    )


def three_pages() -> FeedSystem:
    system = FeedSystem()
    system.put("a", Page("Alpha", "Alpha pages talk about apples and orchards."))
    system.put("b", Page("Beta", "Beta pages talk about bicycles and brakes."))
    system.put("c", Page("Gamma", "Gamma pages talk about gardens and gates."))
    return system


async def stored_texts(pool: asyncpg.Pool) -> dict[str, str]:
    rows = await pool.fetch("SELECT uri, text FROM documents")
    return {r["uri"]: r["text"] for r in rows}


async def test_the_cursor_is_saved_after_a_run_and_a_quiet_run_embeds_nothing(
    pool: asyncpg.Pool,
) -> None:
    system, built, embedder = three_pages(), [], HashingEmbedder("hashing", 64)
    job = job_for(pool, system, embedder, built)

    first = (await job.run([CONFIG])).reports[0]
    assert first.documents_added == 3
    saved = await SourceCursorRepository(pool).get("feed")
    assert saved is not None and saved.cursor == {"seq": 3, "retry": []}

    embedded = embedder.texts_embedded
    quiet = (await job.run([CONFIG])).reports[0]
    assert system.asked == [None, 3]  # the second run asked only for what changed after 3
    assert quiet.documents_unchanged == 3 and not quiet.changed
    assert embedder.texts_embedded == embedded


async def test_a_run_killed_mid_way_keeps_the_old_cursor_and_the_next_embeds_only_the_rest(
    pool: asyncpg.Pool,
) -> None:
    system, built = three_pages(), []
    await job_for(pool, system, HashingEmbedder("hashing", 64), built).run([CONFIG])
    for page_id in ("a", "b", "c"):
        system.edit(page_id, text=f"Page {page_id} was rewritten with new words: {page_id * 3}.")

    with pytest.raises(Killed):
        await job_for(pool, system, DyingEmbedder(lives=1), built).run([CONFIG])
    # One edited document made it in, whole; the others are still their old selves.
    texts = await stored_texts(pool)
    assert sum("rewritten" in t for t in texts.values()) == 1
    cursor = await SourceCursorRepository(pool).get("feed")
    assert cursor is not None and cursor.cursor["seq"] == 3  # not moved past unwritten edits

    resumed = HashingEmbedder("hashing", 64)
    report = (await job_for(pool, system, resumed, built).run([CONFIG])).reports[0]
    assert system.asked[-1] == 3  # resumed from the old cursor
    assert all("rewritten" in t for t in (await stored_texts(pool)).values())
    assert report.chunks_embedded == resumed.texts_embedded == 2  # not the one written
    saved = await SourceCursorRepository(pool).get("feed")
    assert saved is not None and saved.cursor["seq"] == 6


async def test_deleted_pages_go_unreadable_ones_stay_and_are_asked_for_again(
    pool: asyncpg.Pool,
) -> None:
    system, built = three_pages(), []
    job = job_for(pool, system, HashingEmbedder("hashing", 64), built)
    await job.run([CONFIG])
    system.edit("a", deleted=True)
    system.edit("b", unreadable=True, text="Beta, edited but unreadable for now.")

    report = (await job.run([CONFIG])).reports[0]
    assert report.documents_deleted == 1 and report.documents_failed == 1
    assert set(await stored_texts(pool)) == {"b", "c"}  # b's old copy is kept
    runs = await IndexRunRepository(pool).latest(limit=1)
    assert runs[0].status == "partial"

    system.pages["b"].unreadable = False  # readable again, without a new edit
    report = (await job.run([CONFIG])).reports[0]
    assert report.documents_updated == 1
    assert (await stored_texts(pool))["b"] == "Beta, edited but unreadable for now."


async def test_a_page_moving_collection_moves_in_both_searches_without_re_embedding(
    pool: asyncpg.Pool,
) -> None:
    system, built, embedder = FeedSystem(), [], HashingEmbedder("hashing", 64)
    system.put("plan", Page("Plan", "The launch plan names the rocket Zephyr.", "engineering"))
    # Filler, so BM25 gives the query's words a positive weight (idf > 0).
    for n, topic in enumerate(("soup on Fridays", "parking permits", "holiday calendar")):
        system.put(f"page-{n}", Page(topic.title(), f"This page is about {topic}."))
    job = job_for(pool, system, embedder, built)
    await job.run([CONFIG])
    assert await collections_seeing(pool, "rocket Zephyr") == {"engineering"}

    embedded = embedder.texts_embedded
    system.edit("plan", collection="leadership")  # its permissions changed, not its text
    report = (await job.run([CONFIG])).reports[0]
    assert report.documents_updated == 1 and embedder.texts_embedded == embedded
    assert await collections_seeing(pool, "rocket Zephyr") == {"leadership"}

    system.edit("plan", collection=None)  # back to the source's own collection
    await job.run([CONFIG])
    assert await collections_seeing(pool, "rocket Zephyr") == {"everyone"}


async def collections_seeing(pool: asyncpg.Pool, query: str) -> set[str]:
    """The collections in which both searches find the Plan page for `query`."""
    embedder = HashingEmbedder("hashing", 64)
    vector = (await embedder.embed_batch([query]))[0].astype(np.float32)
    keyword = KeywordSearch(CorpusReader(pool), options=KeywordOptions(serve_stale=False))
    seen = set()
    for name in ("everyone", "engineering", "leadership"):
        where = ChunkFilter(collections=[name])
        by_words = {h.title: h.collection for h in await keyword.search(query, where=where)}
        by_vector = {
            h.title: h.collection for h in await VectorSearch(pool).nearest(vector, where=where)
        }
        assert ("Plan" in by_words) == ("Plan" in by_vector), (name, by_words, by_vector)
        if "Plan" in by_words:
            assert by_words["Plan"] == by_vector["Plan"] == name
            seen.add(name)
    return seen
