"""The index_queue table: changed documents waiting to be embedded, claimed under a lease.

A coordinating run queues each changed document with its chunks (`enqueue`). A claimer
takes a few items (`claim`: `FOR UPDATE SKIP LOCKED`, so concurrent claimers never wait
for each other nor get the same item), with a fresh token and a lease on the database's
clock, renewed while it embeds (`renew`). `finish` swaps the document's chunks, marks the
item done and records its counts in ONE transaction, and only while the item still holds
the claimer's token: a claimer whose lease ran out and was taken over writes nothing, so
no document is written or counted twice. An item whose claimer died is claimable again
once its lease expires. The run record sums the done items (`totals`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID, uuid4

import asyncpg

from store.documents import ChunkRecord, DocumentRecord, bump_corpus_version, swap_document
from store.embedding import ModelIdentity


@dataclass(frozen=True, slots=True)
class QueuedChunk:
    """One chunk as the coordinator cut it; the claimer adds its vector."""

    ordinal: int
    text: str
    text_hash: str
    char_start: int
    char_end: int
    heading_path: tuple[str, ...]

    def with_embedding(self, embedding: Any) -> ChunkRecord:
        return ChunkRecord(
            ordinal=self.ordinal,
            text=self.text,
            text_hash=self.text_hash,
            char_start=self.char_start,
            char_end=self.char_end,
            heading_path=self.heading_path,
            embedding=embedding,
        )


@dataclass(frozen=True, slots=True)
class QueuedDocument:
    document: DocumentRecord
    chunks: tuple[QueuedChunk, ...]


@dataclass(frozen=True, slots=True)
class ClaimedItem:
    id: int
    run_id: int
    source_id: int
    queued: QueuedDocument


@dataclass(frozen=True, slots=True)
class Claim:
    """Items one claimer holds until its lease expires; `token` proves it still does."""

    token: UUID
    claimer: str
    items: tuple[ClaimedItem, ...]


@dataclass(frozen=True, slots=True)
class ItemResult:
    """What finishing one item did, as the run record counts it."""

    added: bool
    chunks_embedded: int
    chunks_reused: int
    chunks_deleted: int


@dataclass(frozen=True, slots=True)
class QueueProgress:
    pending: int
    done: int
    failed: int


@dataclass(frozen=True, slots=True)
class RunTotals:
    """The done and failed items of one run, summed."""

    documents_added: int
    documents_updated: int
    chunks_embedded: int
    chunks_reused: int
    chunks_deleted: int
    failures: list[dict[str, str]]
    # Documents done by each claimer: how the work was shared.
    by_claimer: dict[str, int]


# Only the documents of a running run whose model is the index's active one are claimable.
_CLAIM = """
WITH picked AS (
    SELECT q.id, q.chunk_count FROM index_queue q
    WHERE q.status = 'pending'
      AND (q.lease_expires_at IS NULL OR q.lease_expires_at <= now())
      AND q.attempts < $5
      AND q.model_name = $3 AND q.model_dimension = $4
      AND ($6::bigint IS NULL OR q.run_id = $6)
      AND EXISTS (SELECT 1 FROM index_runs r WHERE r.id = q.run_id AND r.status = 'running')
      AND EXISTS (SELECT 1 FROM embedding_model m WHERE m.role = 'active'
                  AND m.name = q.model_name AND m.dimension = q.model_dimension)
    ORDER BY q.id
    LIMIT $7
    FOR UPDATE OF q SKIP LOCKED
), budgeted AS (
    SELECT id, sum(chunk_count) OVER (ORDER BY id) - chunk_count AS before FROM picked
)
UPDATE index_queue q
   SET claimed_by = $1, claim_token = $2, attempts = q.attempts + 1,
       lease_expires_at = now() + make_interval(secs => $8)
  FROM budgeted b
 WHERE q.id = b.id AND b.before < $7
