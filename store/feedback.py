"""The feedback table: one 👍/👎 per run and user (a second click changes it), and a comment."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from store.rows import Restored, TableRows

ROWS = TableRows(
    table="feedback",
    columns=("run_id", "user_id", "vote", "comment", "created_at", "updated_at"),
    json_columns=frozenset(),
    key=("run_id", "user_id"),
    same_when=("vote",),
)


@dataclass(frozen=True, slots=True)
class Vote:
    run_id: int
    user_id: str
    vote: int  # 1 or -1
    comment: str | None


class FeedbackRepository:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def vote(self, *, run_id: int, user_id: str, vote: int) -> None:
        if vote not in (1, -1):
            raise ValueError("a vote is 1 or -1")
        await self._pool.execute(
            """INSERT INTO feedback (run_id, user_id, vote) VALUES ($1, $2, $3)
               ON CONFLICT (run_id, user_id) DO UPDATE
                 SET vote = EXCLUDED.vote, updated_at = now()""",
            run_id,
            user_id,
            vote,
        )

    async def comment(self, *, run_id: int, user_id: str, comment: str) -> None:
        """Attach a comment to the user's vote (a comment alone counts as a 👎)."""
        await self._pool.execute(
            """INSERT INTO feedback (run_id, user_id, vote, comment) VALUES ($1, $2, -1, $3)
               ON CONFLICT (run_id, user_id) DO UPDATE
                 SET comment = EXCLUDED.comment, updated_at = now()""",
            run_id,
            user_id,
            comment,
        )

    async def get(self, *, run_id: int, user_id: str) -> Vote | None:
        row = await self._pool.fetchrow(
            "SELECT * FROM feedback WHERE run_id = $1 AND user_id = $2", run_id, user_id
        )
        return Vote(row["run_id"], row["user_id"], row["vote"], row["comment"]) if row else None

    # --- export, import, retention ------------------------------------------------------

    async def export(self) -> list[dict[str, Any]]:
        """Every vote and comment."""
        return [ROWS.plain(r) for r in await self._pool.fetch(ROWS.select())]

    @staticmethod
    async def restore(conn: asyncpg.Connection, vote: Mapping[str, Any]) -> Restored:
        """Add a vote; one already stored for the run and user is kept as it is."""
        outcome = await ROWS.restore(conn, vote)
        return "present" if outcome == "conflict" else outcome

    async def purge_comments(self, *, before: datetime) -> int:
        """Forget the text of comments on votes last changed before `before`."""
        result = await self._pool.execute(
            "UPDATE feedback SET comment = NULL WHERE updated_at < $1 AND comment IS NOT NULL",
            before,
        )
        return int(result.split()[-1])
