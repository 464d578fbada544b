"""The slack_deliveries table: each Slack delivery is claimed once, before any work starts.

`claim` is one INSERT … ON CONFLICT DO NOTHING: the first process to insert a key does
the work; a Slack retry, or the same event delivered to a second instance sharing the
database, finds the key taken. Old keys are pruned (Slack retries within minutes).

A question's row also says what became of it: where its answer goes, the placeholder
once posted, and when it finished and how. A row claimed but never finished is a
question whose process died mid-answer; `unfinished` finds them for the start-up
recovery (bot/slack/recovery.py), which must never leave a question silently dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import asyncpg


@dataclass(frozen=True, slots=True)
class Unfinished:
    """A question acked but never answered: where to tell the asker."""

    key: str
    channel_id: str
    thread_ts: str | None
    placeholder_ts: str | None


class DeliveryLog:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def claim(
        self,
        key: str,
        *,
        kind: str,
        reply_channel: str | None = None,
        reply_thread_ts: str | None = None,
    ) -> bool:
        """True if this call recorded `key` first; False if it was already taken.

        `reply_channel` (and thread) mark a question whose answer is followed to the end.
        """
        inserted = await self._pool.fetchval(
            """INSERT INTO slack_deliveries (key, kind, reply_channel, reply_thread_ts)
               VALUES ($1, $2, $3, $4)
               ON CONFLICT (key) DO NOTHING RETURNING true""",
            key,
            kind,
            reply_channel,
            reply_thread_ts,
        )
        return bool(inserted)

    async def placeholder_posted(self, key: str, *, ts: str) -> None:
        await self._pool.execute(
            "UPDATE slack_deliveries SET placeholder_ts = $2 WHERE key = $1", key, ts
        )

    async def finish(self, key: str, *, outcome: str) -> None:
        await self._pool.execute(
            """UPDATE slack_deliveries SET finished_at = now(), outcome = $2
               WHERE key = $1 AND finished_at IS NULL""",
            key,
            outcome,
        )

    async def abandon(self, key: str) -> bool:
        """Mark an unfinished question abandoned; False if it finished meanwhile."""
        changed = await self._pool.fetchval(
            """UPDATE slack_deliveries SET finished_at = now(), outcome = 'abandoned'
               WHERE key = $1 AND finished_at IS NULL RETURNING true""",
            key,
        )
        return bool(changed)

    async def reopen(self, key: str) -> None:
        """Undo `abandon` (the asker could not be told), so a later start-up tries again."""
        await self._pool.execute(
            """UPDATE slack_deliveries SET finished_at = NULL, outcome = NULL
               WHERE key = $1 AND outcome = 'abandoned'""",
            key,
        )

    async def unfinished(self, *, older_than: timedelta) -> list[Unfinished]:
        """Questions claimed more than `older_than` ago and never finished, oldest first."""
        rows = await self._pool.fetch(
            """SELECT key, reply_channel, reply_thread_ts, placeholder_ts
               FROM slack_deliveries
               WHERE reply_channel IS NOT NULL AND finished_at IS NULL
                 AND received_at < now() - $1::interval
               ORDER BY received_at""",
            older_than,
        )
        return [
            Unfinished(
                key=r["key"],
                channel_id=r["reply_channel"],
                thread_ts=r["reply_thread_ts"],
                placeholder_ts=r["placeholder_ts"],
            )
            for r in rows
        ]

    async def prune(self, *, older_than: timedelta) -> int:
        """Forget keys older than `older_than`; return how many went."""
        result = await self._pool.execute(
            "DELETE FROM slack_deliveries WHERE received_at < now() - $1::interval", older_than
        )
        return int(result.split()[-1])
