"""Reading the indexed corpus back: what the keyword index and the reader need from Postgres.

The keyword index reads every chunk once (`full_read`), then only the chunks of the
documents that changed since (`changes_since`, from the change log of migration 0005).
Each read happens in one repeatable-read transaction and returns the Postgres snapshot
it saw, which is where the next read of changes starts. A chunk's text never changes
under its id (a reindex replaces a document's chunks with new rows). Search results are
fetched by id, so a hit always reflects the rows as they are now.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

import asyncpg
import numpy as np

from store.vector_search import ChunkHit, chunk_hit

# When a document last changed: the source's own date if it gave one, else our index time.
UPDATED_AT = "coalesce(d.source_updated_at, d.updated_at)"

_INDEXED_CHUNKS_SQL = f"""
SELECT c.id, c.document_id, d.source_id, d.title,
       extract(epoch FROM {UPDATED_AT})::float8 AS updated_at, c.text, c.heading_path,
       d.collection
FROM chunks c
JOIN documents d ON d.id = c.document_id
"""

# The documents written by transactions that `$1` (an earlier snapshot) could not see.
_CHANGED_DOCUMENTS_SQL = """
SELECT DISTINCT document_id FROM corpus_changes
WHERE xid >= pg_snapshot_xmin($1::text::pg_snapshot)
  AND NOT pg_visible_in_snapshot(xid, $1::text::pg_snapshot)
LIMIT $2
"""

# Whether the log was pruned of rows a reader at `$1` might need (migration 0009).
_PRUNED_PAST_SQL = """
SELECT through_xid >= pg_snapshot_xmin($1::text::pg_snapshot) FROM corpus_changes_pruned
"""

_HITS_SQL = f"""
SELECT c.id, c.document_id, c.ordinal, c.text, c.char_start, c.char_end, c.heading_path,
       d.title, d.url, d.uri, s.name AS source,
       coalesce(d.collection, s.collection) AS collection, {UPDATED_AT} AS updated_at
FROM chunks c
JOIN documents d ON d.id = c.document_id
JOIN sources s ON s.id = d.source_id
WHERE c.id = ANY($1::bigint[])
"""

_HITS_WITH_SIMILARITY_SQL = f"""
SELECT c.id, c.document_id, c.ordinal, c.text, c.char_start, c.char_end, c.heading_path,
       d.title, d.url, d.uri, s.name AS source,
       coalesce(d.collection, s.collection) AS collection, {UPDATED_AT} AS updated_at,
       1 - (c.embedding <=> $2) AS similarity
FROM chunks c
JOIN documents d ON d.id = c.document_id
JOIN sources s ON s.id = d.source_id
WHERE c.id = ANY($1::bigint[])
"""

# The chunks of each (document, first ordinal, last ordinal) window, then the text of each
# of those documents: one round trip for everything reading around hits needs. A row is a
# chunk's span (text NULL) or a document's text (id NULL).
_WINDOWS_SQL = """
SELECT c.id, c.document_id, c.ordinal, c.char_start, c.char_end, c.heading_path,
       NULL::text AS text
FROM chunks c
JOIN unnest($1::bigint[], $2::int[], $3::int[]) AS w(document_id, first, last)
  ON c.document_id = w.document_id AND c.ordinal BETWEEN w.first AND w.last
UNION ALL
SELECT NULL, d.id, NULL, NULL, NULL, NULL, d.text
FROM documents d
WHERE d.id = ANY($1::bigint[])
ORDER BY 2, 3
"""


@dataclass(frozen=True, slots=True)
class IndexedChunk:
    """A chunk as the keyword index reads it: its text and what its filters need."""

    chunk_id: int
    document_id: int
    source_id: int
    title: str
    updated_at: float  # epoch seconds
    text: str
    heading_path: tuple[str, ...]
    # The document's own collection (migration 0010); None: its source's.
    collection: str | None = None


@dataclass(frozen=True, slots=True)
class CorpusPoint:
    """Where one read of the corpus stands: the version, the Postgres snapshot it read in
    (text of a pg_snapshot), and every source's (name, collection) by id."""

    version: int
    snapshot: str
    sources: dict[int, tuple[str, str]]


@dataclass(frozen=True, slots=True)
class CorpusChanges:
    """The documents that changed since an earlier point, and their chunks as they are now
    (a document without chunks was deleted)."""

    point: CorpusPoint
    documents: list[int]
    chunks: list[IndexedChunk]


class FullRead:
    """Every chunk at one point, in id order, read in batches inside one transaction."""

    def __init__(self, conn: asyncpg.Connection, point: CorpusPoint) -> None:
        self._conn = conn
        self.point = point

    async def batches(self, size: int) -> AsyncIterator[list[IndexedChunk]]:
        cursor = await self._conn.cursor(_INDEXED_CHUNKS_SQL + " ORDER BY c.id")
        while rows := await cursor.fetch(size):
            yield [_indexed(r) for r in rows]


