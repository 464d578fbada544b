"""The index_runs table: one row per indexing pass, with its counts and failures."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg


@dataclass(frozen=True, slots=True)
class IndexRun:
    id: int
    source: str
    started_at: datetime
    finished_at: datetime | None
    status: str  # running, then succeeded, partial (some documents failed) or failed
    counts: dict[str, Any]
    failures: list[dict[str, str]]


class IndexRunRepository:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def start(self, *, source: str) -> int:
        return await self._pool.fetchval(
            "INSERT INTO index_runs (source) VALUES ($1) RETURNING id", source
        )

    async def finish(
        self,
        run_id: int,
        *,
        status: str,
        counts: dict[str, Any],
        failures: list[dict[str, str]],
    ) -> None:
        await self._pool.execute(
            """UPDATE index_runs SET status = $2, counts = $3, failures = $4, finished_at = now()
               WHERE id = $1""",
            run_id,
            status,
            json.dumps(counts),
            json.dumps(failures),
        )

    async def mark_abandoned(self) -> int:
        """Runs still 'running' while we hold the reindex lock died mid-run: mark them failed."""
        result = await self._pool.execute(
            """UPDATE index_runs SET status = 'failed', finished_at = now(),
                      failures = $1
               WHERE status = 'running'""",
            json.dumps([{"uri": "", "reason": "the process stopped before the run finished"}]),
        )
        return int(result.split()[-1])

    async def last_success(self) -> datetime | None:
        """When the most recent succeeded (or partial) run of any source finished."""
        value: datetime | None = await self._pool.fetchval(
            """SELECT max(finished_at) FROM index_runs
               WHERE status IN ('succeeded', 'partial')"""
        )
        return value

    async def latest(self, *, source: str | None = None, limit: int = 10) -> list[IndexRun]:
        rows = await self._pool.fetch(
            """SELECT * FROM index_runs WHERE $1::text IS NULL OR source = $1
               ORDER BY id DESC LIMIT $2""",
            source,
            limit,
        )
        return [
            IndexRun(
                id=r["id"],
                source=r["source"],
                started_at=r["started_at"],
                finished_at=r["finished_at"],
                status=r["status"],
                counts=json.loads(r["counts"]),
                failures=json.loads(r["failures"]),
            )
            for r in rows
        ]
