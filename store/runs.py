"""The agent_runs table: one row per answer run, written at its start and at its end.

The store keeps runs as plain JSON-shaped values (it knows nothing of the agent's
types): the agent writes them, and "why this answer?" (CLI or Slack) reads them back.
A run is started before any work so a crash leaves a `running` row, not nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from store.rows import Restored, TableRows

ROWS = TableRows(
    table="agent_runs",
    columns=(
        "id", "created_at", "finished_at", "status", "question", "scope", "origin",
        "history_turns", "reasoner", "stop_reason", "escalate", "steps", "queries",
        "evidence_chunk_ids", "verification", "answer", "error", "standalone_question",
        "sub_questions", "sources", "notes", "latency_ms", "stats",
    ),
    json_columns=frozenset(
        {"scope", "origin", "steps", "queries", "verification", "answer", "sub_questions",
         "sources", "notes", "stats"}
    ),
    key=("id",),
    same_when=("created_at", "question"),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class RunStart:
    question: str
    scope: Mapping[str, Any] = field(default_factory=dict)
    origin: Mapping[str, str] = field(default_factory=dict)
    history_turns: int = 0
    reasoner: str = ""


@dataclass(frozen=True, slots=True)
class RunOutcome:
    stop_reason: str
    escalate: bool
    # One {action, input, output, latency_ms} mapping per step, in order.
    steps: Sequence[Mapping[str, Any]] = ()
    queries: Sequence[str] = ()
    evidence_chunk_ids: Sequence[int] = ()
    # What the grounding check kept and dropped ({verified, rejected, dropped: [...]}).
    verification: Mapping[str, Any] = field(default_factory=dict)
    answer: Mapping[str, Any] = field(default_factory=dict)
    # The question as searched, when a follow-up was rewritten to stand alone.
    standalone_question: str | None = None
    # One {text, status, key} mapping per sub-question.
    sub_questions: Sequence[Mapping[str, Any]] = ()
    # One {chunk_id, title, url, section} mapping per chunk read, in the order read.
    sources: Sequence[Mapping[str, Any]] = ()
    # Plain sentences about the run itself ("Claude was unavailable: fell back to …").
    notes: Sequence[str] = ()
    latency_ms: float | None = None
    # {steps, steps_after_coverage, rewrites, rewrites_with_evidence}
    stats: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StoredRun:
    id: int
    created_at: datetime
    finished_at: datetime | None
    status: str  # running, finished, failed
    question: str
    scope: dict[str, Any]
    origin: dict[str, str]
    history_turns: int
    reasoner: str
    stop_reason: str | None
    escalate: bool | None
    steps: list[dict[str, Any]]
    queries: list[str]
    evidence_chunk_ids: list[int]
    verification: dict[str, Any]
    answer: dict[str, Any] | None
    error: str | None
    standalone_question: str | None = None
    sub_questions: list[dict[str, Any]] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    latency_ms: float | None = None
    stats: dict[str, Any] = field(default_factory=dict)


class RunRepository:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def start(self, run: RunStart) -> int:
        return await self._pool.fetchval(
            """INSERT INTO agent_runs (question, scope, origin, history_turns, reasoner)
               VALUES ($1, $2, $3, $4, $5) RETURNING id""",
            run.question,
            json.dumps(dict(run.scope), default=str),
            json.dumps(dict(run.origin)),
            run.history_turns,
            run.reasoner,
        )

    async def finish(self, run_id: int, outcome: RunOutcome) -> None:
        await self._pool.execute(
            """UPDATE agent_runs SET status = 'finished', finished_at = now(), stop_reason = $2,
                      escalate = $3, steps = $4, queries = $5, evidence_chunk_ids = $6,
                      verification = $7, answer = $8, standalone_question = $9,
                      sub_questions = $10, sources = $11, notes = $12, latency_ms = $13,
                      stats = $14
               WHERE id = $1""",
            run_id,
            outcome.stop_reason,
            outcome.escalate,
            json.dumps(list(outcome.steps), default=str),
            json.dumps(list(outcome.queries)),
            list(outcome.evidence_chunk_ids),
            json.dumps(dict(outcome.verification), default=str),
            json.dumps(dict(outcome.answer), default=str),
            outcome.standalone_question,
            json.dumps([dict(q) for q in outcome.sub_questions], default=str),
            json.dumps([dict(s) for s in outcome.sources], default=str),
            json.dumps(list(outcome.notes)),
            outcome.latency_ms,
            json.dumps(dict(outcome.stats)),
        )

    async def fail(
        self, run_id: int, *, error: str, steps: Sequence[Mapping[str, Any]] = ()
    ) -> None:
        """The run raised: keep what is known (the steps so far) and the error's summary."""
        await self._pool.execute(
            """UPDATE agent_runs SET status = 'failed', finished_at = now(), error = $2,
                      steps = $3
               WHERE id = $1""",
            run_id,
            error,
            json.dumps(list(steps), default=str),
        )

    async def get(self, run_id: int) -> StoredRun | None:
        row = await self._pool.fetchrow("SELECT * FROM agent_runs WHERE id = $1", run_id)
        return _stored(row) if row else None

    async def find_by_origin(self, key: str, value: str) -> StoredRun | None:
        """The latest run whose origin has `key` = `value` (the bot's request reference)."""
        row = await self._pool.fetchrow(
            "SELECT * FROM agent_runs WHERE origin ->> $1 = $2 ORDER BY id DESC LIMIT 1",
            key,
            value,
        )
        return _stored(row) if row else None

    async def latest(self, *, limit: int = 10) -> list[StoredRun]:
        """The most recent runs, newest first."""
        rows = await self._pool.fetch(
            "SELECT * FROM agent_runs ORDER BY id DESC LIMIT $1", max(int(limit), 0)
        )
        return [_stored(r) for r in rows]

    # --- export, import, retention ------------------------------------------------------

    async def export(self, run_ids: Sequence[int]) -> list[dict[str, Any]]:
        """The runs `run_ids`, whole, as plain values (for `kb export`)."""
        rows = await self._pool.fetch(ROWS.select("id = ANY($1::bigint[])"), list(run_ids))
        return [ROWS.plain(r) for r in rows]

    @staticmethod
    async def restore(conn: asyncpg.Connection, run: Mapping[str, Any]) -> Restored:
        return await ROWS.restore(conn, run)

    @staticmethod
    async def restored(conn: asyncpg.Connection) -> None:
        await ROWS.sync_sequence(conn)

    async def purge(self, *, before: datetime) -> tuple[int, int]:
        """Runs started before `before`: deleted, unless an escalation or feedback refers
        to them; a run only feedback refers to keeps its vote's context (status, stop
        reason, latency) but loses its text. Escalated runs stay whole (the experts'
        answers are built on them). Returns (deleted, emptied)."""
        async with self._pool.acquire() as conn, conn.transaction():
            deleted = await conn.execute(
                """DELETE FROM agent_runs r WHERE r.created_at < $1
                     AND NOT EXISTS (SELECT 1 FROM escalations e WHERE e.run_id = r.id)
                     AND NOT EXISTS (SELECT 1 FROM feedback f WHERE f.run_id = r.id)""",
                before,
            )
            emptied = await conn.execute(
                """UPDATE agent_runs r SET question = '', standalone_question = NULL,
                          answer = NULL, steps = '[]', queries = '[]', sub_questions = '[]',
                          sources = '[]', notes = '[]', verification = '{}', error = NULL,
                          origin = origin - 'user'
                   WHERE r.created_at < $1 AND r.question <> ''
                     AND NOT EXISTS (SELECT 1 FROM escalations e WHERE e.run_id = r.id)""",
                before,
            )
        return int(deleted.split()[-1]), int(emptied.split()[-1])


def _stored(row: asyncpg.Record) -> StoredRun:
    answer = row["answer"]
    return StoredRun(
        id=row["id"],
        created_at=row["created_at"],
        finished_at=row["finished_at"],
        status=row["status"],
        question=row["question"],
        scope=json.loads(row["scope"]),
        origin=json.loads(row["origin"]),
        history_turns=row["history_turns"],
        reasoner=row["reasoner"],
        stop_reason=row["stop_reason"],
        escalate=row["escalate"],
        steps=json.loads(row["steps"]),
        queries=json.loads(row["queries"]),
        evidence_chunk_ids=list(row["evidence_chunk_ids"]),
        verification=json.loads(row["verification"]),
        answer=json.loads(answer) if answer is not None else None,
        error=row["error"],
        standalone_question=row["standalone_question"],
        sub_questions=json.loads(row["sub_questions"]),
        sources=json.loads(row["sources"]),
        notes=json.loads(row["notes"]),
        latency_ms=row["latency_ms"],
        stats=json.loads(row["stats"]),
    )