@dataclass(frozen=True, slots=True)
class ChunkText:
    text: str
    heading_path: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ChunkSpan:
    """Where a chunk sits in its document's text."""

    chunk_id: int
    document_id: int
    ordinal: int
    char_start: int
    char_end: int
    heading_path: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ReadWindows:
    """What reading around hits needs: each document's chunk spans in the windows asked
    for (by document id, in document order), and each of those documents' text."""

    spans: dict[int, list[ChunkSpan]]
    texts: dict[int, str]


class CorpusReader:
    """Read-only queries over chunks and documents (the tables are owned by DocumentRepository)."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def version(self) -> int:
        return int(await self._pool.fetchval("SELECT version FROM corpus_version"))

    @asynccontextmanager
    async def full_read(self) -> AsyncIterator[FullRead]:
        """A read of every chunk at one snapshot (the transaction stays open meanwhile)."""
        async with self._pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
            yield FullRead(conn, await _point(conn))

    async def changes_since(self, snapshot: str, *, max_documents: int) -> CorpusChanges | None:
        """What changed since the read at `snapshot`; None when more than `max_documents`
        documents did (reading everything again is then the cheaper way), or when the change
        log was pruned of rows this snapshot could need (only a reader idle for a day)."""
        async with self._pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
            point = await _point(conn)
            if await conn.fetchval(_PRUNED_PAST_SQL, snapshot):
                return None  # rows this reader needs may have been pruned from the log
            rows = await conn.fetch(_CHANGED_DOCUMENTS_SQL, snapshot, max_documents + 1)
            if len(rows) > max_documents:
                return None
            documents = [r["document_id"] for r in rows]
            chunks = await conn.fetch(
                _INDEXED_CHUNKS_SQL + " WHERE c.document_id = ANY($1::bigint[]) ORDER BY c.id",
                documents,
            )
        return CorpusChanges(point, documents, [_indexed(r) for r in chunks])

    async def chunk_texts(self, chunk_ids: Sequence[int]) -> dict[int, ChunkText]:
        """Text and heading path of these chunks (ids no longer stored are left out): what
        grounding verification checks quotes against."""
        rows = await self._pool.fetch(
            "SELECT id, text, heading_path FROM chunks WHERE id = ANY($1::bigint[])",
            list(chunk_ids),
        )
        return {r["id"]: ChunkText(r["text"], tuple(r["heading_path"])) for r in rows}

    async def hits(
        self, scored: Sequence[tuple[int, float]], *, similar_to: np.ndarray | None = None
    ) -> list[ChunkHit]:
        """ChunkHits for (chunk id, score) pairs, in the given order; gone chunks are skipped.

        With `similar_to`, each hit's score is instead its cosine similarity to that vector.
        """
        if not scored:
            return []
        ids = [chunk_id for chunk_id, _ in scored]
        if similar_to is None:
            rows = await self._pool.fetch(_HITS_SQL, ids)
        else:
            rows = await self._pool.fetch(_HITS_WITH_SIMILARITY_SQL, ids, similar_to)
        by_id = {r["id"]: r for r in rows}
        return [
            chunk_hit(
                by_id[chunk_id],
                score=score if similar_to is None else float(by_id[chunk_id]["similarity"] or 0),
            )
            for chunk_id, score in scored
            if chunk_id in by_id
        ]

    async def windows(self, windows: Sequence[tuple[int, int, int]]) -> ReadWindows:
        """Spans of the chunks in each (document id, first ordinal, last ordinal) window,
        and the text of each of those documents, in one statement."""
        if not windows:
            return ReadWindows({}, {})
        rows = await self._pool.fetch(
            _WINDOWS_SQL,
            [w[0] for w in windows],
            [w[1] for w in windows],
            [w[2] for w in windows],
        )
        spans: dict[int, list[ChunkSpan]] = {}
        texts: dict[int, str] = {}
        for r in rows:
            if r["id"] is None:
                texts[r["document_id"]] = r["text"]
                continue
            spans.setdefault(r["document_id"], []).append(
                ChunkSpan(
                    r["id"],
                    r["document_id"],
                    r["ordinal"],
                    r["char_start"],
                    r["char_end"],
                    tuple(r["heading_path"]),
                )
            )
        return ReadWindows(spans, texts)

    async def chunk_uris(self) -> dict[int, str]:
        """Chunk id → its document's uri, for every stored chunk (evaluation maps hits back)."""
        rows = await self._pool.fetch(
            "SELECT c.id, d.uri FROM chunks c JOIN documents d ON d.id = c.document_id"
        )
        return {r["id"]: r["uri"] for r in rows}


async def _point(conn: asyncpg.Connection) -> CorpusPoint:
    # The snapshot first: in a repeatable-read transaction it is the one every later
    # statement reads in.
    snapshot = await conn.fetchval("SELECT pg_current_snapshot()::text")
    version = await conn.fetchval("SELECT version FROM corpus_version")
    sources = await conn.fetch("SELECT id, name, collection FROM sources")
    return CorpusPoint(
        int(version), snapshot, {r["id"]: (r["name"], r["collection"]) for r in sources}
    )


def _indexed(row: asyncpg.Record) -> IndexedChunk:
    return IndexedChunk(
        row["id"],
        row["document_id"],
        row["source_id"],
        row["title"],
        float(row["updated_at"]),
        row["text"],
        tuple(row["heading_path"]),
        row["collection"],
    )
