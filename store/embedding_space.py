"""The embedding model identity stored with the index, and the vector column that matches it.

The chunks' `embedding` column gets its dimension and its HNSW index when the first
model is recorded. A different model afterwards is refused (`EmbeddingModelMismatch`)
until a reindex adopts it, which empties the index so everything is re-embedded.
"""

from __future__ import annotations

import asyncpg

from store.embedding import ModelIdentity
from store.errors import EmbeddingModelMismatch

HNSW_INDEX = "chunks_embedding_hnsw"


async def stored_model(conn: asyncpg.Connection) -> ModelIdentity | None:
    row = await conn.fetchrow("SELECT name, dimension FROM embedding_model")
    return ModelIdentity(row["name"], row["dimension"]) if row else None


async def check_model(conn: asyncpg.Connection, model: ModelIdentity) -> None:
    """Raise EmbeddingModelMismatch if the index was built with another model."""
    stored = await stored_model(conn)
    if stored is not None and stored != model:
        raise EmbeddingModelMismatch(stored=_label(stored), configured=_label(model))


async def adopt_model(conn: asyncpg.Connection, model: ModelIdentity) -> bool:
    """Make `model` the index's model; return True if the index had to be emptied for it.

    Runs in one transaction: queries see either the old index or the new, empty one.
    """
    async with conn.transaction():
        await conn.execute("LOCK TABLE embedding_model IN EXCLUSIVE MODE")
        stored = await stored_model(conn)
        if stored == model:
            return False
        emptied = stored is not None
        await conn.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
        if emptied:
            # Every vector is now meaningless: forget the documents so the next pass
            # re-chunks and re-embeds all of them.
            await conn.execute("DELETE FROM documents")
            await conn.execute("UPDATE corpus_version SET version = version + 1")
        await conn.execute(
            f"ALTER TABLE chunks ALTER COLUMN embedding TYPE vector({int(model.dimension)})"
        )
        await conn.execute(
            f"CREATE INDEX {HNSW_INDEX} ON chunks USING hnsw (embedding vector_cosine_ops)"
        )
        await conn.execute("DELETE FROM embedding_model")
        await conn.execute(
            "INSERT INTO embedding_model (name, dimension) VALUES ($1, $2)",
            model.name,
            model.dimension,
        )
        return emptied


def _label(model: ModelIdentity) -> str:
    return f"{model.name} ({model.dimension} dims)"
