"""The coordinating run's side of a parallel reindex: queue changed documents, see them done.

A reindex run (jobs/reindex.py, holding the one-reindex-at-a-time lock) lists and
converts its source and diffs it against the store as always (jobs/indexing.py); each
document that must be re-embedded is then queued here, cut into chunks, in groups, so
`kb jobs --worker` processes can start on the first group while the rest is queued.
While the listing still runs, the run takes queued groups itself whenever no worker is
alive (a background task started with the first group), so with no worker documents are
embedded and written while the source is still being listed (the listing's network calls
and the model overlap), as on the in-process path, rather than all after it.
`finish` waits for the queue to drain. While any worker embedding with the run's model
is alive (store/index_workers.py) the run only watches; when none is, it takes the work
itself through the same QueueConsumer the workers use, so one process with no worker
indexes everything, and a run whose workers all died finishes on its own once their
leases expire. Documents every claimer of which died mid-way `max_attempts` times are
given up as failed, so such a document cannot keep the run waiting forever.

Counts come from the queue: each item records what its (one, token-guarded) finishing
transaction did, and `totals` sums them into the run's report, so the run record shows
the totals across workers whoever did the work, each document counted once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from jobs.queue_consumer import ConsumerOptions, QueueConsumer
from store.embedding import ModelIdentity
from store.index_queue import IndexQueue, QueuedDocument
from store.index_workers import WorkerRegistry

log = logging.getLogger(__name__)

# Documents per INSERT: small enough that workers start early, large enough to be cheap.
_GROUP = 32


@dataclass(frozen=True, slots=True)
class Distribution:
    """What a run needs to hand its documents to workers (wired in bot/wiring.py)."""

    queue: IndexQueue
    workers: WorkerRegistry
    options: ConsumerOptions = field(default_factory=ConsumerOptions)
    # How often a waiting run looks at the queue and at which workers are alive.
    poll_seconds: float = 0.25


@dataclass(slots=True)
class QueuedTotals:
    documents_added: int = 0
    documents_updated: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0
    chunks_deleted: int = 0


class QueuedWrites:
    """The changed documents of one run, queued; `finish` returns once all are done."""

    def __init__(
        self,
        *,
        distribution: Distribution,
        run_id: int,
        source_id: int,
        model: ModelIdentity,
        consumer: QueueConsumer,
    ) -> None:
        self._distribution = distribution
        self._queue = distribution.queue
        self._run_id = run_id
        self._source_id = source_id
        self._model = model
        self._consumer = consumer
        self._buffer: list[QueuedDocument] = []
        self.queued = 0
        # Takes queued groups while the listing runs, when no worker is alive.
        self._taking: asyncio.Task[None] | None = None
        self._listing_done = asyncio.Event()

    async def add(self, document: QueuedDocument) -> None:
        self._buffer.append(document)
        if len(self._buffer) >= _GROUP:
            await self._flush()

    async def finish(
        self, progress: Callable[[int], None] | None = None
    ) -> tuple[QueuedTotals, list[dict[str, str]]]:
        """Wait until every queued document is done (embedding them here if no worker
        is alive); the summed counts and the documents given up as failed."""
        await self._stop_taking()
        await self._flush()
        if self.queued:
            await self._drain(progress)
        totals = await self._queue.totals(self._run_id)
        if totals.by_claimer:
            shares = ", ".join(f"{name} {n}" for name, n in sorted(totals.by_claimer.items()))
            log.info("run %d: documents written by %s", self._run_id, shares)
        counts = QueuedTotals(
            documents_added=totals.documents_added,
            documents_updated=totals.documents_updated,
            chunks_embedded=totals.chunks_embedded,
            chunks_reused=totals.chunks_reused,
            chunks_deleted=totals.chunks_deleted,
        )
        return counts, totals.failures

    async def _flush(self) -> None:
        if not self._buffer:
            return
        group, self._buffer = self._buffer, []
        await self._queue.enqueue(
            run_id=self._run_id, source_id=self._source_id, model=self._model, documents=group
        )
        self.queued += len(group)
        if self._taking is None:
            self._taking = asyncio.create_task(self._take_while_listing())

    async def abandon(self) -> None:
        """The listing failed: stop taking work here (what was written stays written)."""
        if self._taking is not None:
            self._taking.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._taking

    async def _stop_taking(self) -> None:
        """The listing is over: let the batch in hand finish; its errors surface here."""
        self._listing_done.set()
        if self._taking is not None:
            await self._taking

    async def _take_while_listing(self) -> None:
        while not self._listing_done.is_set():
            if not await self._distribution.workers.alive(
                self._model
            ) and await self._consumer.take(run_id=self._run_id):
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._listing_done.wait(), timeout=self._distribution.poll_seconds
                )

    async def _drain(self, progress: Callable[[int], None] | None) -> None:
        waiting_on: tuple[str, ...] | None = None
        while True:
            state = await self._queue.progress(self._run_id)
            if progress:
                progress(state.done + state.failed)
            if state.pending == 0:
                return
            workers = tuple(w.id for w in await self._distribution.workers.alive(self._model))
            if workers != waiting_on:
                self._say_who_works(workers, state.pending)
                waiting_on = workers
            if not workers and await self._consumer.take(run_id=self._run_id):
                continue
            given_up = await self._queue.give_up_stuck(
                self._run_id, max_attempts=self._distribution.options.max_attempts
            )
            if given_up:
                log.warning("run %d: gave up %d documents as failed", self._run_id, given_up)
                continue
            await asyncio.sleep(self._distribution.poll_seconds)

    def _say_who_works(self, workers: tuple[str, ...], pending: int) -> None:
        if workers:
            log.info(
                "run %d: %d documents left for %d worker(s): %s",
                self._run_id,
                pending,
                len(workers),
                ", ".join(workers),
            )
        else:
            log.info("run %d: no worker alive; embedding %d documents here", self._run_id, pending)
