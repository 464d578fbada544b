"""Errors raised by the store, each with a message a user can act on."""

from __future__ import annotations

import asyncpg

# What a call raises when the server is down, restarting or cut its connection, as
# opposed to a bad query: connection refused or reset, SQLSTATE class 08 (connection
# exception) and 57P (operator intervention: shutting down, starting up), or a
# connection the pool found closed.
CONNECTION_FAILURES: tuple[type[BaseException], ...] = (
    OSError,
    TimeoutError,
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.InterfaceError,
)

# What a connection the server dropped in the middle of an operation may raise instead
# (asyncpg's "cannot switch to state …; another operation is in progress", seen when the
# server was killed during a COMMIT): a connection failure only once a fresh connection
# is refused too, which is how `bot/wiring.py` uses it.
LOST_MIDWAY: tuple[type[BaseException], ...] = (
    *CONNECTION_FAILURES,
    asyncpg.exceptions.InternalClientError,
)


class StoreError(Exception):
    """Base class for everything the store raises on purpose."""


class DatabaseUnavailable(StoreError):
    """The database could not be reached or started."""


class DatabaseStorageFailed(DatabaseUnavailable):
    """The database server cannot read or write its own files (disk full, read-only)."""


class EmbeddingModelMismatch(StoreError):
    """The index was built with another embedding model than the one configured."""

    def __init__(self, *, stored: str, configured: str) -> None:
        super().__init__(
            f"the index was built with the embedding model {stored!r} but {configured!r} is "
            "configured, and this process cannot load the index's model to answer with it; "
            "run `kb index` to re-embed every source with the new model (nothing is deleted, "
            f"and questions use the old vectors until it finishes), or configure {stored!r} "
            "again"
        )
        self.stored = stored
        self.configured = configured


class EmbeddingModelUnavailable(StoreError):
    """The configured embedding model could not be loaded."""


class ExportFileInvalid(StoreError):
    """A line of a `kb import` file is not a record this version can restore."""

    def __init__(self, line: int, problem: str) -> None:
        super().__init__(f"line {line}: {problem}")
        self.line = line
