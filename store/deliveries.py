"""The slack_deliveries table: each Slack delivery is claimed once, before any work starts.

`claim` is one INSERT … ON CONFLICT DO NOTHING: the first process to insert a key does
the work; a Slack retry, or the same event delivered to a second instance sharing the
database, finds the key taken. Old keys are pruned (Slack retries within minutes).
"""

from __future__ import annotations

from datetime import timedelta

import asyncpg


class DeliveryLog:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def claim(self, key: str, *, kind: str) -> bool:
        """True if this call recorded `key` first; False if it was already taken."""
        inserted = await self._pool.fetchval(
            """INSERT INTO slack_deliveries (key, kind) VALUES ($1, $2)
               ON CONFLICT (key) DO NOTHING RETURNING true""",
            key,
            kind,
        )
        return bool(inserted)

    async def prune(self, *, older_than: timedelta) -> int:
        """Forget keys older than `older_than`; return how many went."""
        result = await self._pool.execute(
            "DELETE FROM slack_deliveries WHERE received_at < now() - $1::interval", older_than
        )
        return int(result.split()[-1])
