"""Fixtures for the Slack bot's scenario tests: the fake Web API and the bot on a port.

The rig itself (fake Slack, signed sender, payload helpers) is in rig.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import asyncpg
import pytest
from aiohttp import web

from agent.retrieval.hybrid import EF_SEARCH
from bot.server import build_http_app
from bot.settings import Settings
from bot.slack.access.config import AccessPolicy, BotOptions
from bot.slack.surfaces.services import SlackServices
from bot.slack.transport.app import build_app
from bot.slack.transport.web import bot_identity, build_web_client
from bot.wiring import Runtime
from jobs.directory import DirectorySource
from jobs.indexing import Indexer, IndexOptions
from store.corpus import CorpusReader
from store.documents import DocumentRepository
from store.keyword_search import KeywordSearch
from store.pgvector_version import pgvector_version
from store.vector_search import VectorSearch
from tests.bot.slack.rig import BOT_TOKEN, FIXTURE_KB, SIGNING_SECRET, FakeSlack, SlackSender


@pytest.fixture
async def fake_slack() -> AsyncIterator[FakeSlack]:
    fake = FakeSlack()
    await fake.start()
    yield fake
    await fake.close()


@dataclass
class RunningBot:
    url: str
    services: SlackServices
    runtime: Runtime
    sender: SlackSender

    async def idle(self) -> None:
        """Wait until every answer, update and post the bot started has finished."""
        await self.services.tasks.wait_idle()


async def index_fixture_corpus(pool: asyncpg.Pool, embedder: Any) -> None:
    """`hr`: leave.md; `ops`: equipment.md and travel.md (links https://kb.test/<stem>)."""
    indexer = Indexer(repository=DocumentRepository(pool), embedder=embedder)
    for name, collection, include in (
        ("hr-docs", "hr", ["leave.md"]),
        ("ops-docs", "ops", ["equipment.md", "travel.md"]),
    ):
        source = DirectorySource(
            name=name,
            root=FIXTURE_KB,
            include=include,
            url_style="template",
            url_template="https://kb.test/{stem}",
        )
        await indexer.run(source, options=IndexOptions(kind="directory", collection=collection))


@pytest.fixture
async def corpus(pool: asyncpg.Pool, embedder: Any) -> asyncpg.Pool:
    await index_fixture_corpus(pool, embedder)
    return pool


async def runtime_on(pool: asyncpg.Pool, embedder: Any) -> Runtime:
    async with pool.acquire() as conn:
        version = await pgvector_version(conn)
    return Runtime(
        settings=Settings(),
        pool=pool,
        database="test",
        embedder=embedder,
        documents=DocumentRepository(pool),
        vector_search=VectorSearch(pool, ef_search=EF_SEARCH),
        keyword_search=KeywordSearch(CorpusReader(pool)),
        pgvector=version,
    )


@pytest.fixture
async def start_bot(
    corpus: asyncpg.Pool, embedder: Any, fake_slack: FakeSlack
) -> AsyncIterator[Callable[..., Any]]:
    """Start the bot (HTTP mode) on an ephemeral port.

    `answerer` is a factory given the bot's Runtime (to wrap its real answerer); `access`
    and `options` go to the services as they are.
    """
    started: list[tuple[web.AppRunner, RunningBot]] = []
    http = aiohttp.ClientSession()

    async def start(
        *,
        answerer: Any = None,
        access: AccessPolicy | None = None,
        options: BotOptions | None = None,
        thread_watch: Any = None,
    ) -> RunningBot:
        runtime = await runtime_on(corpus, embedder)
        client = build_web_client(
            token=BOT_TOKEN,
            base_url=fake_slack.base_url,
            session=http,
            on_error=runtime.metrics.slack_api_error,
        )
        services = runtime.slack_services(
            client=client,
            identity=await bot_identity(client),
            signing_secret=SIGNING_SECRET,
            answerer=answerer(runtime) if answerer else None,
            access=access or AccessPolicy(),
            options=options or BotOptions(escalation_channel="CESCALATE"),
            thread_watch=thread_watch,
        )
        runner = web.AppRunner(build_http_app(runtime, slack=build_app(services)))
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        url = f"http://127.0.0.1:{port}/slack/events"
        sender = SlackSender(http, url, triggers=fake_slack.triggers)
        bot = RunningBot(url, services, runtime, sender)
        started.append((runner, bot))
        return bot

    yield start
    for runner, bot in started:
        await bot.services.tasks.close(timeout=10)
        await runner.cleanup()
        await bot.runtime.keyword_search.close()
    await http.close()


@pytest.fixture
async def start_socket_bot(
    corpus: asyncpg.Pool, embedder: Any, fake_slack: FakeSlack
) -> AsyncIterator[Callable[..., Any]]:
    """Start the bot in Socket Mode against the fake's WebSocket (no HTTP server)."""
    from bot.slack.transport.socket_mode import connect

    started: list[tuple[Any, SlackServices, Runtime]] = []

    async def start(*, options: BotOptions | None = None) -> SlackServices:
        runtime = await runtime_on(corpus, embedder)
        client = build_web_client(token=BOT_TOKEN, base_url=fake_slack.base_url)
        services = runtime.slack_services(
            client=client,
            identity=await bot_identity(client),
            access=AccessPolicy(),
            options=options or BotOptions(),
        )
        handler = await connect(build_app(services), app_token="xapp-test-token")
        started.append((handler, services, runtime))
        return services

    yield start
    for handler, services, runtime in started:
        await handler.close_async()
        await services.tasks.close(timeout=10)
        await runtime.keyword_search.close()
