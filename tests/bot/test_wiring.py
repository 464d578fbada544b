"""The Runtime's wiring: what a process keeps between calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import asyncpg

from bot.settings import Settings
from bot.wiring import open_runtime
from jobs.documents import SourceDocument, StaticSource
from jobs.indexing import Indexer, IndexOptions
from store.documents import DocumentRepository
from tests.bot.slack.conftest import index_fixture_corpus, runtime_on


async def test_a_runtime_warms_every_sentence_at_first_then_only_those_of_changed_documents(
    pool: asyncpg.Pool, embedder: Any
) -> None:
    await index_fixture_corpus(pool, embedder)
    runtime = await runtime_on(pool, embedder)
    first = await runtime.warm_sentences()
    assert first.read == "full" and first.documents == 3
    added = SourceDocument(
        uri="parking.md",
        title="Parking",
        url="https://kb.test/parking",
        text="# Parking\n\nThe car park behind building B opens at 7am.",
    )
    indexer = Indexer(repository=DocumentRepository(pool), embedder=embedder)
    await indexer.run(StaticSource("notes", [added]), options=IndexOptions(collection="notes"))
    again = await runtime.warm_sentences()
    assert (again.read, again.documents) == ("incremental", 1) and again.embedded > 0


async def test_the_pool_holds_as_many_connections_as_the_setting_allows(
    database_url: str, tmp_path: Path
) -> None:
    # Many runs at once each take a connection per statement: 8 made them queue.
    settings = Settings(DATABASE_URL=database_url, KB_HOME=tmp_path, KB_DATABASE_POOL_SIZE=30)
    async with open_runtime(settings, answers_questions=False) as runtime:
        assert runtime.pool.get_max_size() == 30
    assert Settings(DATABASE_URL=database_url, KB_HOME=tmp_path).database_pool_size == 20
