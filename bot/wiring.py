"""Builds the running objects from settings: database (embedded or not), embedder, services."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import asyncpg

from agent.answer import Answer, Answerer, ClaimCallback, StepCallback, Turn
from agent.grounding import GroundingVerifier
from agent.language.questions import QuestionAnalyzer
from agent.loop import AgentLoop, LoopOptions
from agent.reasoners.base import Reasoner
from agent.reasoners.evidence import EvidenceScorer
from agent.reasoners.extractive import ExtractiveReasoner
from agent.retrieval.dense import Retriever
from agent.retrieval.hybrid import EF_SEARCH, HybridRetriever
from agent.retrieval.keyword import KeywordRetriever
from agent.retrieval.reading import Reader
from agent.retrieval.rerank import (
    ChainedReranker,
    CrossEncoderReranker,
    Reranker,
    TitleLinkReranker,
)
from agent.sentence_vectors import SentenceVectors
from agent.sentence_warmup import WarmupReport, WarmupState, warm_sentences
from agent.sentences import SentenceSplitter
from bot.metrics import Metrics
from bot.settings import Settings
from jobs.escalations import KIND as ESCALATIONS_KIND
from jobs.escalations import EscalationSource
from jobs.indexing import Indexer, IndexOptions, IndexReport
from jobs.queue_consumer import BatchOutcome, ConsumerOptions
from jobs.queued_writes import Distribution
from jobs.reindex import ReindexJob
from jobs.worker import IndexWorker, WorkerOptions, WorkerTotals
from store.corpus import CorpusReader
from store.database import describe_dsn, open_pool, reachable
from store.documents import DocumentRepository
from store.embedded import EmbeddedPostgres, start_embedded_postgres
from store.embedding import PACKAGED_MODEL_NAME, Embedder, SentenceTransformerEmbedder
from store.embedding_space import EmbeddingSpace, mismatch
from store.errors import LOST_MIDWAY, DatabaseUnavailable, EmbeddingModelUnavailable
from store.escalations import EscalationRepository
from store.filters import NO_FILTER, ChunkFilter
from store.index_queue import IndexQueue
from store.index_runs import IndexRunRepository
from store.index_workers import WorkerRegistry
from store.keyword_search import KeywordSearch
from store.pgvector_version import PgvectorVersion, pgvector_version
from store.runs import RunRepository
from store.sentence_vectors import SentenceVectorRepository
from store.vector_search import VectorSearch, session_settings

if TYPE_CHECKING:  # the Slack stack is imported only by the commands that run it
    from slack_bolt.authorization import AuthorizeResult
    from slack_sdk.web.async_client import AsyncWebClient

    from bot.slack.access.config import AccessPolicy, BotOptions
    from bot.slack.delivery.journal import Journal
    from bot.slack.render.views import KnowledgeGap
    from bot.slack.surfaces.home_desk import KnowledgeGaps
    from bot.slack.surfaces.services import SlackServices
    from bot.slack.transport.thread_watch import ThreadWatch

log = logging.getLogger(__name__)
# App Home's knowledge gaps (admins): the questions of this many days.
HOME_GAP_DAYS = 30


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
    pgvector: PgvectorVersion
    # The process's Prometheus metrics (its own registry), served at /metrics.
    metrics: Metrics = field(default_factory=Metrics)
    # Embedders loaded to answer with the index's model when another one is configured.
    extra_embedders: list[SentenceTransformerEmbedder] = field(default_factory=list)
    # The agent loop, built once per process and query model (runtime.answerer()).
    _answerers: dict[str, AgentLoop] = field(default_factory=dict)
    # Where the last sentence warm-up stopped, so the next reads only what changed since.
    sentence_warmup: WarmupState = field(default_factory=WarmupState)

    async def query_embedder(self) -> SentenceTransformerEmbedder:
        """The model that embeds questions: the index's active model, whatever is configured.

        While the index holds another model's vectors (a model change not yet re-embedded),
        questions are answered with that model if this process can load it; otherwise
        EmbeddingModelMismatch says what to run. Nothing is ever deleted here.
        """
        configured = await self.embedder.load()
        active = await EmbeddingSpace(self.pool).active()
        if active is None or active == configured:
            return self.embedder
        for loaded_before in self.extra_embedders:
            if loaded_before.identity == active:
                return loaded_before
        other = SentenceTransformerEmbedder(
            model=None if active.name == PACKAGED_MODEL_NAME else active.name,
            torch_threads=self.settings.torch_threads,
            worker_niceness=self.settings.embed_niceness,
            query_graph_dir=self.settings.query_graph_dir,
        )
        self.extra_embedders.append(other)
        try:
            loaded = await other.load()
        except EmbeddingModelUnavailable:
            raise mismatch(active, configured) from None
        if loaded != active:
            raise mismatch(active, configured)
        log.warning(
            "answering with the index's model %s until `kb index` re-embeds with %s",
            active.name,
            configured.name,
        )
        return other

    def indexer(self) -> Indexer:
        return Indexer(
            repository=self.documents,
            embedder=self.embedder,
            embed_batch_size=self.settings.index_batch_size,
        )

    def reindex_job(
        self, *, base_dir: Path, credentials: Mapping[str, str] | None = None
    ) -> ReindexJob:
        """The reindex; `credentials` are the connectors' secrets by environment variable
        name (bot/sources.py `source_credentials`)."""
        return ReindexJob(
            credentials=credentials,
            pool=self.pool,
            indexer=self.indexer(),
            documents=self.documents,
            runs=IndexRunRepository(self.pool),
            base_dir=base_dir,
            distribution=Distribution(
                queue=IndexQueue(self.pool),
                workers=WorkerRegistry(self.pool),
                options=self._consumer_options(),
            ),
        )

    def index_worker(
        self,
        *,
        concurrency: int,
        on_batch: Callable[[BatchOutcome, WorkerTotals], None] | None = None,
    ) -> IndexWorker:
        """A `kb jobs --worker` process's worker: embeds queued documents of active runs."""
        return IndexWorker(
            queue=IndexQueue(self.pool),
            registry=WorkerRegistry(self.pool),
            documents=self.documents,
            embedder=self.embedder,
            consumer_options=self._consumer_options(),
            options=WorkerOptions(concurrency=concurrency),
            on_batch=on_batch,
        )

    def _consumer_options(self) -> ConsumerOptions:
        return ConsumerOptions(
            lease_seconds=self.settings.worker_lease_seconds,
            batch_chunks=self.settings.index_batch_size,
        )

    def hybrid_retriever(
        self,
        *,
        sources: Sequence[str] | None = None,
        cross_encoder: str | None = None,
        embedder: Embedder | None = None,
    ) -> HybridRetriever:
        """BM25 + vector, fused, re-ranked by title links (then a cross-encoder if given)."""
        cross_encoder = cross_encoder or self.settings.reranker_model
        reranker: Reranker = TitleLinkReranker(
            titles=self.keyword_search, analyzer=self.keyword_search.analyzer
        )
        if cross_encoder:
            reranker = ChainedReranker([reranker, CrossEncoderReranker(model=cross_encoder)])
        return HybridRetriever(
            embedder=embedder or self.embedder,
            vector_search=self.vector_search,
            keyword_search=self.keyword_search,
            corpus=CorpusReader(self.pool),
            reranker=reranker,
            search_filter=ChunkFilter(sources=tuple(sources) if sources else None),
        )

    def answerer(self, embedder: Embedder | None = None) -> AgentLoop:
        """The answer path the CLI and the bot call, built once per process and query
        model: the agent loop with the Claude reasoner when ANTHROPIC_API_KEY is set, else
        the extractive one (which is also Claude's fallback). Every run is stored in
        agent_runs. Pass `await query_embedder()` so questions match the stored vectors."""
        embedder = embedder or self.embedder
        key = embedder.identity.name
        if key not in self._answerers:
            self._answerers[key] = build_agent_loop(
                self.settings,
                pool=self.pool,
                embedder=embedder,
                keyword_search=self.keyword_search,
                retriever=self.hybrid_retriever(embedder=embedder),
                metrics=self.metrics,
            )
        return self._answerers[key]

    async def warm(self) -> None:
        """Load the model and build the BM25 index now, not on the first question."""
        await self.embedder.load()
        await self.keyword_search.refresh()
        await self.answerer(await self.query_embedder()).warm()

    async def warm_sentences(self, progress: Callable[[int], None] | None = None) -> WarmupReport:
        """Embed the quotable units not embedded yet (with the model questions use), so no
        question waits for the model to read a page: of every stored chunk the first time,
        then of the documents changed since the last warm-up of this process."""
        embedder = await self.query_embedder()
        return await warm_sentences(
            corpus=CorpusReader(self.pool),
            # Nobody waits for the warm-up: questions asked meanwhile are embedded first.
            vectors=SentenceVectors(
                embedder=embedder.in_background(), store=SentenceVectorRepository(self.pool)
            ),
            splitter=SentenceSplitter(),
            state=self.sentence_warmup,
            progress=progress,
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
        thread_watch: ThreadWatch | None = None,
    ) -> SlackServices:
        """Everything the Slack listeners need; `answerer` defaults to the agent loop of
        the index's active model, looked up per question (ActiveModelAnswerer)."""
        from bot.slack.access.config import load_access
        from bot.slack.delivery.journal import Journal

        return compose_slack(
            pool=self.pool,
            client=client,
            identity=identity,
            signing_secret=signing_secret,
            answerer=answerer or ActiveModelAnswerer(self),
            access=access if access is not None else load_access(self.settings.slack_config_path),
            options=options or slack_options(self.settings),
            index_collection=self.index_escalations,
            metrics=self.metrics,
            knowledge_gaps=self.knowledge_gaps,
            thread_watch=thread_watch,
            journal=Journal(self.settings.slack_journal_path),
        )

    async def knowledge_gaps(self) -> list[KnowledgeGap]:
        """`kb stats`'s knowledge gaps of the last 30 days, the top five, for App Home."""
        from bot.slack.render.views import KnowledgeGap
        from bot.stats import knowledge_gaps
        from store.stats import StatsReader

        since = datetime.now(UTC) - timedelta(days=HOME_GAP_DAYS)
        questions = await StatsReader(self.pool).gap_questions(since=since)
        gaps = await knowledge_gaps(questions, embedder=await self.query_embedder(), top=5)
        return [KnowledgeGap(g.question, g.count) for g in gaps]


