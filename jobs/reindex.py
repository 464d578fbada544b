"""A reindex pass over configured sources: one at a time across instances, every run recorded.

The pass holds a Postgres advisory lock; a second instance finds it taken and skips. A
source that fails (bad settings, network down mid-listing, a bug) is recorded as failed
and deletes nothing; the other sources still run. Every run record is finished:
`succeeded`, `partial` (some documents could not be read) or `failed`; a record left
`running` by a killed process is marked failed by the next pass, which holds the lock
and so knows no one else is running. A dry run writes nothing at all.

The changed documents of each run go through the index queue (jobs/queued_writes.py):
`kb jobs --worker` processes embed them if any are alive, this process otherwise. The
lock is held by the coordinating run only; workers serve whichever run is active. At the
start of a pass the queue items of finished runs (kept until then for inspection), the
rows of long-dead workers and the change log's rows older than a day are deleted.

A connector reading a change feed (jobs/connectors/base.py) starts from the cursor its
source's last complete run saved, and its new cursor is saved only after the indexer
has written (or queued and seen written) every document of the run: a run that fails or
is killed leaves the old cursor, so the next one reads those changes again, and the
hashes find what was already written unchanged (nothing is embedded twice).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import aiohttp
import asyncpg

from jobs.config import SourceConfig, WebSourceConfig
from jobs.connectors.base import ChangeFeedSource, CursorSource
from jobs.documents import Source
from jobs.errors import JobsError
from jobs.indexing import Indexer, IndexOptions, IndexReport, ProgressCallback, QueuedRun
from jobs.isolation import one_line_reason
from jobs.queued_writes import Distribution
from jobs.sources import build_source
from jobs.worker import process_name
from store.documents import DocumentRepository
from store.errors import StoreError
from store.index_queue import IndexQueue
from store.index_runs import IndexRunRepository
from store.index_workers import WorkerRegistry
from store.locks import REINDEX_LOCK_KEY, try_advisory_lock
from store.source_cursors import SourceCursorRepository

log = logging.getLogger(__name__)

ProgressFactory = Callable[[str], ProgressCallback | None]
SourceBuilder = Callable[..., Source]
"""Same arguments as jobs.sources.build_source (tests hand in a fake connector's builder)."""

# How long the corpus change log (migration 0005) keeps a row. Every reader (a keyword
# index, the sentence warm-up) catches up within seconds of a change; one idle longer
# than this reads everything again (store/corpus.py), so nothing is missed.
CHANGE_LOG_KEPT = timedelta(days=1)

# What a source run can expect to meet: its own configuration, the network, the disk.
_SOURCE_ERRORS = (JobsError, StoreError, aiohttp.ClientError, OSError, TimeoutError)


@dataclass(slots=True)
class ReindexOutcome:
    skipped: bool = False
    reason: str | None = None
    reports: list[IndexReport] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)


