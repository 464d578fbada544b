"""Taking queued documents: a claim outlives its lease while it embeds, and is handed back
at once when the claimer fails or is stopped."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import asyncpg
import numpy as np
import pytest

from jobs.queue_consumer import ConsumerOptions, QueueConsumer
from jobs.worker import IndexWorker
from store.documents import DocumentRecord, DocumentRepository
from store.embedding import ModelIdentity
from store.index_queue import IndexQueue, QueuedChunk, QueuedDocument
from store.index_runs import IndexRunRepository
from store.index_workers import WorkerRegistry

LEASE = 1.0


class HeldEmbedder:
    """The hashing embedder (tests/conftest.py), held until `go` is set, or failing."""

    def __init__(self, hashing: Any, *, fail: bool = False) -> None:
        self._inner = hashing("held", 8)
        self.identity: ModelIdentity = self._inner.identity
        self.started = asyncio.Event()
        self.go = asyncio.Event()
        self._fail = fail

    async def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        self.started.set()
        await self.go.wait()
        if self._fail:
            raise RuntimeError("the model fell over")
        return await self._inner.embed_batch(list(texts))


@pytest.fixture
async def queued(pool: asyncpg.Pool, hashing_embedder: Any) -> IndexQueue:
    """One document queued for a running run, embedded with the 'held' model."""
    identity = ModelIdentity("held", 8)
    await DocumentRepository(pool).embedding_space().adopt_first(identity)
    source_id = await DocumentRepository(pool).ensure_source(name="s", kind="directory")
    run_id = await IndexRunRepository(pool).start(source="s")
    text = "# Leave\n\nAsk your manager."
    document = DocumentRecord(
        uri="a.md", title="Leave", url=None, text=text, content_hash="c", metadata_hash="m"
    )
    chunk = QueuedChunk(0, text, "h0", 0, len(text), ("Leave",))
    queue = IndexQueue(pool)
    await queue.enqueue(
        run_id=run_id,
        source_id=source_id,
        model=identity,
        documents=[QueuedDocument(document, (chunk,))],
    )
    return queue


def consumer(
    pool: asyncpg.Pool,
    embedder: HeldEmbedder,
    name: str,
    *,
    lease: float = LEASE,
    max_hold_leases: int = 10,
) -> QueueConsumer:
    return QueueConsumer(
        queue=IndexQueue(pool),
        documents=DocumentRepository(pool),
        embedder=embedder,
        claimer=name,
        options=ConsumerOptions(
            lease_seconds=lease, batch_chunks=8, max_hold_leases=max_hold_leases
        ),
    )


async def test_a_claim_is_kept_while_its_batch_embeds_for_longer_than_the_lease(
    pool: asyncpg.Pool, queued: IndexQueue, hashing_embedder: Any
) -> None:
    slow = HeldEmbedder(hashing_embedder)
    taking = asyncio.create_task(consumer(pool, slow, "slow").take())
    await slow.started.wait()
    for _ in range(3):  # three leases long: only renewals keep the claim
        await asyncio.sleep(LEASE)
        assert await consumer(pool, HeldEmbedder(hashing_embedder), "other").take() is None
    slow.go.set()
    outcome = await taking
    assert outcome is not None and (outcome.documents, outcome.lost) == (1, 0)
    assert await pool.fetchval("SELECT done_by FROM index_queue") == "slow"


async def test_a_claimer_stuck_past_its_hold_limit_lets_go_and_its_late_write_is_refused(
    pool: asyncpg.Pool, queued: IndexQueue, hashing_embedder: Any
) -> None:
    hung = HeldEmbedder(hashing_embedder)
    taking = asyncio.create_task(consumer(pool, hung, "hung", max_hold_leases=2).take())
    await hung.started.wait()
    ready = HeldEmbedder(hashing_embedder)
    ready.go.set()
    # Renewed for two leases, then left to lapse: another claimer takes the document.
    taken = None
    for _ in range(40):
        await asyncio.sleep(LEASE / 4)
        if (taken := await consumer(pool, ready, "other").take()) is not None:
            break
    assert taken is not None and taken.documents == 1
    hung.go.set()  # the stuck call returns at last: its write must not replace the other's
    late = await taking
    assert late is not None and (late.documents, late.lost) == (0, 1)
    row = await pool.fetchrow("SELECT done_by, attempts FROM index_queue")
    assert dict(row) == {"done_by": "other", "attempts": 2}
    assert await pool.fetchval("SELECT count(*) FROM chunks") == 1


@pytest.mark.parametrize("how", ["fails", "is cancelled"])
async def test_a_claimer_that_fails_or_is_stopped_hands_its_documents_back_at_once(
    pool: asyncpg.Pool, queued: IndexQueue, hashing_embedder: Any, how: str
) -> None:
    held = HeldEmbedder(hashing_embedder, fail=how == "fails")
    taking = asyncio.create_task(consumer(pool, held, "first", lease=600).take())
    await held.started.wait()
    if how == "fails":
        held.go.set()
        with pytest.raises(RuntimeError):
            await taking
    else:
        taking.cancel()
        with pytest.raises(asyncio.CancelledError):
            await taking
    # Claimable again now, long before its ten-minute lease would have run out.
    row = await pool.fetchrow("SELECT claimed_by, lease_expires_at <= now() AS f FROM index_queue")
    assert (row["claimed_by"], row["f"]) == (None, True)
    ready = HeldEmbedder(hashing_embedder)
    ready.go.set()
    outcome = await consumer(pool, ready, "second").take()
    assert outcome is not None and outcome.documents == 1
    assert await pool.fetchval("SELECT attempts FROM index_queue") == 2


async def test_a_worker_whose_model_fails_hands_back_leaves_and_raises(
    pool: asyncpg.Pool, queued: IndexQueue, hashing_embedder: Any
) -> None:
    broken = HeldEmbedder(hashing_embedder, fail=True)
    broken.go.set()
    worker = IndexWorker(
        queue=IndexQueue(pool),
        registry=WorkerRegistry(pool),
        documents=DocumentRepository(pool),
        embedder=broken,
        consumer_options=ConsumerOptions(lease_seconds=600, batch_chunks=8),
        name="broken",
    )
    # Not a worker that keeps beating with no lane left, which a run would wait on forever.
    with pytest.raises(RuntimeError, match="fell over"):
        await asyncio.wait_for(worker.run(asyncio.Event()), timeout=30)
    assert await WorkerRegistry(pool).alive() == []
    row = await pool.fetchrow("SELECT claimed_by, attempts, status FROM index_queue")
    assert dict(row) == {"claimed_by": None, "attempts": 1, "status": "pending"}
