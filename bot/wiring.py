"""Builds the running objects from settings: database (embedded or not), embedder, services."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import asyncpg

from agent.answer import Answerer
from agent.hybrid import EF_SEARCH, HybridRetriever
from agent.one_shot import OneShotAnswerer
from agent.rerank import ChainedReranker, CrossEncoderReranker, Reranker, TitleLinkReranker
from bot.settings import Settings
from jobs.escalations import KIND as ESCALATIONS_KIND
from jobs.escalations import EscalationSource
from jobs.indexing import Indexer, IndexOptions, IndexReport
from jobs.reindex import ReindexJob
from store.corpus import CorpusReader
from store.database import describe_dsn, open_pool
from store.documents import DocumentRepository
from store.embedded import EmbeddedPostgres, start_embedded_postgres
from store.embedding import SentenceTransformerEmbedder
from store.escalations import EscalationRepository
from store.filters import ChunkFilter
from store.index_runs import IndexRunRepository
from store.keyword_search import KeywordSearch
from store.runs import RunRepository
from store.vector_search import VectorSearch

if TYPE_CHECKING:  # the Slack stack is imported only by the commands that run it
    from slack_bolt.authorization import AuthorizeResult
    from slack_sdk.web.async_client import AsyncWebClient

    from bot.slack.config import AccessPolicy, BotOptions
    from bot.slack.services import SlackServices

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Runtime:
    settings: Settings
    pool: asyncpg.Pool
    database: str
    embedder: SentenceTransformerEmbedder
    documents: DocumentRepository
    vector_search: VectorSearch
    # One in-memory BM25 index per process, rebuilt when the corpus version moves.
    keyword_search: KeywordSearch

    def indexer(self) -> Indexer:
        return Indexer(
            repository=self.documents,
            embedder=self.embedder,
            embed_batch_size=self.settings.index_batch_size,
        )

    def reindex_job(self, *, base_dir: Path) -> ReindexJob:
        return ReindexJob(
            pool=self.pool,
            indexer=self.indexer(),
            documents=self.documents,
            runs=IndexRunRepository(self.pool),
            base_dir=base_dir,
        )

    def hybrid_retriever(
        self, *, sources: Sequence[str] | None = None, cross_encoder: str | None = None
    ) -> HybridRetriever:
        """BM25 + vector, fused, re-ranked by title links (then a cross-encoder if given)."""
        cross_encoder = cross_encoder or self.settings.reranker_model
        reranker: Reranker = TitleLinkReranker(titles=self.keyword_search)
        if cross_encoder:
            reranker = ChainedReranker([reranker, CrossEncoderReranker(model=cross_encoder)])
        return HybridRetriever(
            embedder=self.embedder,
            vector_search=self.vector_search,
            keyword_search=self.keyword_search,
            corpus=CorpusReader(self.pool),
            reranker=reranker,
            search_filter=ChunkFilter(sources=tuple(sources) if sources else None),
        )

    def answerer(self) -> OneShotAnswerer:
        """The answer path the CLI and the bot call (every run stored in agent_runs)."""
        return OneShotAnswerer(
            retriever=self.hybrid_retriever(),
            embedder=self.embedder,
            runs=RunRepository(self.pool),
        )

    async def index_escalations(self, collection: str | None = None) -> list[IndexReport]:
        """Index the experts' answers: one collection's, or every collection that has some."""
        escalations = EscalationRepository(self.pool)
        collections = [collection] if collection else await escalations.answered_collections()
        indexer = self.indexer()
        reports = []
        for name in collections:
            source = EscalationSource(collection=name, escalations=escalations)
            options = IndexOptions(kind=ESCALATIONS_KIND, collection=name)
            reports.append(await indexer.run(source, options=options))
        return reports

    def slack_services(
        self,
        *,
        client: AsyncWebClient,
        identity: AuthorizeResult,
        signing_secret: str | None = None,
        answerer: Answerer | None = None,
        access: AccessPolicy | None = None,
        options: BotOptions | None = None,
    ) -> SlackServices:
        """Everything the Slack listeners need; `answerer` defaults to `answerer()`."""
        from bot.slack.config import load_access

        return compose_slack(
            pool=self.pool,
            client=client,
            identity=identity,
            signing_secret=signing_secret,
            answerer=answerer or self.answerer(),
            access=access if access is not None else load_access(self.settings.slack_config_path),
            options=options or slack_options(self.settings),
            index_collection=self.index_escalations,
        )


def slack_options(settings: Settings) -> BotOptions:
    from bot.slack.config import BotOptions

    return BotOptions(
        escalation_channel=settings.slack_escalation_channel,
        escalation_usergroup=settings.slack_escalation_usergroup,
        help_channels=frozenset(settings.help_channels),
        private_by_default=settings.slack_private_by_default,
        thread_needs_mention=settings.slack_thread_needs_mention,
        ignore_bots=settings.slack_ignore_bots,
        always_escalate=settings.slack_always_escalate,
        runs_per_workspace=settings.slack_runs_per_workspace,
        history_turns=settings.slack_history_turns,
    )


def compose_slack(
    *,
    pool: asyncpg.Pool,
    client: AsyncWebClient,
    identity: AuthorizeResult,
    signing_secret: str | None,
    answerer: Answerer,
    access: AccessPolicy,
    options: BotOptions,
    index_collection: Callable[[str], Awaitable[object]],
) -> SlackServices:
    """The Slack app's services over one pool, one Web API client and one answerer."""
    from bot.slack.assistant import AssistantDesk, StoredThreadContext
    from bot.slack.conversation import Conversation
    from bot.slack.escalation import EscalationDesk
    from bot.slack.feedback import FeedbackDesk
    from bot.slack.home import HomeDesk
    from bot.slack.messages import MessageDesk
    from bot.slack.queue import WorkspaceQueue
    from bot.slack.services import SlackServices
    from bot.slack.slash import CommandDesk
    from bot.slack.tasks import BackgroundTasks
    from bot.slack.threads import ThreadHistory
    from bot.slack.trace import TraceDesk
    from store.catalog import Catalog
    from store.conversations import AssistantThreads, ConversationLog
    from store.deliveries import DeliveryLog
    from store.feedback import FeedbackRepository

    runs, conversations, deliveries = RunRepository(pool), ConversationLog(pool), DeliveryLog(pool)
    catalog, assistant_threads = Catalog(pool), AssistantThreads(pool)
    conversation = Conversation(
        answerer=answerer,
        runs=runs,
        answers=conversations,
        threads=ThreadHistory(client=client, runs=runs, max_turns=options.history_turns),
        queue=WorkspaceQueue(limit=options.runs_per_workspace),
        options=options,
    )
    return SlackServices(
        client=client,
        identity=identity,
        signing_secret=signing_secret,
        options=options,
        access=access,
        deliveries=deliveries,
        messages=MessageDesk(
            client=client,
            conversation=conversation,
            conversations=conversations,
            deliveries=deliveries,
            access=access,
            options=options,
        ),
        commands=CommandDesk(client=client, conversation=conversation, access=access),
        assistant=AssistantDesk(
            client=client,
            conversation=conversation,
            threads=assistant_threads,
            deliveries=deliveries,
            catalog=catalog,
            access=access.assistant,
        ),
        thread_context=StoredThreadContext(assistant_threads),
        escalations=EscalationDesk(
            client=client,
            runs=runs,
            escalations=EscalationRepository(pool),
            conversations=conversations,
            access=access,
            options=options,
            index_collection=index_collection,
        ),
        feedback=FeedbackDesk(client=client, feedback=FeedbackRepository(pool)),
        traces=TraceDesk(client=client, runs=runs, catalog=catalog, access=access),
        home=HomeDesk(
            client=client, catalog=catalog, conversations=conversations, access=access.home
        ),
        tasks=BackgroundTasks(),
    )


