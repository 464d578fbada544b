"""Reading the indexed corpus back: what the keyword index and the reader need from Postgres.

The keyword index lists every chunk's metadata (cheap: no text), then fetches the text of
only the chunks it has not analysed yet; a chunk's text never changes under its id (a
reindex replaces a document's chunks with new rows). Search results are fetched by id,
so a hit always reflects the rows as they are now.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg
import numpy as np

from store.vector_search import ChunkHit, chunk_hit

# When a document last changed: the source's own date if it gave one, else our index time.
UPDATED_AT = "coalesce(d.source_updated_at, d.updated_at)"

_LISTING_SQL = f"""
SELECT c.id, c.document_id, d.title, s.name AS source, s.collection,
       extract(epoch FROM {UPDATED_AT}) AS updated_at
FROM chunks c
JOIN documents d ON d.id = c.document_id
JOIN sources s ON s.id = d.source_id
ORDER BY c.id
"""

_HITS_SQL = f"""
SELECT c.id, c.document_id, c.ordinal, c.text, c.char_start, c.char_end, c.heading_path,
       d.title, d.url, d.uri, s.name AS source, s.collection, {UPDATED_AT} AS updated_at
FROM chunks c
JOIN documents d ON d.id = c.document_id
JOIN sources s ON s.id = d.source_id
WHERE c.id = ANY($1::bigint[])
"""

_HITS_WITH_SIMILARITY_SQL = f"""
SELECT c.id, c.document_id, c.ordinal, c.text, c.char_start, c.char_end, c.heading_path,
       d.title, d.url, d.uri, s.name AS source, s.collection, {UPDATED_AT} AS updated_at,
       1 - (c.embedding <=> $2) AS similarity
FROM chunks c
JOIN documents d ON d.id = c.document_id
JOIN sources s ON s.id = d.source_id
WHERE c.id = ANY($1::bigint[])
"""

_SPANS_SQL = """
SELECT c.id, c.document_id, c.ordinal, c.char_start, c.char_end, c.heading_path
FROM chunks c
JOIN unnest($1::bigint[], $2::int[], $3::int[]) AS w(document_id, first, last)
  ON c.document_id = w.document_id AND c.ordinal BETWEEN w.first AND w.last
ORDER BY c.document_id, c.ordinal
"""


@dataclass(frozen=True, slots=True)
class CorpusListing:
    """Every chunk's metadata at one corpus version, as columns (one row per chunk)."""

    version: int
    chunk_ids: np.ndarray  # int64
    document_ids: np.ndarray  # int64
    titles: list[str]
    sources: list[str]
    collections: list[str]
    updated_at: np.ndarray  # float64 epoch seconds


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


class CorpusReader:
    """Read-only queries over chunks and documents (the tables are owned by DocumentRepository)."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def version(self) -> int:
        return int(await self._pool.fetchval("SELECT version FROM corpus_version"))

    async def listing(self) -> CorpusListing:
        """The version and every chunk's metadata, read in one snapshot."""
        async with self._pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
            version = await conn.fetchval("SELECT version FROM corpus_version")
            rows = await conn.fetch(_LISTING_SQL)
        return CorpusListing(
            version=int(version),
            chunk_ids=np.fromiter((r["id"] for r in rows), dtype=np.int64, count=len(rows)),
            document_ids=np.fromiter(
                (r["document_id"] for r in rows), dtype=np.int64, count=len(rows)
            ),
            titles=[r["title"] for r in rows],
            sources=[r["source"] for r in rows],
            collections=[r["collection"] for r in rows],
            updated_at=np.fromiter(
                (float(r["updated_at"]) for r in rows), dtype=np.float64, count=len(rows)
            ),
        )

    async def chunk_texts(self, chunk_ids: Sequence[int]) -> dict[int, ChunkText]:
        """Text and heading path of these chunks (ids no longer stored are left out)."""
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

    async def spans(self, windows: Sequence[tuple[int, int, int]]) -> dict[int, list[ChunkSpan]]:
        """Spans of the chunks in each (document id, first ordinal, last ordinal) window."""
        if not windows:
            return {}
        rows = await self._pool.fetch(
            _SPANS_SQL,
            [w[0] for w in windows],
            [w[1] for w in windows],
            [w[2] for w in windows],
        )
        spans: dict[int, list[ChunkSpan]] = {}
        for r in rows:
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
        return spans

    async def chunk_uris(self) -> dict[int, str]:
        """Chunk id → its document's uri, for every stored chunk (evaluation maps hits back)."""
        rows = await self._pool.fetch(
            "SELECT c.id, d.uri FROM chunks c JOIN documents d ON d.id = c.document_id"
        )
        return {r["id"]: r["uri"] for r in rows}

    async def document_texts(self, document_ids: Sequence[int]) -> dict[int, str]:
        rows = await self._pool.fetch(
            "SELECT id, text FROM documents WHERE id = ANY($1::bigint[])", list(document_ids)
        )
        return {r["id"]: r["text"] for r in rows}