RETURNING q.id, q.run_id, q.source_id, q.payload
"""


class IndexQueue:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def enqueue(
        self,
        *,
        run_id: int,
        source_id: int,
        model: ModelIdentity,
        documents: Sequence[QueuedDocument],
    ) -> None:
        """Queue changed documents of run `run_id`, to be embedded with `model`."""
        await self._pool.executemany(
            """INSERT INTO index_queue
                   (run_id, source_id, uri, model_name, model_dimension, chunk_count, payload)
               VALUES ($1, $2, $3, $4, $5, $6, $7)""",
            [
                (run_id, source_id, d.document.uri, model.name, model.dimension,
                 len(d.chunks), json.dumps(_payload(d)))
                for d in documents
            ],
        )  # fmt: skip

    async def claim(
        self,
        *,
        claimer: str,
        model: ModelIdentity,
        lease_seconds: float,
        max_chunks: int,
        max_attempts: int,
        run_id: int | None = None,
    ) -> Claim | None:
        """Claim pending items in queue order until they hold `max_chunks` chunks (at
        least one item); None when nothing is claimable. Items locked by a concurrent
        claim are skipped, not waited for. `run_id` limits the claim to one run."""
        token = uuid4()
        rows = await self._pool.fetch(
            _CLAIM,
            claimer,
            token,
            model.name,
            model.dimension,
            max_attempts,
            run_id,
            max(1, max_chunks),
            float(lease_seconds),
        )
        if not rows:
            return None
        items = sorted(
            (_claimed(r) for r in rows),
            key=lambda item: item.id,
        )
        return Claim(token=token, claimer=claimer, items=tuple(items))

    async def renew(self, claim: Claim, *, lease_seconds: float) -> int:
        """Extend the lease of the claim's items still pending; how many it still holds."""
        result = await self._pool.execute(
            """UPDATE index_queue SET lease_expires_at = now() + make_interval(secs => $2)
               WHERE claim_token = $1 AND status = 'pending'""",
            claim.token,
            float(lease_seconds),
        )
        return int(result.split()[-1])

    async def release(self, claim: Claim) -> None:
        """Give the claim's unfinished items back at once (a worker stopping, or failing)."""
        await self._pool.execute(
            """UPDATE index_queue SET lease_expires_at = now(), claimed_by = NULL,
                      claim_token = NULL
               WHERE claim_token = $1 AND status = 'pending'""",
            claim.token,
        )

    async def finish(
        self,
        claim: Claim,
        item: ClaimedItem,
        *,
        chunks: Sequence[ChunkRecord],
        embedded: int,
        reused: int,
    ) -> ItemResult | None:
        """Swap the document's chunks, mark its item done and record its counts, in one
        transaction; None (and nothing written) if the claim no longer holds the item or
        the item's model stopped being the active one."""
        async with self._pool.acquire() as conn, conn.transaction():
            if not await _still_held(conn, claim, item):
                return None
            swap = await swap_document(
                conn, source_id=item.source_id, document=item.queued.document, chunks=chunks
            )
            result = ItemResult(swap.added, embedded, reused, swap.previous_chunks)
            await conn.execute(
                """UPDATE index_queue SET status = 'done', payload = NULL, done_by = claimed_by,
                          done_at = now(), added = $2, chunks_embedded = $3,
                          chunks_reused = $4, chunks_deleted = $5
                   WHERE id = $1""",
                item.id,
                result.added,
                result.chunks_embedded,
                result.chunks_reused,
                result.chunks_deleted,
            )
            await bump_corpus_version(conn)
        return result

    async def progress(self, run_id: int) -> QueueProgress:
        row = await self._pool.fetchrow(
            """SELECT count(*) FILTER (WHERE status = 'pending') AS pending,
                      count(*) FILTER (WHERE status = 'done') AS done,
                      count(*) FILTER (WHERE status = 'failed') AS failed
               FROM index_queue WHERE run_id = $1""",
            run_id,
        )
        return QueueProgress(row["pending"], row["done"], row["failed"])

    async def give_up_stuck(self, run_id: int, *, max_attempts: int) -> int:
        """Mark failed the items every claimer of which stopped mid-way `max_attempts`
        times (and whose last lease expired): a document that kills its workers must not
        keep the run waiting forever. Returns how many."""
        result = await self._pool.execute(
            """UPDATE index_queue SET status = 'failed', payload = NULL, done_at = now(),
                      failure = 'indexing was attempted ' || attempts || ' times and '
                                || 'each attempt stopped before it finished'
               WHERE run_id = $1 AND status = 'pending' AND attempts >= $2
                 AND lease_expires_at <= now()""",
            run_id,
            max_attempts,
        )
        return int(result.split()[-1])

    async def totals(self, run_id: int) -> RunTotals:
        rows = await self._pool.fetch(
            """SELECT status, uri, added, chunks_embedded, chunks_reused, chunks_deleted,
                      done_by, failure
               FROM index_queue WHERE run_id = $1 AND status <> 'pending' ORDER BY id""",
            run_id,
        )
        done = [r for r in rows if r["status"] == "done"]
        by_claimer: dict[str, int] = {}
        for r in done:
            by_claimer[r["done_by"]] = by_claimer.get(r["done_by"], 0) + 1
        return RunTotals(
            documents_added=sum(1 for r in done if r["added"]),
            documents_updated=sum(1 for r in done if not r["added"]),
            chunks_embedded=sum(r["chunks_embedded"] for r in done),
            chunks_reused=sum(r["chunks_reused"] for r in done),
            chunks_deleted=sum(r["chunks_deleted"] for r in done),
            failures=[{"uri": r["uri"], "reason": r["failure"]} for r in rows if r["failure"]],
            by_claimer=by_claimer,
        )

    async def discard_finished_runs(self) -> int:
        """Delete the items of runs no longer running (kept until then for inspection)."""
        result = await self._pool.execute(
            """DELETE FROM index_queue q USING index_runs r
               WHERE r.id = q.run_id AND r.status <> 'running'"""
        )
        return int(result.split()[-1])


