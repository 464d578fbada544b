"""Connecting to Postgres: one asyncpg pool with the pgvector codec on every connection."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
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


async def reachable(dsn: str, *, timeout: float = 5.0) -> bool:
    """Whether a fresh connection to `dsn` opens now (after a pooled one failed)."""
    try:
        conn = await connect(dsn, timeout=timeout)
    except DatabaseUnavailable:
        return False
    await conn.close()
    return True


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


async def open_pool(
    dsn: str,
    *,
    min_size: int = 1,
    max_size: int = 8,
    settings: Mapping[str, str] | None = None,
) -> asyncpg.Pool:
    """Migrate the database, then open a pool whose connections all speak `vector`.

    `settings` hold on every connection whenever it is acquired (e.g.
    store.vector_search.session_settings): set when it connects, and again after the
    `RESET ALL` of each release, in the same round trip."""
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
    setup = _ConnectionSetup(_set_statements(settings or {}))
    try:
        pool = await asyncpg.create_pool(
            dsn,
            min_size=min_size,
            max_size=max_size,
            init=setup.init,
            reset=setup.reset,
        )
    except (OSError, asyncpg.PostgresError) as exc:
        raise DatabaseUnavailable(f"cannot open a pool on {describe_dsn(dsn)}: {exc}") from exc
    assert pool is not None
    return pool


_SETTING_NAME = re.compile(r"[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?")


def _set_statements(settings: Mapping[str, str]) -> str:
    """`SET name TO 'value';` for each setting, as one simple-query text."""
    statements = []
    for name, value in settings.items():
        if not _SETTING_NAME.fullmatch(name):
            raise ValueError(f"not a setting name: {name!r}")
        literal = str(value).replace("'", "''")
        statements.append(f"SET {name} TO '{literal}';")
    return "\n".join(statements)


@dataclass(frozen=True, slots=True)
class _ConnectionSetup:
    """A pool's `init` and `reset`: the vector codec, and the settings after each reset."""

    statements: str

    async def init(self, conn: asyncpg.Connection) -> None:
        await register_vector(conn)
        if self.statements:
            # pgvector's library first (its input function loads it): set before it is
            # loaded, hnsw.ef_search stays a placeholder that its index scans ignore.
            await conn.execute("SELECT '[0]'::vector;\n" + self.statements)

    async def reset(self, conn: asyncpg.Connection) -> None:
        # The pool has already rolled back any transaction; this is the usual reset query
        # (advisory locks, cursors, LISTEN, RESET ALL) with the settings after it.
        await conn.execute("\n".join(filter(None, (conn.get_reset_query(), self.statements))))
