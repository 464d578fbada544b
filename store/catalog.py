"""What the knowledge base holds, read for people: collections, their sources and document
counts, sample titles, when a reindex last succeeded, and which collection a chunk is in.

Read-only views over the tables that store/documents.py and store/index_runs.py write;
App Home, the assistant panel's suggested prompts and the access filter of traces use it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg


@dataclass(frozen=True, slots=True)
class SourceSummary:
    name: str
    kind: str
    documents: int


@dataclass(frozen=True, slots=True)
class CollectionSummary:
    name: str
    documents: int
    sources: tuple[SourceSummary, ...]
    sample_titles: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ChunkOrigin:
    chunk_id: int
    collection: str
    title: str


class Catalog:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def collections(self, *, sample_titles: int = 3) -> list[CollectionSummary]:
        """Every collection with documents, its sources and a few of its document titles."""
        rows = await self._pool.fetch(
            """SELECT coalesce(d.collection, s.collection) AS collection, s.name, s.kind,
                      count(d.id) AS documents,
                      (array_agg(d.title ORDER BY d.updated_at DESC, d.id)
                         FILTER (WHERE d.id IS NOT NULL))[1:$1] AS titles
               FROM sources s LEFT JOIN documents d ON d.source_id = s.id
               GROUP BY 1, s.name, s.kind
               HAVING count(d.id) > 0
               ORDER BY 1, s.name""",
            sample_titles,
        )
        grouped: dict[str, list[asyncpg.Record]] = {}
        for row in rows:
            grouped.setdefault(row["collection"], []).append(row)
        return [_collection(name, members, sample_titles) for name, members in grouped.items()]

    async def last_successful_reindex(self) -> datetime | None:
        return await self._pool.fetchval(
            "SELECT max(finished_at) FROM index_runs WHERE status = 'succeeded'"
        )

    async def chunk_origins(self, chunk_ids: Sequence[int]) -> dict[int, ChunkOrigin]:
        rows = await self._pool.fetch(
            """SELECT c.id, coalesce(d.collection, s.collection) AS collection, d.title
               FROM chunks c
               JOIN documents d ON d.id = c.document_id JOIN sources s ON s.id = d.source_id
               WHERE c.id = ANY($1::bigint[])""",
            list(chunk_ids),
        )
        return {r["id"]: ChunkOrigin(r["id"], r["collection"], r["title"]) for r in rows}


def _collection(name: str, rows: list[asyncpg.Record], limit: int) -> CollectionSummary:
    titles: list[str] = []
    for row in rows:
        titles += [t for t in row["titles"] or () if t not in titles]
    return CollectionSummary(
        name=name,
        documents=sum(r["documents"] for r in rows),
        sources=tuple(SourceSummary(r["name"], r["kind"], r["documents"]) for r in rows),
        sample_titles=tuple(titles[:limit]),
    )
