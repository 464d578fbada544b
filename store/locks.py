"""Cross-instance locks on Postgres advisory locks: released if the holder's connection dies."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg

# One reindex at a time across every instance sharing the database.
REINDEX_LOCK_KEY = 0x6B62_7278  # "kbrx"
# One replica at a time looks for questions a dead process left unanswered.
RECOVERY_LOCK_KEY = 0x6B62_7263  # "kbrc"


@asynccontextmanager
async def try_advisory_lock(pool: asyncpg.Pool, key: int) -> AsyncIterator[bool]:
    """Yield True while holding the lock `key`, or False at once if another session has it.

    The lock lives on one pooled connection for the whole block; if the process is killed
    the server drops the connection and with it the lock, so a crash never wedges it.
    """
    async with pool.acquire() as conn:
        acquired = bool(await conn.fetchval("SELECT pg_try_advisory_lock($1)", key))
        try:
            yield acquired
        finally:
            if acquired:
                await conn.execute("SELECT pg_advisory_unlock($1)", key)


# One retention purge at a time across every instance (jobs/retention.py).
RETENTION_LOCK_KEY = 0x6B62_7274  # "kbrt"
