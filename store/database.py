"""Connecting to Postgres: one asyncpg pool with the pgvector codec on every connection."""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

import asyncpg
from pgvector.asyncpg import register_vector

from store.errors import DatabaseUnavailable
from store.migrate import apply_migrations
from store.pgvector_version import pgvector_version

log = logging.getLogger(__name__)


def describe_dsn(dsn: str) -> str:
    """The DSN without its password, safe to print."""
    parts = urlsplit(dsn)
    host = parts.hostname or "(unix socket)"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.username or ''}@{host}{port}{parts.path}"


async def connect(dsn: str, *, timeout: float = 10.0) -> asyncpg.Connection:
    """One connection, with errors turned into a DatabaseUnavailable that says what to check."""
    try:
        return await asyncpg.connect(dsn, timeout=timeout)
    except (TimeoutError, OSError, asyncpg.PostgresError, ValueError) as exc:
        raise DatabaseUnavailable(
            f"cannot connect to the database at {describe_dsn(dsn)} ({type(exc).__name__}: "
            f"{exc}); check DATABASE_URL, that the server is running and reachable, and the "
            "credentials — or unset DATABASE_URL to use the embedded database"
        ) from exc


async def open_pool(dsn: str, *, min_size: int = 1, max_size: int = 8) -> asyncpg.Pool:
    """Migrate the database, then open a pool whose connections all speak `vector`."""
    conn = await connect(dsn)
    try:
        await apply_migrations(conn)
        await pgvector_version(conn)  # refuses a server whose pgvector is too old
    finally:
        await conn.close()
    try:
        pool = await asyncpg.create_pool(
            dsn, min_size=min_size, max_size=max_size, init=register_vector
        )
    except (OSError, asyncpg.PostgresError) as exc:
        raise DatabaseUnavailable(f"cannot open a pool on {describe_dsn(dsn)}: {exc}") from exc
    assert pool is not None
    return pool
