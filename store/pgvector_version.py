"""Which pgvector the server runs, and what that allows.

pgvector 0.5 brought HNSW indexes, the oldest version `kb` can work with. 0.8 brought
iterative index scans (`hnsw.iterative_scan`), which keep walking the graph until enough
rows pass a filter; before it, a filtered search widens its candidate pool instead
(store/vector_search.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import asyncpg

from store.errors import DatabaseUnavailable

MINIMUM = (0, 5, 0)
ITERATIVE_SCAN = (0, 8, 0)


@dataclass(frozen=True, slots=True)
class PgvectorVersion:
    text: str
    parts: tuple[int, int, int]

    @property
    def iterative_scan(self) -> bool:
        return self.parts >= ITERATIVE_SCAN

    def describe(self) -> str:
        how = "iterative filtered scans" if self.iterative_scan else "filtered scans widened"
        return f"pgvector {self.text} ({how})"


def parse_version(text: str) -> PgvectorVersion:
    numbers = [int(n) for n in re.findall(r"\d+", text)[:3]]
    numbers += [0] * (3 - len(numbers))
    return PgvectorVersion(text, (numbers[0], numbers[1], numbers[2]))


async def pgvector_version(conn: asyncpg.Connection) -> PgvectorVersion:
    """The installed `vector` extension's version; DatabaseUnavailable if it is too old."""
    text = await conn.fetchval("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
    if text is None:
        raise DatabaseUnavailable(
            "the database has no pgvector extension; run CREATE EXTENSION vector"
        )
    return supported(parse_version(str(text)))


def supported(version: PgvectorVersion) -> PgvectorVersion:
    """`version`, or DatabaseUnavailable saying it is too old and what to do."""
    if version.parts < MINIMUM:
        raise DatabaseUnavailable(
            f"the database has pgvector {version.text}, and kb needs 0.5 or newer (HNSW indexes; "
            "0.8 or newer for iterative filtered scans); upgrade pgvector on the server, then "
            "run ALTER EXTENSION vector UPDATE"
        )
    return version
