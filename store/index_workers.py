"""The index_workers table: which `kb jobs --worker` processes are alive, and their model.

A worker registers when it starts, beats every third of its lease and deletes its row
when it stops; one killed keeps its row, which stops counting as alive once its lease
has passed without a beat. A coordinator asks `alive` whether any worker will embed
its documents, and embeds them itself if none will.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from store.embedding import ModelIdentity

# A dead worker's row is deleted once it has been silent this many of its leases.
_PRUNE_AFTER_LEASES = 10


@dataclass(frozen=True, slots=True)
class LiveWorker:
    id: str
    model: ModelIdentity
    started_at: datetime
    last_seen_at: datetime


class WorkerRegistry:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def register(self, worker_id: str, *, model: ModelIdentity, lease_seconds: float) -> None:
        await self._pool.execute(
            """INSERT INTO index_workers (id, model_name, model_dimension, lease_seconds)
               VALUES ($1, $2, $3, $4)
               ON CONFLICT (id) DO UPDATE SET model_name = EXCLUDED.model_name,
                   model_dimension = EXCLUDED.model_dimension,
                   lease_seconds = EXCLUDED.lease_seconds, last_seen_at = now()""",
            worker_id,
            model.name,
            model.dimension,
            float(lease_seconds),
        )

    async def beat(self, worker_id: str) -> bool:
        """Record that the worker is alive; False if its row is gone (pruned as dead)."""
        result = await self._pool.execute(
            "UPDATE index_workers SET last_seen_at = now() WHERE id = $1", worker_id
        )
        return result != "UPDATE 0"

    async def leave(self, worker_id: str) -> None:
        await self._pool.execute("DELETE FROM index_workers WHERE id = $1", worker_id)

    async def alive(self, model: ModelIdentity | None = None) -> list[LiveWorker]:
        """Workers whose last beat is within their lease (embedding with `model`, if given)."""
        rows = await self._pool.fetch(
            """SELECT id, model_name, model_dimension, started_at, last_seen_at
               FROM index_workers
               WHERE last_seen_at + make_interval(secs => lease_seconds) > now()
                 AND ($1::text IS NULL OR (model_name = $1 AND model_dimension = $2))
               ORDER BY id""",
            model.name if model else None,
            model.dimension if model else None,
        )
        return [
            LiveWorker(
                r["id"],
                ModelIdentity(r["model_name"], r["model_dimension"]),
                r["started_at"],
                r["last_seen_at"],
            )
            for r in rows
        ]

    async def prune(self) -> int:
        """Delete the rows of workers silent for many leases (killed, never restarted)."""
        result = await self._pool.execute(
            """DELETE FROM index_workers
               WHERE last_seen_at + make_interval(secs => lease_seconds * $1) < now()""",
            float(_PRUNE_AFTER_LEASES),
        )
        return int(result.split()[-1])
