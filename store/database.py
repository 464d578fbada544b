"""Connecting to Postgres: one asyncpg pool with the pgvector codec on every connection."""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

import asyncpg
from pgvector.asyncpg import register_vector

from store.errors import DatabaseStorageFailed, DatabaseUnavailable
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
    except asyncpg.PostgresError as exc:
        if is_storage_failure(exc):
            raise storage_failed(exc, dsn) from exc
        raise _unreachable(exc, dsn) from exc
    except (TimeoutError, OSError, ValueError) as exc:
        raise _unreachable(exc, dsn) from exc


def _unreachable(exc: Exception, dsn: str) -> DatabaseUnavailable:
    return DatabaseUnavailable(
        f"cannot connect to the database at {describe_dsn(dsn)} ({type(exc).__name__}: "
        f"{exc}); check DATABASE_URL, that the server is running and reachable, and the "
        "credentials — or unset DATABASE_URL to use the embedded database"
    )


# SQLSTATEs of a server failing on its own files: disk_full, and class 58 (system errors:
# I/O errors, files it cannot open); errcode_for_file_access reports a file the server
# may not open (a read-only data folder) as insufficient_privilege, with this wording.
_STORAGE_STATES = ("53100", "58")
_STORAGE_WORDS = ("could not open file", "could not extend file", "could not write", "read-only")


def is_storage_failure(exc: asyncpg.PostgresError) -> bool:
    """True if `exc` says the server cannot read or write its files, not that we erred."""
    state = str(getattr(exc, "sqlstate", "") or "")
    text = str(exc).lower()
    return state.startswith(_STORAGE_STATES) or any(w in text for w in _STORAGE_WORDS)


def storage_failed(exc: asyncpg.PostgresError, dsn: str) -> DatabaseStorageFailed:
    """One line for a server that cannot use its files: what it said, and what to check."""
    said = " ".join(str(exc).split())
    return DatabaseStorageFailed(
        f"the database at {describe_dsn(dsn)} cannot use its files ({said}); check that "
        "its disk has free space and its data folder is writable, then try again — "
        "nothing was changed"
    )


async def open_pool(dsn: str, *, min_size: int = 1, max_size: int = 8) -> asyncpg.Pool:
    """Migrate the database, then open a pool whose connections all speak `vector`."""
    conn = await connect(dsn)
    try:
        await apply_migrations(conn)
        await pgvector_version(conn)  # refuses a server whose pgvector is too old
    except asyncpg.PostgresError as exc:
        if is_storage_failure(exc):
            raise storage_failed(exc, dsn) from exc
        raise
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
