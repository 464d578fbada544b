"""Nearest chunks by cosine distance over the HNSW index, with optional filters.

A filtered search on pgvector 0.8 or newer uses an iterative index scan, which keeps
walking the graph until `limit` rows pass the filter. Older servers (0.5-0.7) have no
such scan: the HNSW index hands back `ef_search` candidates and the filter then drops
some, so the search asks for a much larger candidate pool, and when even that leaves
fewer than `limit` rows (a very selective filter) it answers with an exact scan.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg
import numpy as np

from store.filters import NO_FILTER, ChunkFilter
from store.pgvector_version import pgvector_version

# hnsw.ef_search's ceiling in pgvector: the largest candidate pool a pre-0.8 filter can get.
_WIDEST_POOL = 1000


@dataclass(frozen=True, slots=True)
class ChunkHit:
    """One retrieved chunk with what a citation needs. `score` is cosine similarity."""

    chunk_id: int
    document_id: int
    ordinal: int
    text: str
    char_start: int
    char_end: int
    heading_path: tuple[str, ...]
    title: str
    url: str | None
    uri: str
    source: str
    score: float
    # When the document last changed (the source's date, else the index time), if known.
    updated_at: datetime | None = None
    # The chunk's document's collection (else its source's): what per-channel access
    # control filters on.
    collection: str = "default"


SEARCH_SQL = """
SELECT c.id, c.document_id, c.ordinal, c.text, c.char_start, c.char_end, c.heading_path,
       d.title, d.url, d.uri, s.name AS source,
       coalesce(d.collection, s.collection) AS collection,
       1 - (c.embedding <=> $1) AS score,
       coalesce(d.source_updated_at, d.updated_at) AS updated_at
FROM chunks c
JOIN documents d ON d.id = c.document_id
JOIN sources s ON s.id = d.source_id
WHERE c.embedding IS NOT NULL
  AND ($3::text[] IS NULL OR s.name = ANY($3::text[]))
  AND ($4::text[] IS NULL OR coalesce(d.collection, s.collection) = ANY($4::text[]))
  AND ($5::text[] IS NULL OR coalesce(d.collection, s.collection) <> ALL($5::text[]))
ORDER BY c.embedding <=> $1
LIMIT $2
"""

# Searches with an updated-at range filter, and an exact (no index) scan.
_UPDATED_AT = "coalesce(d.source_updated_at, d.updated_at)"
_FILTERED_SELECT = f"""
SELECT c.id, c.document_id, c.ordinal, c.text, c.char_start, c.char_end, c.heading_path,
       d.title, d.url, d.uri, s.name AS source,
       coalesce(d.collection, s.collection) AS collection,
       1 - (c.embedding <=> $1) AS score,
       {_UPDATED_AT} AS updated_at
FROM chunks c
JOIN documents d ON d.id = c.document_id
JOIN sources s ON s.id = d.source_id
WHERE c.embedding IS NOT NULL
  AND ($3::text[] IS NULL OR s.name = ANY($3::text[]))
  AND ($4::text[] IS NULL OR coalesce(d.collection, s.collection) = ANY($4::text[]))
  AND ($5::text[] IS NULL OR coalesce(d.collection, s.collection) <> ALL($5::text[]))
  AND ($6::timestamptz IS NULL OR {_UPDATED_AT} >= $6)
  AND ($7::timestamptz IS NULL OR {_UPDATED_AT} < $7)