@dataclass
class ActiveModelAnswerer:
    """The agent loop of whichever model the index is on, checked per question, so a
    long-running process (kb serve) follows a model change without a restart."""

    runtime: Runtime

    async def answer(
        self,
        question: str,
        *,
        history: Sequence[Turn] = (),
        scope: ChunkFilter = NO_FILTER,
        origin: Mapping[str, str] | None = None,
        on_step: StepCallback | None = None,
        on_claim: ClaimCallback | None = None,
    ) -> Answer:
        loop = self.runtime.answerer(await self.runtime.query_embedder())
        return await loop.answer(
            question,
            history=history,
            scope=scope,
            origin=origin,
            on_step=on_step,
            on_claim=on_claim,
        )


def build_agent_loop(
    settings: Settings,
    *,
    pool: asyncpg.Pool,
    embedder: Embedder,
    keyword_search: KeywordSearch,
    retriever: Retriever,
    metrics: Metrics | None = None,
) -> AgentLoop:
    """The agent loop over this pool: Claude when a key is set, the extractive reasoner
    otherwise and as Claude's fallback; runs stored in the pool's agent_runs."""
    analyzer = QuestionAnalyzer(keyword_search.analyzer)
    vectors = SentenceVectors(embedder=embedder, store=SentenceVectorRepository(pool))
    splitter = SentenceSplitter()
    scorer = EvidenceScorer(
        analyzer=analyzer,
        splitter=splitter,
        vectors=vectors,
        corpus_terms=keyword_search,
    )
    extractive = ExtractiveReasoner(analyzer=analyzer, scorer=scorer)
    reasoner: Reasoner = extractive
    if settings.anthropic_api_key is not None:
        from bot.claude import claude_reasoner

        reasoner = claude_reasoner(
            settings, on_error=metrics.anthropic_error if metrics is not None else None
        )
    corpus = CorpusReader(pool)
    return AgentLoop(
        retriever=retriever,
        reader=Reader(corpus),
        reasoner=reasoner,
        fallback=extractive,
        verifier=GroundingVerifier(corpus),
        stems=lambda text: frozenset(analyzer.stems(text)),
        runs=RunRepository(pool),
        options=LoopOptions(max_steps=settings.agent_max_steps),
        corroboration=KeywordRetriever(keyword_search),
        splitter=splitter,
    )


