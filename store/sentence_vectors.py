"""The sentence_vectors table: one vector per (embedding model, sentence text hash).

The agent embeds the sentences it reads to score them against a question; a sentence
seen before is read back from here instead of being embedded again. The key includes
the model's name, so vectors of another model are never returned (changing the model
leaves the old rows unused, and `forget_model` clears them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import asyncpg
import numpy as np


def text_hash(text: str) -> str:
    """The key of a sentence text: 32 hex digits of its SHA-256."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class SentenceVectorRepository:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def get(self, *, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of these hashes for `model` (hashes not stored are left out)."""
        if not hashes:
            return {}
        rows = await self._pool.fetch(
            "SELECT text_hash, embedding FROM sentence_vectors"
            " WHERE model = $1 AND text_hash = ANY($2::text[])",
            model,
            list(hashes),
        )
        return {
            r["text_hash"]: np.asarray(r["embedding"].to_numpy(), dtype=np.float32) for r in rows
        }

    async def put(self, *, model: str, vectors: Mapping[str, np.ndarray]) -> None:
        """Store vectors by hash; a hash already stored for `model` keeps its vector.

        One transaction, rows in hash order: concurrent puts of overlapping sentences (the
        passages of one question, scored at the same time) then take their row locks in
        the same order, so they wait for each other instead of deadlocking."""
        if not vectors:
            return
        await self._pool.executemany(
            "INSERT INTO sentence_vectors (model, text_hash, embedding) VALUES ($1, $2, $3)"
            " ON CONFLICT (model, text_hash) DO NOTHING",
            [(model, key, np.asarray(vectors[key], dtype=np.float32)) for key in sorted(vectors)],
        )

    async def count(self, *, model: str) -> int:
        return int(
            await self._pool.fetchval(
                "SELECT count(*) FROM sentence_vectors WHERE model = $1", model
            )
        )

    async def forget_model(self, *, keep: str) -> int:
        """Delete the vectors of every model but `keep`; return how many went."""
        status = await self._pool.execute("DELETE FROM sentence_vectors WHERE model <> $1", keep)
        return int(status.split()[-1])
