"""Figures for `kb stats`: questions per day, answered against escalated, feedback, and the
questions that point at gaps in the knowledge base (escalated, or voted 👎).

Read-only queries over agent_runs, escalations and feedback.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

import asyncpg


@dataclass(frozen=True, slots=True)
class DayCount:
    day: date
    questions: int
    answered: int
    flagged: int  # the run itself offered to escalate (a key part had no grounded claim)


@dataclass(frozen=True, slots=True)
class Totals:
    questions: int
    answered: int
    flagged: int
    failed: int
    escalated: int  # handed to people with the button
    resolved: int
    expert_answers: int
    thumbs_up: int
    thumbs_down: int
    comments: int


@dataclass(frozen=True, slots=True)
class GapQuestion:
    run_id: int
    question: str
    asked_at: datetime
    escalated: bool
    thumbs_down: bool


@dataclass(frozen=True, slots=True)
class KindCount:
    kind: str  # the source kind: directory, web, github, slack, escalations…
    answers: int  # answered runs citing at least one document of this kind


class StatsReader:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def per_day(self, *, since: datetime) -> list[DayCount]:
        rows = await self._pool.fetch(
            """SELECT (created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS questions,
                      count(*) FILTER (WHERE status = 'finished' AND NOT escalate) AS answered,
                      count(*) FILTER (WHERE escalate) AS flagged
               FROM agent_runs WHERE created_at >= $1 GROUP BY day ORDER BY day""",
            since,
        )
        return [DayCount(r["day"], r["questions"], r["answered"], r["flagged"]) for r in rows]

    async def totals(self, *, since: datetime) -> Totals:
        row = await self._pool.fetchrow(
            """SELECT
                 (SELECT count(*) FROM agent_runs WHERE created_at >= $1) AS questions,
                 (SELECT count(*) FROM agent_runs WHERE created_at >= $1
                    AND status = 'finished' AND NOT escalate) AS answered,
                 (SELECT count(*) FROM agent_runs WHERE created_at >= $1 AND escalate) AS flagged,
                 (SELECT count(*) FROM agent_runs WHERE created_at >= $1
                    AND status = 'failed') AS failed,
                 (SELECT count(*) FROM escalations WHERE escalated_at >= $1) AS escalated,
                 (SELECT count(*) FROM escalations WHERE escalated_at >= $1
                    AND status = 'resolved') AS resolved,
                 (SELECT count(*) FROM escalations WHERE escalated_at >= $1
                    AND answer IS NOT NULL) AS expert_answers,
                 (SELECT count(*) FROM feedback WHERE updated_at >= $1 AND vote = 1) AS up,
                 (SELECT count(*) FROM feedback WHERE updated_at >= $1 AND vote = -1) AS down,
                 (SELECT count(*) FROM feedback WHERE updated_at >= $1
                    AND comment IS NOT NULL) AS comments""",
            since,
        )
        return Totals(
            questions=row["questions"],
            answered=row["answered"],
            flagged=row["flagged"],
            failed=row["failed"],
            escalated=row["escalated"],
            resolved=row["resolved"],
            expert_answers=row["expert_answers"],
            thumbs_up=row["up"],
            thumbs_down=row["down"],
            comments=row["comments"],
        )

    async def answers_by_kind(self, *, since: datetime) -> list[KindCount]:
        """How many answers cited each kind of source (an answer citing two kinds counts in
        both): which answers came from Slack threads, from GitHub, from the handbook."""
        rows = await self._pool.fetch(
            """SELECT s.kind, count(DISTINCT r.id) AS answers
               FROM agent_runs r
               CROSS JOIN LATERAL jsonb_array_elements(
                   CASE WHEN jsonb_typeof(r.answer -> 'citations') = 'array'
                        THEN r.answer -> 'citations' ELSE '[]'::jsonb END) AS c(citation)
               JOIN sources s ON s.name = c.citation ->> 'source'
               WHERE r.created_at >= $1
               GROUP BY s.kind ORDER BY answers DESC, s.kind""",
            since,
        )
        return [KindCount(r["kind"], r["answers"]) for r in rows]

    async def gap_questions(self, *, since: datetime, limit: int = 2000) -> list[GapQuestion]:
        """Questions whose run was escalated (by the run or by a person) or got a 👎."""
        rows = await self._pool.fetch(
            """SELECT r.id, r.question, r.created_at,
                      (coalesce(r.escalate, false) OR e.id IS NOT NULL) AS escalated,
                      EXISTS (SELECT 1 FROM feedback f
                              WHERE f.run_id = r.id AND f.vote = -1) AS thumbs_down
               FROM agent_runs r LEFT JOIN escalations e ON e.run_id = r.id
               WHERE r.created_at >= $1
                 AND (coalesce(r.escalate, false) OR e.id IS NOT NULL
                      OR EXISTS (SELECT 1 FROM feedback f WHERE f.run_id = r.id AND f.vote = -1))
               ORDER BY r.created_at DESC LIMIT $2""",
            since,
            limit,
        )
        return [
            GapQuestion(r["id"], r["question"], r["created_at"], r["escalated"], r["thumbs_down"])
            for r in rows
        ]
