"""The embedding models of the index: the active one queries use, and the next one being built.

`chunks.embedding` holds the active model's vectors (the HNSW index is on it). A model
change never deletes anything: the new model is recorded as `next`, its vectors are
written to `chunks.embedding_next` batch by batch (each batch committed, so an
interrupted re-embed resumes where it stopped), its HNSW index is built, and then
`switch_to_next` swaps the columns by renaming them in one transaction: a query sees the
old model's vectors or the new one's, never a mix, and never an empty index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg
import numpy as np

from store.embedding import ModelIdentity
from store.errors import EmbeddingModelMismatch

HNSW_INDEX = "chunks_embedding_hnsw"
NEXT_HNSW_INDEX = "chunks_embedding_next_hnsw"


@dataclass(frozen=True, slots=True)
class ChunkToEmbed:
    """One distinct chunk text still without a vector from the next model."""

    text_hash: str
    text: str
    heading_path: tuple[str, ...]


async def stored_model(conn: asyncpg.Connection) -> ModelIdentity | None:
    """The active model: the one whose vectors queries search."""
    return await _model(conn, "active")


async def _model(conn: asyncpg.Connection, role: str) -> ModelIdentity | None:
    row = await conn.fetchrow("SELECT name, dimension FROM embedding_model WHERE role = $1", role)
    return ModelIdentity(row["name"], row["dimension"]) if row else None


def mismatch(stored: ModelIdentity, configured: ModelIdentity) -> EmbeddingModelMismatch:
    return EmbeddingModelMismatch(stored=label(stored), configured=label(configured))


def label(model: ModelIdentity) -> str:
    return f"{model.name} ({model.dimension} dims)"


class EmbeddingSpace:
    """Reads and changes which model the index's vectors come from."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def active(self) -> ModelIdentity | None:
        async with self._pool.acquire() as conn:
            return await stored_model(conn)

    async def next(self) -> ModelIdentity | None:
        async with self._pool.acquire() as conn:
            return await _model(conn, "next")

    async def check(self, model: ModelIdentity) -> None:
        """Raise EmbeddingModelMismatch if the index's active model is another one."""
        active = await self.active()
        if active is not None and active != model:
            raise mismatch(active, model)

    async def adopt_first(self, model: ModelIdentity) -> bool:
        """Record `model` as active when the index has none yet; False if it already has one."""
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute("LOCK TABLE embedding_model IN EXCLUSIVE MODE")
            if await stored_model(conn) is not None:
                return False
            await conn.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
            await conn.execute(
                f"ALTER TABLE chunks ALTER COLUMN embedding TYPE vector({int(model.dimension)})"
            )
            await conn.execute(
                f"CREATE INDEX {HNSW_INDEX} ON chunks USING hnsw (embedding vector_cosine_ops)"
            )
            await _record(conn, model, "active")
            return True

    async def begin_next(self, model: ModelIdentity) -> bool:
        """Make `model` the next model; False if it already was (a re-embed to resume)."""
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute("LOCK TABLE embedding_model IN EXCLUSIVE MODE")
            if await _model(conn, "next") == model:
                return False
            # Dropping and adding a nullable column are catalogue changes: instant at any size.
            await conn.execute("ALTER TABLE chunks DROP COLUMN IF EXISTS embedding_next")
            await conn.execute(
                f"ALTER TABLE chunks ADD COLUMN embedding_next vector({int(model.dimension)})"
            )
            await conn.execute("DELETE FROM embedding_model WHERE role = 'next'")
            await _record(conn, model, "next")
            return True

    async def chunk_texts(self) -> int:
        """How many distinct chunk texts the index holds."""
        return int(await self._pool.fetchval("SELECT count(DISTINCT text_hash) FROM chunks"))

    async def missing_next(self, *, limit: int) -> list[ChunkToEmbed]:
        """Up to `limit` distinct chunk texts that have no vector from the next model yet."""
        rows = await self._pool.fetch(
            """SELECT DISTINCT ON (text_hash) text_hash, text, heading_path FROM chunks
               WHERE embedding_next IS NULL ORDER BY text_hash LIMIT $1""",
            limit,
        )
        return [ChunkToEmbed(r["text_hash"], r["text"], tuple(r["heading_path"])) for r in rows]

    async def count_missing_next(self) -> int:
        return int(
            await self._pool.fetchval(
                "SELECT count(DISTINCT text_hash) FROM chunks WHERE embedding_next IS NULL"
            )
        )

    async def store_next(self, text_hashes: Sequence[str], vectors: np.ndarray) -> None:
        """The next model's vector for every chunk with each of these texts, in one commit."""
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.executemany(
                """UPDATE chunks SET embedding_next = $2
                   WHERE text_hash = $1 AND embedding_next IS NULL""",
                list(zip(text_hashes, vectors, strict=True)),
            )

    async def build_next_index(self) -> None:
        """The next model's HNSW index, built in one pass once its vectors are all there."""
        await self._pool.execute(
            f"CREATE INDEX IF NOT EXISTS {NEXT_HNSW_INDEX} ON chunks "
            "USING hnsw (embedding_next vector_cosine_ops)"
        )

    async def switch_to_next(self) -> bool:
        """Make the next model active in one transaction and drop the old vectors.

        False (nothing changed) if some chunk still lacks a next vector: chunks written
        meanwhile by a reindex with the active model must be embedded first.
        """
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute("LOCK TABLE embedding_model IN EXCLUSIVE MODE")
            await conn.execute("LOCK TABLE chunks IN ACCESS EXCLUSIVE MODE")
            if await _model(conn, "next") is None:
                return False
            if await conn.fetchval(
                "SELECT EXISTS (SELECT 1 FROM chunks WHERE embedding_next IS NULL)"
            ):
                return False
            await conn.execute("ALTER TABLE chunks DROP COLUMN embedding")  # and its HNSW index
            await conn.execute("ALTER TABLE chunks RENAME COLUMN embedding_next TO embedding")
            await conn.execute(f"ALTER INDEX {NEXT_HNSW_INDEX} RENAME TO {HNSW_INDEX}")
            await conn.execute("ALTER TABLE chunks ADD COLUMN embedding_next vector")
            await conn.execute("DELETE FROM embedding_model WHERE role = 'active'")
            await conn.execute("UPDATE embedding_model SET role = 'active' WHERE role = 'next'")
            await conn.execute("UPDATE corpus_version SET version = version + 1")
            return True


async def _record(conn: asyncpg.Connection, model: ModelIdentity, role: str) -> None:
    await conn.execute(
        "INSERT INTO embedding_model (role, name, dimension) VALUES ($1, $2, $3)",
        role,
        model.name,
        model.dimension,
    )
