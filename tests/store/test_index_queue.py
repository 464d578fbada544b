"""The index queue's claim, lease and finish SQL against a real Postgres."""

from __future__ import annotations

import asyncio

import asyncpg
import numpy as np
import pytest

from store.documents import DocumentRecord, DocumentRepository
from store.embedding import ModelIdentity
from store.index_queue import Claim, IndexQueue, QueuedChunk, QueuedDocument
from store.index_runs import IndexRunRepository
from store.index_workers import WorkerRegistry

MODEL = ModelIdentity("test-model", 4)
LEASE = 30.0


def queued(uri: str, chunks: int = 1) -> QueuedDocument:
    text = " ".join(f"part {n} of {uri}." for n in range(chunks))
    document = DocumentRecord(
        uri=uri, title=uri, url=None, text=text, content_hash=f"c-{uri}", metadata_hash="m"
    )
    pieces = tuple(
        QueuedChunk(n, f"part {n} of {uri}.", f"h-{uri}-{n}", 0, 1, (uri,)) for n in range(chunks)
    )
    return QueuedDocument(document, pieces)


@pytest.fixture
async def run(pool: asyncpg.Pool) -> tuple[int, int]:
    """(run id, source id) of a running run, with MODEL as the index's active model."""
    await DocumentRepository(pool).embedding_space().adopt_first(MODEL)
    source_id = await DocumentRepository(pool).ensure_source(name="s", kind="directory")
    return await IndexRunRepository(pool).start(source="s"), source_id


async def fill(pool: asyncpg.Pool, run: tuple[int, int], uris: list[str], chunks: int = 1) -> None:
    await IndexQueue(pool).enqueue(
        run_id=run[0], source_id=run[1], model=MODEL, documents=[queued(u, chunks) for u in uris]
    )


async def claim(pool: asyncpg.Pool, claimer: str, **overrides: object) -> Claim | None:
    arguments: dict[str, object] = {
        "claimer": claimer, "model": MODEL, "lease_seconds": LEASE, "max_chunks": 1,
        "max_attempts": 5,
    }  # fmt: skip
    return await IndexQueue(pool).claim(**{**arguments, **overrides})  # type: ignore[arg-type]


async def finish(pool: asyncpg.Pool, held: Claim, index: int = 0) -> object:
    item = held.items[index]
    chunks = [c.with_embedding(np.full(4, 0.5, np.float32)) for c in item.queued.chunks]
    return await IndexQueue(pool).finish(held, item, chunks=chunks, embedded=len(chunks), reused=0)


async def test_concurrent_claimers_never_get_the_same_item(
    database_url: str, run: tuple[int, int]
) -> None:
    pool = await asyncpg.create_pool(database_url, min_size=8, max_size=8)
    try:
        await fill(pool, run, [f"d{n:03}" for n in range(120)])

        async def claimer(name: str) -> list[int]:
            got = []
            while held := await claim(pool, name):
                got += [item.id for item in held.items]
            return got

        claims = await asyncio.gather(*(claimer(f"c{n}") for n in range(8)))
    finally:
        await pool.close()
    everything = [item for got in claims for item in got]
    assert len(everything) == len(set(everything)) == 120
    assert sum(1 for got in claims if got) > 1  # they really ran side by side


async def test_items_locked_by_a_claim_in_progress_are_skipped_not_waited_for(
    pool: asyncpg.Pool, run: tuple[int, int]
) -> None:
    await fill(pool, run, ["a", "b", "c"])
    async with pool.acquire() as other, other.transaction():
        # Another claimer's statement holds "a" and "b" (as FOR UPDATE does mid-claim).
        await other.execute("SELECT id FROM index_queue WHERE uri IN ('a', 'b') FOR UPDATE")
        held = await asyncio.wait_for(claim(pool, "me", max_chunks=3), timeout=5)
    assert held is not None
    assert [item.queued.document.uri for item in held.items] == ["c"]


async def test_a_claim_takes_documents_until_it_holds_the_chunk_budget(
    pool: asyncpg.Pool, run: tuple[int, int]
) -> None:
    await fill(pool, run, ["a", "b", "c", "d"], chunks=3)
    held = await claim(pool, "me", max_chunks=7)  # 3 + 3 < 7, so a third document joins
    assert held is not None
    assert [item.queued.document.uri for item in held.items] == ["a", "b", "c"]
    assert [len(item.queued.chunks) for item in held.items] == [3, 3, 3]


