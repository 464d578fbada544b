"""Fixtures for the abuse tests: the Slack rig's bot over the fixture corpus plus a
document written to hijack the bot (tests/fixtures/injection/parking.txt, in `ops`)."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest

from jobs.directory import DirectorySource
from jobs.indexing import Indexer, IndexOptions
from store.documents import DocumentRepository
from tests.bot.slack.conftest import fake_slack, index_fixture_corpus, start_bot
from tests.bot.slack.rig import FIXTURES

__all__ = ["corpus", "fake_slack", "start_bot"]

INJECTION = FIXTURES / "injection"


async def index_injection(pool: asyncpg.Pool, embedder: Any) -> None:
    source = DirectorySource(
        name="ops-parking",
        root=INJECTION,
        include=["parking.txt"],
        url_style="template",
        url_template="https://kb.test/{stem}",
    )
    indexer = Indexer(repository=DocumentRepository(pool), embedder=embedder)
    await indexer.run(source, options=IndexOptions(kind="directory", collection="ops"))


@pytest.fixture
async def corpus(pool: asyncpg.Pool, embedder: Any) -> asyncpg.Pool:
    await index_fixture_corpus(pool, embedder)
    await index_injection(pool, embedder)
    return pool
