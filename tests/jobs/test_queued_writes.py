"""A reindex run's documents go through the queue: who embeds them, and what the run counts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg

from jobs.config import DirectorySettings, DirectorySourceConfig
from jobs.documents import SourceDocument, SourceItem
from jobs.indexing import Indexer, IndexOptions, QueuedRun
from jobs.queue_consumer import ConsumerOptions
from jobs.queued_writes import Distribution
from jobs.reindex import ReindexJob
from jobs.worker import IndexWorker, WorkerOptions
from store.documents import DocumentRepository
from store.embedding import SentenceTransformerEmbedder
from store.index_queue import IndexQueue
from store.index_runs import IndexRunRepository
from store.index_workers import WorkerRegistry

DOCS = 8


def write_docs(root: Path) -> None:
    root.mkdir()
    for d in range(DOCS):
        (root / f"doc{d}.md").write_text(
            f"# Page {d}\n\nTeam {d} books room {d} through the facilities desk.\n"
        )


def job(pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, base: Path) -> ReindexJob:
    documents = DocumentRepository(pool)
    return ReindexJob(
        pool=pool,
        indexer=Indexer(repository=documents, embedder=embedder, embed_batch_size=2),
        documents=documents,
        runs=IndexRunRepository(pool),
        base_dir=base,
        distribution=Distribution(
            queue=IndexQueue(pool), workers=WorkerRegistry(pool), poll_seconds=0.05
        ),
        claimer="coordinator",
    )


SOURCE = DirectorySourceConfig(name="docs", settings=DirectorySettings(root="docs"))


async def done_by(pool: asyncpg.Pool) -> dict[str, int]:
    rows = await pool.fetch(
        "SELECT done_by, count(*) AS n FROM index_queue WHERE status = 'done' GROUP BY done_by"
    )
    return {r["done_by"]: r["n"] for r in rows}


async def test_with_no_worker_alive_the_run_embeds_every_queued_document_itself(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    write_docs(tmp_path / "docs")
    outcome = await job(pool, embedder, tmp_path).run([SOURCE])
    report = outcome.reports[0]
    assert (report.documents_added, report.chunks_embedded, report.chunks_reused) == (DOCS, DOCS, 0)
    assert await done_by(pool) == {"coordinator": DOCS}
    (run,) = await IndexRunRepository(pool).latest()
    assert (run.status, run.counts["documents_added"]) == ("succeeded", DOCS)

    (tmp_path / "docs" / "doc0.md").write_text("# Page 0\n\nTeam 0 moved to room 40.\n")
    (tmp_path / "docs" / "doc1.md").unlink()
    again = (await job(pool, embedder, tmp_path).run([SOURCE])).reports[0]
    assert (again.documents_updated, again.documents_deleted, again.documents_unchanged) == (
        1,
        1,
        DOCS - 2,
    )
    assert (again.chunks_embedded, again.chunks_deleted) == (1, 2)
    # The first run's items were cleared when the second started; only its own are left.
    assert await pool.fetchval("SELECT count(*) FROM index_queue") == 1


async def test_while_a_worker_is_alive_the_run_waits_and_the_worker_embeds(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    write_docs(tmp_path / "docs")
    worker = IndexWorker(
        queue=IndexQueue(pool),
        registry=WorkerRegistry(pool),
        documents=DocumentRepository(pool),
        embedder=embedder,
        consumer_options=ConsumerOptions(lease_seconds=10, batch_chunks=2),
        options=WorkerOptions(idle_seconds=0.05),
        name="worker-1",
    )
    stop = asyncio.Event()
    working = asyncio.create_task(worker.run(stop))
    try:
        while not await WorkerRegistry(pool).alive():
            await asyncio.sleep(0.02)
        report = (await job(pool, embedder, tmp_path).run([SOURCE])).reports[0]
    finally:
        stop.set()
        totals = await working
    assert await done_by(pool) == {"worker-1": DOCS}
    assert (totals.documents, totals.batches) == (DOCS, DOCS // 2)
    assert (report.documents_added, report.chunks_embedded) == (DOCS, DOCS)
    assert await WorkerRegistry(pool).alive() == []  # it left when stopped


async def test_when_the_only_worker_stops_beating_the_run_finishes_the_work_itself(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    write_docs(tmp_path / "docs")
    # A worker that registered and then died: alive for one lease, then not.
    await WorkerRegistry(pool).register("ghost", model=embedder.identity, lease_seconds=1)
    # Bounded: a run that never stops waiting for the ghost fails here, not in a CI timeout.
    outcome = await asyncio.wait_for(job(pool, embedder, tmp_path).run([SOURCE]), timeout=120)
    report = outcome.reports[0]
    assert report.documents_added == DOCS
    assert await done_by(pool) == {"coordinator": DOCS}
    # It waited for the ghost while the ghost counted as alive (the database's clock).
    assert await pool.fetchval(
        """SELECT min(q.done_at) >= w.last_seen_at + interval '1 second'
           FROM index_queue q, index_workers w WHERE w.id = 'ghost' GROUP BY w.last_seen_at"""
    )


async def test_a_dry_run_queues_nothing(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    write_docs(tmp_path / "docs")
    report = (await job(pool, embedder, tmp_path).run([SOURCE], dry_run=True)).reports[0]
    assert report.documents_added == DOCS
    assert await pool.fetchval("SELECT count(*) FROM index_queue") == 0


class ListingThatWaitsForWrites:
    """A source that lists two groups, then waits (bounded) for written documents before
    listing the rest: what a long listing sees when writes start while it runs."""

    name = "slow-listing"

    def __init__(self, pool: asyncpg.Pool, first: int, rest: int) -> None:
        self._pool = pool
        self._first = first
        self._rest = rest
        self.written_while_listing = 0

    def _document(self, n: int) -> SourceDocument:
        return SourceDocument(
            uri=f"page-{n}", title=f"Page {n}", url=f"https://wiki.test/{n}",
            text=f"Team {n} books room {n} through the facilities desk.",
        )  # fmt: skip

    async def documents(self) -> AsyncIterator[SourceItem]:
        for n in range(self._first):
            yield self._document(n)
        deadline = asyncio.get_running_loop().time() + 20
        while asyncio.get_running_loop().time() < deadline:
            self.written_while_listing = await self._pool.fetchval("SELECT count(*) FROM documents")
            if self.written_while_listing:
                break
            await asyncio.sleep(0.05)
        for n in range(self._first, self._first + self._rest):
            yield self._document(n)


async def test_with_no_worker_alive_documents_are_written_while_the_listing_still_runs(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder
) -> None:
    documents = DocumentRepository(pool)
    indexer = Indexer(repository=documents, embedder=embedder, embed_batch_size=16)
    distribution = Distribution(
        queue=IndexQueue(pool), workers=WorkerRegistry(pool), poll_seconds=0.05
    )
    source = ListingThatWaitsForWrites(pool, first=64, rest=8)
    run_id = await IndexRunRepository(pool).start(source=source.name)
    report = await indexer.run(
        source,
        options=IndexOptions(kind="confluence"),
        queue=QueuedRun(distribution, run_id, "coordinator"),
    )
    # The run took the first queued groups itself before the listing ended...
    assert source.written_while_listing > 0
    # ...and still wrote every document once, in the queue's counts.
    assert (report.documents_added, report.chunks_embedded) == (72, 72)
    assert await done_by(pool) == {"coordinator": 72}
