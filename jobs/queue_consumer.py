"""Taking documents off the index queue: claim a batch, embed it, write each under the claim.

`take` claims queued documents until they hold about `batch_chunks` chunks (the same
batches the in-process pass embeds), keeps their lease alive while it works, finds their
vectors (stored ones reused by chunk hash, jobs/chunk_vectors.py), then finishes each
document in its own transaction guarded by the claim token (store/index_queue.py): the
chunk swap, the item marked done and its counts, together or not at all. A document
whose lease ran out and was taken over meanwhile is not written, and counted as lost.

`kb jobs --worker` processes and the coordinating run itself (when no worker is alive)
take work through this one class, so a document is indexed the same way whoever takes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import asyncpg

from jobs.chunk_vectors import ChunkToVector, DocumentVectors, vectors_for
from jobs.chunking import Chunk
from store.documents import DocumentRepository
from store.embedding import Embedder
from store.index_queue import Claim, ClaimedItem, IndexQueue, QueuedChunk

log = logging.getLogger(__name__)

# Renew a claim's lease this many times per lease, so one late renewal never loses it.
_RENEWALS_PER_LEASE = 3


@dataclass(frozen=True, slots=True)
class ConsumerOptions:
    # How long a claim lasts without renewal: a killed claimer's documents wait this long.
    lease_seconds: float = 60.0
    # Chunks per claim (at least one document); the in-process pass's embed batch size.
    batch_chunks: int = 256
    # A document whose claimers all stopped mid-way this many times is given up as failed.
    max_attempts: int = 5
    # A claim is renewed for at most this many leases: a claimer stuck on its batch that
    # long (a hung model call) lets it go, so another takes the documents, and its own
    # late write is refused by the claim token (counted as lost), never doubled.
    max_hold_leases: int = 10


@dataclass(frozen=True, slots=True)
class BatchOutcome:
    run_ids: tuple[int, ...]
    documents: int  # written and marked done
    lost: int  # taken over by another claimer (or their run discarded): nothing written
    chunks: int
    chunks_embedded: int
    chunks_reused: int
    seconds: float


class QueueConsumer:
    def __init__(
        self,
        *,
        queue: IndexQueue,
        documents: DocumentRepository,
        embedder: Embedder,
        claimer: str,
        options: ConsumerOptions,
    ) -> None:
        self._queue = queue
        self._documents = documents
        self._embedder = embedder
        self.claimer = claimer
        self._options = options

    async def take(self, *, run_id: int | None = None) -> BatchOutcome | None:
        """Claim, embed and write one batch (of run `run_id`, or of any running run);
        None when nothing is claimable."""
        claim = await self._queue.claim(
            claimer=self.claimer,
            model=self._embedder.identity,
            lease_seconds=self._options.lease_seconds,
            max_chunks=self._options.batch_chunks,
            max_attempts=self._options.max_attempts,
            run_id=run_id,
        )
        if claim is None:
            return None
        started = time.perf_counter()
        log.debug(
            "%s claimed %d documents (%d chunks) of run %s",
            self.claimer,
            len(claim.items),
            sum(len(i.queued.chunks) for i in claim.items),
            _runs(claim),
        )
        try:
            async with self._lease_kept(claim):
                return await self._process(claim, started)
        except BaseException:
            # Failing or stopped (SIGTERM): hand the unfinished documents back at once
            # rather than after the lease; if even that fails, the lease expires anyway.
            with contextlib.suppress(asyncpg.PostgresError, OSError, asyncpg.InterfaceError):
                await self._queue.release(claim)
            raise

    async def _process(self, claim: Claim, started: float) -> BatchOutcome:
        vectors = await vectors_for(
            [[_to_vector(c) for c in item.queued.chunks] for item in claim.items],
            repository=self._documents,
            embedder=self._embedder,
        )
        written = lost = 0
        for item, found in zip(claim.items, vectors, strict=True):
            if await self._finish(claim, item, found):
                written += 1
            else:
                lost += 1
        if lost:
            log.warning(
                "%s: %d documents of run %s were taken over after the lease expired; "
                "nothing written for them here",
                self.claimer,
                lost,
                _runs(claim),
            )
        outcome = BatchOutcome(
            run_ids=tuple(sorted({i.run_id for i in claim.items})),
            documents=written,
            lost=lost,
            chunks=sum(len(i.queued.chunks) for i in claim.items),
            chunks_embedded=sum(v.embedded for v in vectors),
            chunks_reused=sum(v.reused for v in vectors),
            seconds=time.perf_counter() - started,
        )
        log.debug(
            "%s wrote %d documents of run %s (%d chunks embedded, %d reused) in %.1f s",
            self.claimer,
            outcome.documents,
            _runs(claim),
            outcome.chunks_embedded,
            outcome.chunks_reused,
            outcome.seconds,
        )
        return outcome

    async def _finish(self, claim: Claim, item: ClaimedItem, found: DocumentVectors) -> bool:
        chunks = [
            chunk.with_embedding(vector)
            for chunk, vector in zip(item.queued.chunks, found.matrix, strict=True)
        ]
        result = await self._queue.finish(
            claim, item, chunks=chunks, embedded=found.embedded, reused=found.reused
        )
        return result is not None

    @contextlib.asynccontextmanager
    async def _lease_kept(self, claim: Claim) -> AsyncIterator[None]:
        renewing = asyncio.create_task(self._renew(claim))
        try:
            yield
        finally:
            renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewing

    async def _renew(self, claim: Claim) -> None:
        lease = self._options.lease_seconds
        interval = lease / _RENEWALS_PER_LEASE
        give_up = time.monotonic() + self._options.max_hold_leases * lease
        while True:
            await asyncio.sleep(interval)
            if time.monotonic() + lease > give_up:
                log.warning(
                    "%s has held %d documents of run %s for %d leases (%.0f s) without "
                    "finishing; no longer renewing, so another claimer takes them",
                    self.claimer,
                    len(claim.items),
                    _runs(claim),
                    self._options.max_hold_leases,
                    self._options.max_hold_leases * lease,
                )
                return
            try:
                await self._queue.renew(claim, lease_seconds=self._options.lease_seconds)
            except (asyncpg.PostgresError, OSError, asyncpg.InterfaceError) as error:
                # The database is unreachable: finishing will fail too, and the lease
                # lets another claimer take the documents once it is back.
                log.warning("%s could not renew its lease: %s", self.claimer, error)


def _to_vector(chunk: QueuedChunk) -> ChunkToVector:
    heading_path = chunk.heading_path
    text = Chunk(chunk.ordinal, chunk.text, chunk.char_start, chunk.char_end, heading_path)
    return ChunkToVector(chunk.text_hash, text.embedding_text())


def _runs(claim: Claim) -> str:
    return ", ".join(str(r) for r in sorted({i.run_id for i in claim.items}))