def slack_options(settings: Settings) -> BotOptions:
    from bot.slack.access.config import BotOptions

    return BotOptions(
        escalation_channel=settings.slack_escalation_channel,
        escalation_usergroup=settings.slack_escalation_usergroup,
        help_channels=frozenset(settings.help_channels),
        private_by_default=settings.slack_private_by_default,
        thread_needs_mention=settings.slack_thread_needs_mention,
        ignore_bots=settings.slack_ignore_bots,
        always_escalate=settings.slack_always_escalate,
        escalation_elsewhere=settings.slack_escalation_elsewhere,
        runs_per_workspace=settings.slack_runs_per_workspace,
        history_turns=settings.slack_history_turns,
        max_question_chars=settings.slack_max_question_chars,
        lease_seconds=settings.slack_lease,
        stream_answers=settings.slack_stream,
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
    metrics: Metrics | None = None,
    knowledge_gaps: KnowledgeGaps | None = None,
    thread_watch: ThreadWatch | None = None,
    journal: Journal | None = None,
) -> SlackServices:
    """The Slack app's services over one pool, one Web API client and one answerer."""
    from bot.slack.access.gate import AccessGate
    from bot.slack.access.people import People, Workspace
    from bot.slack.access.shared_channels import SharedChannels
    from bot.slack.delivery.conversation import Conversation
    from bot.slack.delivery.leases import Leases
    from bot.slack.delivery.queue import WorkspaceQueue
    from bot.slack.delivery.rerun import Rerun
    from bot.slack.delivery.streaming import Streams
    from bot.slack.delivery.tasks import BackgroundTasks
    from bot.slack.delivery.threads import ThreadHistory
    from bot.slack.surfaces.assistant_desk import AssistantDesk, StoredThreadContext
    from bot.slack.surfaces.command_desk import CommandDesk
    from bot.slack.surfaces.escalation_desk import EscalationDesk
    from bot.slack.surfaces.feedback_desk import FeedbackDesk
    from bot.slack.surfaces.home_desk import HomeDesk
    from bot.slack.surfaces.message_desk import MessageDesk
    from bot.slack.surfaces.services import SlackServices
    from bot.slack.surfaces.trace_desk import TraceDesk
    from store.asked_documents import AskedDocuments
    from store.catalog import Catalog
    from store.conversations import AssistantThreads, ConversationLog
    from store.deliveries import DeliveryLog
    from store.feedback import FeedbackRepository
    from store.private_collections import PrivateCollections

    runs, conversations = RunRepository(pool), ConversationLog(pool)
    deliveries = DeliveryLog(pool, lease=timedelta(seconds=options.lease_seconds))
    leases = Leases()
    catalog, assistant_threads = Catalog(pool), AssistantThreads(pool)
    metrics = metrics or Metrics()
    workspace = Workspace(team_id=identity.team_id or "", enterprise_id=identity.enterprise_id)
    people = People(client=client, workspace=workspace)
    gate = AccessGate(
        policy=access,
        people=people,
        shared=SharedChannels(client=client),
        private=PrivateCollections(pool),
    )
    queue = WorkspaceQueue(limit=options.runs_per_workspace)
    metrics.watch_queue(queue.depth)
    streams = Streams(client, enabled=options.stream_answers)
    conversation = Conversation(
        answerer=answerer,
        runs=runs,
        answers=conversations,
        threads=ThreadHistory(client=client, runs=runs, max_turns=options.history_turns),
        queue=queue,
        options=options,
        deliveries=deliveries,
        metrics=metrics,
        leases=leases,
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
            gate=gate,
            options=options,
            streams=streams,
        ),
        commands=CommandDesk(
            client=client,
            conversation=conversation,
            gate=gate,
            deliveries=deliveries,
            streams=streams,
        ),
        assistant=AssistantDesk(
            client=client,
            conversation=conversation,
            threads=assistant_threads,
            deliveries=deliveries,
            catalog=catalog,
            gate=gate,
            asked=AskedDocuments(pool),
            streams=streams,
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
            metrics=metrics,
            people=people,
        ),
        feedback=FeedbackDesk(
            client=client, feedback=FeedbackRepository(pool), runs=runs, metrics=metrics
        ),
        traces=TraceDesk(client=client, runs=runs, catalog=catalog, gate=gate),
        home=HomeDesk(
            client=client,
            catalog=catalog,
            conversations=conversations,
            gate=gate,
            knowledge_gaps=knowledge_gaps,
        ),
        tasks=BackgroundTasks(),
        leases=leases,
        rerun=Rerun(
            client=client,
            conversation=conversation,
            gate=gate,
            deliveries=deliveries,
            bot_user_id=str(identity.bot_user_id),
        ),
        thread_watch=thread_watch,
        journal=journal,
    )


