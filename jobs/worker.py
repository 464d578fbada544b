"""`kb jobs --worker`: a process that embeds the queued documents of whichever run is active.

A reindex run (one at a time, under the advisory lock) queues the documents it must
re-embed (jobs/queued_writes.py). A worker registers itself (store/index_workers.py),
beats every third of its lease, and runs `concurrency` lanes that each take a batch
(jobs/queue_consumer.py: claim, embed, write each document under the claim), over and
over; with nothing to claim a lane sleeps `idle_seconds`. It holds no lock: it serves
whichever run is active, and only runs whose model is its own and the index's active one
(a worker configured with another model claims nothing, and says so at start). A
database error costs a pause, not the process; any other error stops the worker, which
hands its documents back, leaves and raises it (a supervisor restarts the process).
Stopping (SIGTERM, Ctrl-C) hands the documents it holds back at once and removes its
row; a worker killed outright loses nothing either: its leases expire and another
worker, or the run itself, takes them.

Lanes share the process's one embedder, whose encode calls run one at a time: with two
lanes one batch is being written while the next is embedded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass

import asyncpg

from jobs.queue_consumer import BatchOutcome, ConsumerOptions, QueueConsumer
from store.documents import DocumentRepository
from store.embedding import Embedder
from store.embedding_space import label
from store.errors import StoreError
from store.index_queue import IndexQueue
from store.index_workers import WorkerRegistry

log = logging.getLogger(__name__)

# What a lane can meet and wait out: the database restarting, the network, a full disk.
_RETRYABLE = (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, StoreError)


def process_name(role: str) -> str:
    """A name for this process in the queue: role, host, pid and a random suffix (two
    containers both run as pid 1, and a restarted process may get its old pid back)."""
    return f"{role}:{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    concurrency: int = 1
    idle_seconds: float = 1.0
    retry_seconds: float = 5.0


@dataclass(slots=True)
class WorkerTotals:
    batches: int = 0
    documents: int = 0
    lost: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0

    def add(self, outcome: BatchOutcome) -> None:
        self.batches += 1
        self.documents += outcome.documents
        self.lost += outcome.lost
        self.chunks_embedded += outcome.chunks_embedded
        self.chunks_reused += outcome.chunks_reused


class IndexWorker:
    def __init__(
        self,
        *,
        queue: IndexQueue,
        registry: WorkerRegistry,
        documents: DocumentRepository,
        embedder: Embedder,
        consumer_options: ConsumerOptions,
        options: WorkerOptions | None = None,
        name: str | None = None,
        on_batch: Callable[[BatchOutcome, WorkerTotals], None] | None = None,
    ) -> None:
        self.name = name or process_name("worker")
        self._registry = registry
        self._documents = documents
        self._embedder = embedder
        self._lease = consumer_options.lease_seconds
        self._options = options or WorkerOptions()
        self._on_batch = on_batch
        self._consumer = QueueConsumer(
            queue=queue,
            documents=documents,
            embedder=embedder,
            claimer=self.name,
            options=consumer_options,
        )
        self.totals = WorkerTotals()

    async def run(self, stop: asyncio.Event) -> WorkerTotals:
        """Take work until `stop` is set; then hand back what is held and leave.

        A lane that fails with an error it can't wait out (a model that raises, a bug)
        stops the worker too, and the error is raised once the worker has left: a worker
        that beats but no longer takes work would keep a run waiting for it forever.
        """
        model = self._embedder.identity
        await self._registry.register(self.name, model=model, lease_seconds=self._lease)
        await self._warn_if_not_active()
        stopped = asyncio.create_task(stop.wait())
        lanes = [
            asyncio.create_task(self._lane(stop)) for _ in range(max(1, self._options.concurrency))
        ]
        tasks = [stopped, asyncio.create_task(self._beat(stop)), *lanes]
        try:
            await asyncio.wait([stopped, *lanes], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            with contextlib.suppress(*_RETRYABLE):
                await self._registry.leave(self.name)
        for lane in lanes:
            if not lane.cancelled() and (error := lane.exception()) is not None:
                raise error
        return self.totals

    async def _lane(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                outcome = await self._consumer.take()
            except _RETRYABLE as error:
                log.warning(
                    "%s: %s; retrying in %g s", self.name, error, self._options.retry_seconds
                )
                await _wait(stop, self._options.retry_seconds)
                continue
            if outcome is None:
                await _wait(stop, self._options.idle_seconds)
                continue
            self.totals.add(outcome)
            if self._on_batch:
                self._on_batch(outcome, self.totals)

    async def _beat(self, stop: asyncio.Event) -> None:
        model = self._embedder.identity
        while not stop.is_set():
            await _wait(stop, self._lease / 3)
            try:
                if not await self._registry.beat(self.name):
                    await self._registry.register(self.name, model=model, lease_seconds=self._lease)
            except _RETRYABLE as error:
                log.warning("%s could not record that it is alive: %s", self.name, error)

    async def _warn_if_not_active(self) -> None:
        active = await self._documents.embedding_space().active()
        model = self._embedder.identity
        if active is not None and active != model:
            log.warning(
                "the index's active model is %s; this worker embeds with %s, so it takes "
                "only runs of that model (none until `kb index` has re-embedded with it)",
                label(active),
                label(model),
            )


async def _wait(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
