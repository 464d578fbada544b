"""The escalations table: questions handed to people, their status, who resolved them, and
the expert's answer that the escalations source turns into a document."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

import asyncpg

from store.rows import Restored, TableRows


@dataclass(frozen=True, slots=True)
class NewEscalation:
    run_id: int
    channel_id: str
    thread_ts: str | None
    asker_id: str
    question: str
    collection: str
    escalated_by: str
    team_id: str = ""
    thread_permalink: str | None = None


@dataclass(frozen=True, slots=True)
class Escalation:
    id: int
    run_id: int
    team_id: str
    channel_id: str
    thread_ts: str | None
    asker_id: str
    question: str
    collection: str
    escalated_by: str
    escalated_at: datetime
    thread_permalink: str | None
    post_channel_id: str | None
    post_ts: str | None
    post_permalink: str | None
    status: str  # open, resolved
    resolved_by: str | None
    resolved_at: datetime | None
    answer: str | None


class EscalationRepository:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def open(self, new: NewEscalation) -> Escalation | None:
        """Record the escalation; None if this run was already escalated (by anyone)."""
        row = await self._pool.fetchrow(
            """INSERT INTO escalations (run_id, team_id, channel_id, thread_ts, asker_id,
                                         question, collection, escalated_by, thread_permalink)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
               ON CONFLICT (run_id) DO NOTHING RETURNING *""",
            new.run_id,
            new.team_id,
            new.channel_id,
            new.thread_ts,
            new.asker_id,
            new.question,
            new.collection,
            new.escalated_by,
            new.thread_permalink,
        )
        return _escalation(row) if row else None

    async def posted(
        self, escalation_id: int, *, channel_id: str, ts: str, permalink: str | None
    ) -> Escalation:
        """Where the escalation message went."""
        row = await self._pool.fetchrow(
            """UPDATE escalations SET post_channel_id = $2, post_ts = $3, post_permalink = $4
               WHERE id = $1 RETURNING *""",
            escalation_id,
            channel_id,
            ts,
            permalink,
        )
        return _escalation(row)

    async def resolve(
        self, escalation_id: int, *, resolved_by: str, answer: str | None = None
    ) -> Escalation | None:
        """Mark it resolved (and keep the expert's answer if given); None if it does not exist.

        Resolving again keeps the first resolver; an answer given later still replaces
        an earlier one, so an expert can correct what they wrote.
        """
        row = await self._pool.fetchrow(
            """UPDATE escalations SET status = 'resolved',
                      resolved_by = coalesce(resolved_by, $2),
                      resolved_at = coalesce(resolved_at, now()),
                      answer = coalesce($3, answer)
               WHERE id = $1 RETURNING *""",
            escalation_id,
            resolved_by,
            answer,
        )
        return _escalation(row) if row else None

    async def forget(self, escalation_id: int) -> None:
        """Delete an escalation that was never posted (the post failed)."""
        await self._pool.execute(
            "DELETE FROM escalations WHERE id = $1 AND post_ts IS NULL", escalation_id
        )

    async def get(self, escalation_id: int) -> Escalation | None:
        row = await self._pool.fetchrow("SELECT * FROM escalations WHERE id = $1", escalation_id)
        return _escalation(row) if row else None

    async def for_run(self, run_id: int) -> Escalation | None:
        row = await self._pool.fetchrow("SELECT * FROM escalations WHERE run_id = $1", run_id)
        return _escalation(row) if row else None

    async def answered(self, *, collection: str) -> list[Escalation]:
        """Resolved escalations with an expert's answer, in one collection, oldest first."""
        rows = await self._pool.fetch(
            """SELECT * FROM escalations
               WHERE collection = $1 AND status = 'resolved' AND answer IS NOT NULL
               ORDER BY id""",
            collection,
        )
        return [_escalation(r) for r in rows]

    async def answered_collections(self) -> list[str]:
        """Every collection holding at least one expert's answer."""
        rows = await self._pool.fetch(
            """SELECT DISTINCT collection FROM escalations
               WHERE status = 'resolved' AND answer IS NOT NULL ORDER BY collection"""
        )
        return [r["collection"] for r in rows]

    # --- export and import ----------------------------------------------------------------

    async def export(self) -> list[dict[str, Any]]:
        """Every escalation, whole (question, expert's answer, status, resolver)."""
        return [ROWS.plain(r) for r in await self._pool.fetch(ROWS.select())]

    @staticmethod
    async def restore(conn: asyncpg.Connection, escalation: Mapping[str, Any]) -> Restored:
        return await ROWS.restore(conn, escalation)

    @staticmethod
    async def restored(conn: asyncpg.Connection) -> None:
        await ROWS.sync_sequence(conn)


ROWS = TableRows(
    table="escalations",
    columns=tuple(f.name for f in fields(Escalation)),
    json_columns=frozenset(),
    key=("id",),
    same_when=("run_id", "question"),
)


def _escalation(row: asyncpg.Record) -> Escalation:
    return Escalation(**{f.name: row[f.name] for f in fields(Escalation)})