async def test_an_expired_lease_is_claimable_again_and_only_the_new_claim_can_finish(
    pool: asyncpg.Pool, run: tuple[int, int]
) -> None:
    await fill(pool, run, ["a"])
    first = await claim(pool, "dies", lease_seconds=1)
    assert first is not None
    assert await claim(pool, "other") is None  # leased: not claimable
    await asyncio.sleep(1.2)
    second = await claim(pool, "other")
    assert second is not None and second.items[0].id == first.items[0].id

    assert await finish(pool, first) is None  # the first claimer came back too late
    assert await pool.fetchval("SELECT count(*) FROM documents") == 0
    assert await finish(pool, second) is not None
    row = await pool.fetchrow("SELECT status, done_by, attempts FROM index_queue")
    assert dict(row) == {"status": "done", "done_by": "other", "attempts": 2}


async def test_finishing_with_a_stale_token_writes_and_counts_nothing(
    pool: asyncpg.Pool, run: tuple[int, int]
) -> None:
    await fill(pool, run, ["a"], chunks=2)
    held = await claim(pool, "me", max_chunks=2)
    assert held is not None
    version = await pool.fetchval("SELECT version FROM corpus_version")
    # Someone else took the item over (a new claim token) while this claimer worked.
    await pool.execute("UPDATE index_queue SET claim_token = gen_random_uuid()")

    assert await finish(pool, held) is None
    assert await pool.fetchval("SELECT count(*) FROM documents") == 0
    assert await pool.fetchval("SELECT count(*) FROM chunks") == 0
    assert await pool.fetchval("SELECT version FROM corpus_version") == version
    row = await pool.fetchrow(
        "SELECT status, chunks_embedded, payload IS NULL AS e FROM index_queue"
    )
    assert dict(row) == {"status": "pending", "chunks_embedded": None, "e": False}


async def test_finishing_writes_the_document_marks_the_item_and_counts_it_once(
    pool: asyncpg.Pool, run: tuple[int, int]
) -> None:
    await fill(pool, run, ["a", "b"], chunks=2)
    held = await claim(pool, "me", max_chunks=4)
    assert held is not None
    results = [await finish(pool, held, index) for index in range(2)]
    assert all(results)
    assert await finish(pool, held, 0) is None  # done already: never written twice
    assert await pool.fetchval("SELECT count(*) FROM chunks") == 4
    assert await pool.fetchval("SELECT version FROM corpus_version") == 2
    totals = await IndexQueue(pool).totals(run[0])
    assert (totals.documents_added, totals.documents_updated) == (2, 0)
    assert (totals.chunks_embedded, totals.by_claimer) == (4, {"me": 2})
    assert await pool.fetchval("SELECT count(*) FROM index_queue WHERE payload IS NULL") == 2


async def test_only_running_runs_of_the_active_model_are_claimable(
    pool: asyncpg.Pool, run: tuple[int, int]
) -> None:
    await fill(pool, run, ["a"])
    assert await claim(pool, "me", model=ModelIdentity("other-model", 4)) is None
    await IndexRunRepository(pool).finish(run[0], status="failed", counts={}, failures=[])
    assert await claim(pool, "me") is None
    assert await IndexQueue(pool).discard_finished_runs() == 1


async def test_a_document_whose_claimers_keep_dying_is_given_up_as_failed(
    pool: asyncpg.Pool, run: tuple[int, int]
) -> None:
    await fill(pool, run, ["poison"])
    queue = IndexQueue(pool)
    for _ in range(2):
        assert await claim(pool, "dies", lease_seconds=1, max_attempts=2) is not None
        assert await queue.give_up_stuck(run[0], max_attempts=2) == 0  # leased, or tries left
        await asyncio.sleep(1.1)
    assert await claim(pool, "me", max_attempts=2) is None
    assert await queue.give_up_stuck(run[0], max_attempts=2) == 1
    totals = await queue.totals(run[0])
    assert totals.failures == [
        {"uri": "poison", "reason": "indexing was attempted 2 times and each attempt stopped "
         "before it finished"}
    ]  # fmt: skip
    assert (await queue.progress(run[0])).pending == 0


async def test_a_worker_is_alive_until_its_lease_passes_without_a_beat(pool: asyncpg.Pool) -> None:
    registry = WorkerRegistry(pool)
    await registry.register("w1", model=MODEL, lease_seconds=1)
    await registry.register("w2", model=ModelIdentity("other-model", 8), lease_seconds=1)
    assert [w.id for w in await registry.alive(MODEL)] == ["w1"]
    await asyncio.sleep(0.6)
    assert await registry.beat("w1")
    await asyncio.sleep(0.6)
    assert [w.id for w in await registry.alive()] == ["w1"]  # w2 missed its beat
    await registry.leave("w1")
    assert await registry.alive() == []
    assert not await registry.beat("w1")
