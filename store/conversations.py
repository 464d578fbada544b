"""The bot's side of Slack conversations: answers posted (thread <-> run) and assistant threads.

An answer row says which run answered whom, where: it tells a thread reply that the bot
answered that thread (so it is a follow-up), gives App Home each user's recent
questions, and finds a run's reply message again when the run is escalated.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg


@dataclass(frozen=True, slots=True)
class PostedAnswer:
    run_id: int | None
    channel_id: str
    thread_ts: str | None
    message_ts: str | None
    user_id: str
    question: str
    surface: str
    team_id: str = ""


@dataclass(frozen=True, slots=True)
class RecentQuestion:
    question: str
    asked_at: datetime
    channel_id: str
    run_id: int | None
    thread_ts: str | None = None  # where the answer went (None: a private answer)


class ConversationLog:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def record(self, answer: PostedAnswer) -> None:
        await self._pool.execute(
            """INSERT INTO slack_answers (run_id, team_id, channel_id, thread_ts, message_ts,
                                          user_id, question, surface)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8)""",
            answer.run_id,
            answer.team_id,
            answer.channel_id,
            answer.thread_ts,
            answer.message_ts,
            answer.user_id,
            answer.question,
            answer.surface,
        )

    async def answered_thread(self, *, channel_id: str, thread_ts: str) -> bool:
        """Whether the bot has answered in this thread."""
        return bool(
            await self._pool.fetchval(
                """SELECT EXISTS (SELECT 1 FROM slack_answers
                                  WHERE channel_id = $1 AND thread_ts = $2)""",
                channel_id,
                thread_ts,
            )
        )

    async def thread_askers(self, *, channel_id: str, thread_ts: str) -> frozenset[str]:
        """Who the bot has answered in this thread (empty: it never answered here)."""
        rows = await self._pool.fetch(
            """SELECT DISTINCT user_id FROM slack_answers
               WHERE channel_id = $1 AND thread_ts = $2""",
            channel_id,
            thread_ts,
        )
        return frozenset(str(r["user_id"]) for r in rows)

    async def for_run(self, run_id: int) -> PostedAnswer | None:
        row = await self._pool.fetchrow(
            "SELECT * FROM slack_answers WHERE run_id = $1 ORDER BY id LIMIT 1", run_id
        )
        return _posted(row) if row else None

    async def recent_questions(self, *, user_id: str, limit: int = 5) -> list[RecentQuestion]:
        rows = await self._pool.fetch(
            """SELECT question, created_at, channel_id, run_id, thread_ts FROM slack_answers
               WHERE user_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2""",
            user_id,
            limit,
        )
        return [
            RecentQuestion(
                r["question"], r["created_at"], r["channel_id"], r["run_id"], r["thread_ts"]
            )
            for r in rows
        ]

    async def purge(self, *, before: datetime) -> int:
        """Forget the answers posted before `before` (they hold the question's text)."""
        result = await self._pool.execute("DELETE FROM slack_answers WHERE created_at < $1", before)
        return int(result.split()[-1])


def _posted(row: asyncpg.Record) -> PostedAnswer:
    return PostedAnswer(
        run_id=row["run_id"],
        channel_id=row["channel_id"],
        thread_ts=row["thread_ts"],
        message_ts=row["message_ts"],
        user_id=row["user_id"],
        question=row["question"],
        surface=row["surface"],
        team_id=row["team_id"],
    )


class AssistantThreads:
    """Threads opened in Slack's assistant panel, their context, and whether they have a title."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def started(
        self, *, channel_id: str, thread_ts: str, user_id: str, context: Mapping[str, Any]
    ) -> None:
        await self._pool.execute(
            """INSERT INTO assistant_threads (channel_id, thread_ts, user_id, context)
               VALUES ($1, $2, $3, $4) ON CONFLICT (channel_id, thread_ts) DO NOTHING""",
            channel_id,
            thread_ts,
            user_id,
            json.dumps(dict(context)),
        )

    async def exists(self, *, channel_id: str, thread_ts: str) -> bool:
        return bool(
            await self._pool.fetchval(
                """SELECT EXISTS (SELECT 1 FROM assistant_threads
                                  WHERE channel_id = $1 AND thread_ts = $2)""",
                channel_id,
                thread_ts,
            )
        )

    async def claim_title(self, *, channel_id: str, thread_ts: str) -> bool:
        """True exactly once per thread: the caller sets the title from its first question."""
        return bool(
            await self._pool.fetchval(
                """UPDATE assistant_threads SET titled = true
                   WHERE channel_id = $1 AND thread_ts = $2 AND NOT titled RETURNING true""",
                channel_id,
                thread_ts,
            )
        )

    async def save_context(
        self, *, channel_id: str, thread_ts: str, context: Mapping[str, Any]
    ) -> None:
        await self._pool.execute(
            """UPDATE assistant_threads SET context = $3
               WHERE channel_id = $1 AND thread_ts = $2""",
            channel_id,
            thread_ts,
            json.dumps(dict(context)),
        )

    async def context(self, *, channel_id: str, thread_ts: str) -> dict[str, Any] | None:
        raw = await self._pool.fetchval(
            "SELECT context FROM assistant_threads WHERE channel_id = $1 AND thread_ts = $2",
            channel_id,
            thread_ts,
        )
        return json.loads(raw) if raw is not None else None

    async def purge(self, *, before: datetime) -> int:
        """Forget assistant threads opened before `before`."""
        result = await self._pool.execute(
            "DELETE FROM assistant_threads WHERE created_at < $1", before
        )
        return int(result.split()[-1])