@asynccontextmanager
async def open_runtime(
    settings: Settings, *, answers_questions: bool = True
) -> AsyncIterator[Runtime]:
    """Start or connect to the database and hand out the wired services; clean up after.

    `answers_questions=False` (`kb index`, `kb jobs --worker`: documents only) leaves out
    the ONNX query graph, whose first export takes seconds and which only questions use."""
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
        query_graph_dir=settings.query_graph_dir if answers_questions else None,
    )
    extra: list[SentenceTransformerEmbedder] = []
    try:
        pool = await open_pool(
            dsn, max_size=settings.database_pool_size, settings=session_settings(EF_SEARCH)
        )
        keyword_search = KeywordSearch(CorpusReader(pool))
        try:
            async with pool.acquire() as conn:
                version = await pgvector_version(conn)
            yield Runtime(
                settings=settings,
                pool=pool,
                database=where,
                embedder=embedder,
                documents=DocumentRepository(pool),
                vector_search=VectorSearch(
                    pool,
                    ef_search=EF_SEARCH,
                    iterative_scan=version.iterative_scan,
                    pool_ef_search=EF_SEARCH,
                ),
                keyword_search=keyword_search,
                pgvector=version,
                extra_embedders=extra,
            )
        except LOST_MIDWAY as exc:
            # The server went away under a command (stopped, crashed, restarted): one
            # plain line instead of a driver's traceback, unless it answers again.
            if await reachable(dsn):
                raise
            raise DatabaseUnavailable(
                f"lost the connection to the {where} ({type(exc).__name__}: {exc}); "
                "check that the database is running, then run the command again"
            ) from exc
        finally:
            await keyword_search.close()
            await pool.close()
    finally:
        for model in (embedder, *extra):
            model.close()
        if embedded is not None:
            embedded.stop()