async def _still_held(conn: asyncpg.Connection, claim: Claim, item: ClaimedItem) -> bool:
    """Lock the item if `claim` still holds it, and the active model row (FOR SHARE), so a
    model switch waits for this transaction and no vector of a retired model is written."""
    row = await conn.fetchrow(
        """SELECT model_name, model_dimension FROM index_queue
           WHERE id = $1 AND claim_token = $2 AND status = 'pending' FOR UPDATE""",
        item.id,
        claim.token,
    )
    if row is None:
        return False
    active = await conn.fetchrow(
        "SELECT name, dimension FROM embedding_model WHERE role = 'active' FOR SHARE"
    )
    return active is not None and (active["name"], active["dimension"]) == (
        row["model_name"],
        row["model_dimension"],
    )


def _claimed(row: asyncpg.Record) -> ClaimedItem:
    return ClaimedItem(row["id"], row["run_id"], row["source_id"], _queued(row["payload"]))


def _payload(queued: QueuedDocument) -> dict[str, Any]:
    d = queued.document
    return {
        "document": {
            "uri": d.uri, "title": d.title, "url": d.url, "text": d.text,
            "content_hash": d.content_hash, "metadata_hash": d.metadata_hash,
            "metadata": d.metadata,
            "source_updated_at": d.source_updated_at.isoformat() if d.source_updated_at else None,
            "collection": d.collection,
        },
        "chunks": [
            [c.ordinal, c.text, c.text_hash, c.char_start, c.char_end, list(c.heading_path)]
            for c in queued.chunks
        ],
    }  # fmt: skip


def _queued(payload: str) -> QueuedDocument:
    data = json.loads(payload)
    d = data["document"]
    updated = d["source_updated_at"]
    document = DocumentRecord(
        uri=d["uri"],
        title=d["title"],
        url=d["url"],
        text=d["text"],
        content_hash=d["content_hash"],
        metadata_hash=d["metadata_hash"],
        metadata=d["metadata"],
        source_updated_at=datetime.fromisoformat(updated) if updated else None,
        # .get: items queued before migration 0010 carry no collection.
        collection=d.get("collection"),
    )
    chunks = tuple(
        QueuedChunk(ordinal, text, digest, start, end, tuple(path))
        for ordinal, text, digest, start, end, path in data["chunks"]
    )
    return QueuedDocument(document, chunks)
