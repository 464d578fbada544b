"""Readiness: whether this process should get traffic, check by check.

`/healthz` is liveness only (the process answers HTTP); `/readyz` runs these checks
and answers 200 when every one holds, 503 otherwise, with each check's result in the
body so an operator sees which one failed. A check never raises: a database that does
not answer is a failed check, not a traceback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg

from store.index_runs import IndexRunRepository
from store.migrate import pending_migrations

# A check that takes longer than this has failed: a load balancer will not wait.
CHECK_TIMEOUT = 5.0

_DB_ERRORS = (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError)


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str


@dataclass(frozen=True, slots=True)
class Readiness:
    checks: tuple[Check, ...]

    @property
    def ready(self) -> bool:
        return all(c.ok for c in self.checks)

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": "ready" if self.ready else "unavailable",
            "checks": [asdict(c) for c in self.checks],
        }


@dataclass(frozen=True, slots=True)
class ReadinessProbe:
    """What `/readyz` looks at. `scheduler_running` is None where no scheduler runs."""

    pool: asyncpg.Pool
    model_loaded: Callable[[], bool]
    keyword_index_warm: Callable[[], bool]
    scheduler_running: Callable[[], bool] | None
    # Whether a source is scheduled for reindexing (else the reindex age is not checked).
    reindex_scheduled: bool
    max_reindex_age: timedelta | None  # None: off

    async def check(self) -> Readiness:
        database = await _timed("database", self._database)
        checks = [database]
        if database.ok:
            checks.append(await _timed("migrations", self._migrations))
        else:
            checks.append(Check("migrations", False, "unknown: the database does not answer"))
        checks.append(_flag("model", self.model_loaded(), "loaded", "not loaded yet"))
        checks.append(_flag("keyword_index", self.keyword_index_warm(), "built", "not built yet"))
        checks.append(self._scheduler())
        if database.ok:
            checks.append(await _timed("last_reindex", self._reindex_age))
        else:
            checks.append(Check("last_reindex", False, "unknown: the database does not answer"))
        return Readiness(tuple(checks))

    async def _database(self) -> Check:
        await self.pool.fetchval("SELECT 1")
        return Check("database", True, "answers")

    async def _migrations(self) -> Check:
        async with self.pool.acquire() as conn:
            pending = await pending_migrations(conn)
        if pending:
            listed = ", ".join(f"{v:04d}" for v in pending)
            return Check("migrations", False, f"not applied: {listed}")
        return Check("migrations", True, "current")

    def _scheduler(self) -> Check:
        if self.scheduler_running is None:
            return Check("scheduler", False, "no scheduler in this process")
        return _flag("scheduler", self.scheduler_running(), "running", "not running")

    async def _reindex_age(self) -> Check:
        if self.max_reindex_age is None:
            return Check("last_reindex", True, "not checked (KB_READY_MAX_REINDEX_AGE=0)")
        if not self.reindex_scheduled:
            return Check("last_reindex", True, "not checked: no source has a schedule")
        finished = await IndexRunRepository(self.pool).last_success()
        if finished is None:
            return Check("last_reindex", False, "no reindex has succeeded yet")
        age = datetime.now(UTC) - finished
        hours = age.total_seconds() / 3600
        limit = self.max_reindex_age.total_seconds() / 3600
        ok = age <= self.max_reindex_age
        return Check("last_reindex", ok, f"{hours:.1f} h ago (limit {limit:g} h)")


def _flag(name: str, ok: bool, yes: str, no: str) -> Check:
    return Check(name, ok, yes if ok else no)


async def _timed(name: str, check: Callable[[], Awaitable[Check]]) -> Check:
    try:
        return await asyncio.wait_for(check(), timeout=CHECK_TIMEOUT)
    except _DB_ERRORS as exc:
        return Check(name, False, f"the database does not answer ({type(exc).__name__})")
