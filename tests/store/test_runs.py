"""Stored answer runs: started before the work, finished or failed after it."""

from __future__ import annotations

import asyncpg

from store.runs import RunOutcome, RunRepository, RunStart


async def test_a_run_is_stored_as_running_then_finished_with_its_trace(
    pool: asyncpg.Pool,
) -> None:
    runs = RunRepository(pool)
    run_id = await runs.start(
        RunStart(
            question="How do I request leave?",
            scope={"collections": ["hr"]},
            origin={"channel": "C1"},
            history_turns=2,
            reasoner="extractive",
        )
    )
    started = await runs.get(run_id)
    assert started is not None and started.status == "running" and started.answer is None
    assert (started.scope, started.origin, started.history_turns) == (
        {"collections": ["hr"]},
        {"channel": "C1"},
        2,
    )

    step = {"action": "retrieve", "input": "request leave", "output": "5 hits", "latency_ms": 4}
    await runs.finish(
        run_id,
        RunOutcome(
            stop_reason="enough_evidence",
            escalate=False,
            steps=[step],
            queries=["request leave"],
            evidence_chunk_ids=[3, 9],
            verification={"verified": 2, "rejected": 0},
            answer={"question": "How do I request leave?"},
        ),
    )
    finished = await runs.get(run_id)
    assert finished is not None and finished.status == "finished"
    assert finished.finished_at is not None
    assert finished.steps == [step]
    assert finished.queries == ["request leave"]
    assert finished.evidence_chunk_ids == [3, 9]
    assert finished.answer == {"question": "How do I request leave?"}
    assert finished.escalate is False


async def test_a_failed_run_keeps_its_error_and_unknown_runs_are_none(pool: asyncpg.Pool) -> None:
    runs = RunRepository(pool)
    run_id = await runs.start(RunStart(question="Q?"))
    await runs.fail(run_id, error="the model timed out")
    failed = await runs.get(run_id)
    assert failed is not None and (failed.status, failed.error) == ("failed", "the model timed out")
    assert await runs.get(run_id + 1000) is None


async def test_a_run_keeps_the_trace_fields_and_the_latest_runs_come_newest_first(
    pool: asyncpg.Pool,
) -> None:
    runs = RunRepository(pool)
    first = await runs.start(RunStart(question="and for contractors?", history_turns=2))
    await runs.finish(
        first,
        RunOutcome(
            stop_reason="enough_evidence",
            escalate=False,
            standalone_question="How much annual leave do contractors earn?",
            sub_questions=[{"text": "annual leave contractors", "status": "answered"}],
            sources=[{"chunk_id": 4, "title": "Leave types", "url": None, "section": ""}],
            notes=["Claude was unavailable: the extractive reasoner answered"],
            latency_ms=123.5,
        ),
    )
    second = await runs.start(RunStart(question="Q?"))
    await runs.fail(second, error="boom", steps=[{"action": "route", "latency_ms": 1}])
    stored = await runs.get(first)
    assert stored is not None
    assert stored.standalone_question == "How much annual leave do contractors earn?"
    assert stored.sub_questions == [{"text": "annual leave contractors", "status": "answered"}]
    assert stored.sources[0]["title"] == "Leave types"
    assert stored.notes == ["Claude was unavailable: the extractive reasoner answered"]
    assert stored.latency_ms == 123.5
    assert [r.id for r in await runs.latest(limit=5)] == [second, first]
    failed = await runs.get(second)
    assert failed is not None and failed.steps == [{"action": "route", "latency_ms": 1}]