@asynccontextmanager
async def open_runtime(settings: Settings) -> AsyncIterator[Runtime]:
    """Start or connect to the database and hand out the wired services; clean up after."""
    embedded: EmbeddedPostgres | None = None
    if settings.database_url is not None:
        dsn = settings.database_url.get_secret_value()
        where = describe_dsn(dsn)
    else:
        settings.kb_home.mkdir(parents=True, exist_ok=True)
        embedded = await start_embedded_postgres(settings.embedded_data_dir)
        dsn, where = embedded.dsn, f"embedded Postgres in {settings.embedded_data_dir}"
    embedder = SentenceTransformerEmbedder(
        model=settings.embedding_model,
        torch_threads=settings.torch_threads,
        worker_niceness=settings.embed_niceness,
    )
    try:
        pool = await open_pool(dsn)
        keyword_search = KeywordSearch(CorpusReader(pool))
        try:
            yield Runtime(
                settings=settings,
                pool=pool,
                database=where,
                embedder=embedder,
                documents=DocumentRepository(pool),
                vector_search=VectorSearch(pool, ef_search=EF_SEARCH),
                keyword_search=keyword_search,
            )
        finally:
            await keyword_search.close()
            await pool.close()
    finally:
        embedder.close()
        if embedded is not None:
            embedded.stop()
