"""Numbered SQL migrations, applied once each, in order, under an advisory lock.

Two processes starting at once both call `apply_migrations`; the advisory lock makes
the second wait and then find nothing left to do.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from importlib import resources

import asyncpg

log = logging.getLogger(__name__)

# Any constant works; it only has to be the same in every process of this app.
MIGRATION_LOCK_KEY = 0x6B62_6D69  # "kbmi"

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def bundled_migrations() -> list[Migration]:
    """The migrations shipped in store/migrations, ordered by version."""
    found = []
    for entry in resources.files("store.migrations").iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    return sorted(found, key=lambda m: m.version)


async def pending_migrations(conn: asyncpg.Connection) -> list[int]:
    """The bundled migrations this database has not applied (all of them before the first)."""
    exists = await conn.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL")
    done = (
        {r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")}
        if exists
        else set()
    )
    return [m.version for m in bundled_migrations() if m.version not in done]


async def apply_migrations(conn: asyncpg.Connection) -> list[int]:
    """Apply the bundled migrations that are not yet recorded; return the versions applied."""
    applied: list[int] = []
    await conn.execute("SELECT pg_advisory_lock($1)", MIGRATION_LOCK_KEY)
    try:
        await conn.execute(
            """CREATE TABLE IF NOT EXISTS schema_migrations (
                   version integer PRIMARY KEY,
                   name text NOT NULL,
                   applied_at timestamptz NOT NULL DEFAULT now())"""
        )
        done = {r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")}
        for migration in bundled_migrations():
            if migration.version in done:
                continue
            async with conn.transaction():
                await conn.execute(migration.sql)
                await conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                    migration.version,
                    migration.name,
                )
            log.info("applied migration %04d_%s", migration.version, migration.name)
            applied.append(migration.version)
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", MIGRATION_LOCK_KEY)
    return applied
