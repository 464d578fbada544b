"""The feedback table: one 👍/👎 per run and user (a second click changes it), and a comment."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg


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