class ReindexJob:
    def __init__(
        self,
        *,
        pool: asyncpg.Pool,
        indexer: Indexer,
        documents: DocumentRepository,
        runs: IndexRunRepository,
        base_dir: Path,
        distribution: Distribution | None = None,
        claimer: str | None = None,
        credentials: Mapping[str, str] | None = None,
        build: SourceBuilder = build_source,
    ) -> None:
        self._pool = pool
        self._indexer = indexer
        self._documents = documents
        self._runs = runs
        self._base_dir = base_dir
        self._distribution = distribution or Distribution(
            queue=IndexQueue(pool), workers=WorkerRegistry(pool)
        )
        # Who this process is when it embeds queued documents itself.
        self._claimer = claimer or process_name("coordinator")
        # Environment variable name → value, for the names the sources file gives (bot/).
        self._credentials = dict(credentials or {})
        self._build = build
        self._cursors = SourceCursorRepository(pool)

    async def run(
        self,
        configs: Sequence[SourceConfig],
        *,
        dry_run: bool = False,
        progress: ProgressFactory | None = None,
    ) -> ReindexOutcome:
        async with try_advisory_lock(self._pool, REINDEX_LOCK_KEY) as acquired:
            if not acquired:
                log.info("another reindex is running; this one is skipped")
                return ReindexOutcome(skipped=True, reason="another reindex is running")
            if not dry_run:
                abandoned = await self._runs.mark_abandoned()
                if abandoned:
                    log.warning(
                        "%d earlier run(s) died mid-way; this run finishes their work", abandoned
                    )
                await self._distribution.queue.discard_finished_runs()
                await self._distribution.workers.prune()
                await self._documents.prune_change_log(older_than=CHANGE_LOG_KEPT)
            return await self._run_all(configs, dry_run=dry_run, progress=progress)

    async def refresh(self, config: SourceConfig, uris: Iterable[str]) -> ReindexOutcome:
        """Read just these documents of one source again (the bot saw them change): the
        others stay as stored and the source's cursor does not move. Skipped, like a run,
        while another reindex holds the lock; the caller tries again later."""
        async with try_advisory_lock(self._pool, REINDEX_LOCK_KEY) as acquired:
            if not acquired:
                return ReindexOutcome(skipped=True, reason="another reindex is running")
            outcome = ReindexOutcome()
            await self._run_one(
                config, None, outcome, dry_run=False, progress=None, only=frozenset(uris)
            )
            return outcome

    async def _run_all(
        self, configs: Sequence[SourceConfig], *, dry_run: bool, progress: ProgressFactory | None
    ) -> ReindexOutcome:
        outcome = ReindexOutcome()
        async with AsyncExitStack() as stack:
            http = None
            if any(isinstance(c, WebSourceConfig) for c in configs):
                http = await stack.enter_async_context(aiohttp.ClientSession())
            for config in configs:
                callback = progress(config.name) if progress else None
                await self._run_one(config, http, outcome, dry_run=dry_run, progress=callback)
        return outcome

    async def _run_one(
        self,
        config: SourceConfig,
        http: aiohttp.ClientSession | None,
        outcome: ReindexOutcome,
        *,
        dry_run: bool,
        progress: ProgressCallback | None,
        only: frozenset[str] | None = None,
    ) -> None:
        run_id = None if dry_run else await self._runs.start(source=config.name)
        try:
            report = await self._index(
                config, http, run_id, dry_run=dry_run, progress=progress, only=only
            )
        except _SOURCE_ERRORS as exc:
            await self._failed(config, run_id, outcome, str(exc))
            return
        except Exception as exc:
            # A bug, not the source's fault: record it, then let it surface.
            await self._failed(config, run_id, outcome, one_line_reason(exc))
            raise
        except BaseException:
            # Cancelled (SIGTERM under `kb serve`) or interrupted: the record still ends.
            await self._failed(config, run_id, outcome, "the run was stopped before it finished")
            raise
        outcome.reports.append(report)
        if run_id is not None:
            counts = {k: v for k, v in report.as_dict().items() if k not in ("failures",)}
            status = "partial" if report.failures else "succeeded"
            await self._runs.finish(run_id, status=status, counts=counts, failures=report.failures)

    async def _index(
        self,
        config: SourceConfig,
        http: aiohttp.ClientSession | None,
        run_id: int | None,
        *,
        dry_run: bool,
        progress: ProgressCallback | None,
        only: frozenset[str] | None = None,
    ) -> IndexReport:
        source = await self._source(config, http, only=only)
        options = IndexOptions(
            kind=config.kind,
            collection=config.collection,
            dry_run=dry_run,
            min_listing_ratio=config.min_listing_ratio,
        )
        queue = None if run_id is None else QueuedRun(self._distribution, run_id, self._claimer)
        report = await self._indexer.run(source, options=options, progress=progress, queue=queue)
        # Only now is every document of the run written: a later crash resumes from here.
        if not dry_run and isinstance(source, CursorSource):
            cursor = source.new_cursor
            if isinstance(source, ChangeFeedSource):
                cursor = source.settle(failed=[f["uri"] for f in report.failures if f["uri"]])
            if cursor is not None:
                await self._cursors.save(config.name, cursor)
        return report

    async def _failed(
        self, config: SourceConfig, run_id: int | None, outcome: ReindexOutcome, reason: str
    ) -> None:
        log.error("source %s failed: %s", config.name, reason)
        outcome.errors[config.name] = reason
        if run_id is not None:
            await self._runs.finish(
                run_id, status="failed", counts={}, failures=[{"uri": "", "reason": reason}]
            )

    async def _source(
        self,
        config: SourceConfig,
        http: aiohttp.ClientSession | None,
        *,
        only: frozenset[str] | None = None,
    ) -> Source:
        """The source, told what the store holds of it (for skipping what has not changed)."""
        source_id = await self._documents.source_id(config.name)
        stored = await self._documents.documents_of(source_id=source_id) if source_id else {}
        saved = await self._cursors.get(config.name)
        return self._build(
            config,
            base_dir=self._base_dir,
            http=http,
            stored=stored,
            # A cursor without stored documents (they were deleted by hand, or the source
            # renamed back) would mark nothing unchanged and miss everything: read it all.
            cursor=saved.cursor if saved and stored else None,
            credentials=self._credentials,
            **({"only": only} if only is not None else {}),
        )