"""
FILTERED_SEARCH_SQL = _FILTERED_SELECT + "ORDER BY c.embedding <=> $1\nLIMIT $2\n"
# `+ 0` hides the ORDER BY from the HNSW index: an exact scan, for recall measurements.
# (A different statement text also keeps asyncpg's statement cache from reusing a plan.)
EXACT_SEARCH_SQL = _FILTERED_SELECT + "ORDER BY (c.embedding <=> $1) + 0\nLIMIT $2\n"


def session_settings(ef_search: int) -> dict[str, str]:
    """The settings (store.database.open_pool's `settings`) under which a
    `VectorSearch(pool, ef_search=ef_search, pool_ef_search=ef_search)` answers an
    unfiltered search in one statement: no transaction to set `hnsw.ef_search` in."""
    return {"hnsw.ef_search": str(int(ef_search))}


class VectorSearch:
    # hnsw.ef_search 100: recall@10 0.94–0.995 against the exact scan at 10k–100k chunks
    # (bench/results/retrieval_latency.md); 40 gave 0.84 on one 100k build.
    def __init__(
        self,
        pool: asyncpg.Pool,
        *,
        ef_search: int = 100,
        iterative_scan: bool | None = None,
        pool_ef_search: int | None = None,
    ) -> None:
        """`iterative_scan`: whether the server has it (pgvector ≥ 0.8); None asks the server.
        `pool_ef_search`: the `hnsw.ef_search` every connection of `pool` starts with
        (session_settings); a search that needs just that runs as one statement instead of
        four round trips (BEGIN, SET LOCAL, the query, COMMIT), each of which waits for a
        turn of a busy event loop while it holds a pooled connection."""
        self._pool = pool
        self._ef_search = ef_search
        self._iterative_scan = iterative_scan
        self._pool_ef_search = pool_ef_search

    async def nearest(
        self, query: np.ndarray, *, limit: int = 10, where: ChunkFilter = NO_FILTER
    ) -> list[ChunkHit]:
        iterative = where.restricts and await self._has_iterative_scan()
        ef_search = max(int(self._ef_search), limit)
        if where.restricts and not iterative:
            ef_search = max(ef_search, min(_WIDEST_POOL, limit * 20))
        args = _filter_args(where)
        plain = where.updated_after is None and where.updated_before is None
        if ef_search == self._pool_ef_search and not iterative and plain:
            rows = await self._pool.fetch(SEARCH_SQL, query, limit, *args[:3])
            if where.restricts and len(rows) < limit:
                return await self.nearest_exact(query, limit=limit, where=where)
            return [_hit(r) for r in rows]
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute(f"SET LOCAL hnsw.ef_search = {ef_search}")
            if iterative:
                # Filtered searches keep scanning the graph until `limit` rows pass the filter.
                await conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            if plain:
                rows = await conn.fetch(SEARCH_SQL, query, limit, *args[:3])
            else:
                rows = await conn.fetch(FILTERED_SEARCH_SQL, query, limit, *args)
        if where.restricts and not iterative and len(rows) < limit:
            return await self.nearest_exact(query, limit=limit, where=where)
        hits = [_hit(r) for r in rows]
        # relaxed_order may hand rows back slightly out of order: restore it.
        return sorted(hits, key=lambda h: -h.score) if where.restricts else hits

    async def _has_iterative_scan(self) -> bool:
        if self._iterative_scan is None:
            async with self._pool.acquire() as conn:
                self._iterative_scan = (await pgvector_version(conn)).iterative_scan
        return self._iterative_scan

    async def nearest_exact(
        self, query: np.ndarray, *, limit: int = 10, where: ChunkFilter = NO_FILTER
    ) -> list[ChunkHit]:
        """The true nearest chunks by a full scan (no index): the reference for recall."""
        rows = await self._pool.fetch(EXACT_SEARCH_SQL, query, limit, *_filter_args(where))
        return [_hit(r) for r in rows]


def _filter_args(where: ChunkFilter) -> tuple[object, ...]:
    """The filter parameters ($3..$7) of the search statements; None means no filter."""
    excluded = where.excluded_collections
    return (
        list(where.sources) if where.sources is not None else None,
        list(where.collections) if where.collections is not None else None,
        list(excluded) if excluded else None,
        where.updated_after,
        where.updated_before,
    )


def _hit(row: asyncpg.Record) -> ChunkHit:
    return chunk_hit(row, score=float(row["score"]))


def chunk_hit(row: asyncpg.Record, *, score: float) -> ChunkHit:
    """A ChunkHit from a row with the chunk, document and source columns."""
    return ChunkHit(
        chunk_id=row["id"],
        document_id=row["document_id"],
        ordinal=row["ordinal"],
        text=row["text"],
        char_start=row["char_start"],
        char_end=row["char_end"],
        heading_path=tuple(row["heading_path"]),
        title=row["title"],
        url=row["url"],
        uri=row["uri"],
        source=row["source"],
        score=score,
        updated_at=row.get("updated_at"),
        collection=row.get("collection") or "default",
    )
