"""The Runtime's wiring: what a process keeps between calls."""

from __future__ import annotations

from typing import Any

import asyncpg

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
