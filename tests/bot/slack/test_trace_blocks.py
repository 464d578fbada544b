""" "Why this answer?": the trace of a stored run, in one ephemeral message."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

from agent.answer import Answer, Citation, Claim, SubQuestion
from bot.slack.render.blocks import trace_message
from bot.slack.render.limits import violations
from store.runs import StoredRun

STARTED = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def stored_answer() -> dict[str, Any]:
    cited = Citation(
        1,
        "Leave",
        "https://docs.example/leave",
        "leave.md",
        10,
        1,
        "hb",
        "hr",
        section="Requesting",
        updated_at=STARTED,
    )
    answer = Answer(
        question="How do I request leave?",
        claims=(Claim("Use HRLinks.", "Use HRLinks.", 1, 10),),
        citations=(cited,),
        stop_reason="enough_evidence",
        escalate=False,
        sub_questions=(
            SubQuestion("Where is leave requested?", "answered"),
            SubQuestion("Who approves <!channel>?", "missing", key=False),
        ),
        run_id=12,
    )
    return answer.as_dict()


def run(**fields: Any) -> StoredRun:
    defaults: dict[str, Any] = {
        "id": 12,
        "created_at": STARTED,
        "finished_at": STARTED + timedelta(milliseconds=1840),
        "status": "finished",
        "question": "How do I request leave?",
        "scope": {},
        "origin": {"channel": "C1"},
        "history_turns": 0,
        "reasoner": "extractive",
        "stop_reason": "enough_evidence",
        "escalate": False,
        "steps": [
            {
                "action": "plan",
                "input": "How do I request leave?",
                "output": "2 sub-questions",
                "latency_ms": 3,
            },
            {
                "action": "retrieve",
                "input": "request leave",
                "output": "8 hits",
                "latency_ms": 41.6,
            },
        ],
        "queries": ["request leave", "approve leave <@U1>"],
        "evidence_chunk_ids": [10, 11],
        "verification": {"verified": 1, "rejected": 2},
        "answer": stored_answer(),
        "error": None,
    }
    return StoredRun(**{**defaults, **fields})


def lines(message: Any) -> str:
    return "\n".join(
        element["text"]
        for block in message.blocks
        for element in [block.get("text"), *block.get("elements", [])]
        if isinstance(element, dict)
    )


def test_the_trace_shows_sub_questions_queries_sources_steps_and_why_it_stopped() -> None:
    message = trace_message(run())
    assert violations(text=message.text, blocks=message.blocks) == []
    text = lines(message)
    assert message.blocks[0] == {
        "type": "header",
        "text": {"type": "plain_text", "text": "Why this answer?"},
    }
    assert (
        "Run 12 · finished · took 1.8 s · extractive reasoner · "
        "stopped because it had enough evidence" in text
    )
    assert (
        "*Sub-questions*\n• Where is leave requested? — answered\n"
        "• Who approves &lt;!channel&gt;? — missing (not key)" in text
    )
    assert "*Queries run*\n• request leave\n• approve leave &lt;@U1&gt;" in text
    assert (
        "*Sources read*\n[1] <https://docs.example/leave|Leave> · Requesting · updated 2024-05-01\n"
        "2 passages kept as evidence" in text
    )
    assert (
        "*Steps*\n1. *plan* How do I request leave? → 2 sub-questions · 3 ms\n"
        "2. *retrieve* request leave → 8 hits · 42 ms" in text
    )
    assert "Grounding check: 1 quote verified in their sources, 2 dropped" in text


def test_a_run_without_steps_shows_the_answers_timings() -> None:
    answer = stored_answer() | {"timings_ms": {"retrieve": 12.4, "extract": 80.0}}
    text = lines(trace_message(run(steps=[], answer=answer)))
    assert "*Steps*\n• retrieve · 12 ms\n• extract · 80 ms" in text


def test_a_failed_run_shows_its_error_and_whatever_it_stored() -> None:
    message = trace_message(
        run(
            status="failed",
            finished_at=None,
            stop_reason=None,
            answer={"question": "Q"},
            error="the model timed out <!here>",
            steps=[],
            queries=[],
            verification={},
        )
    )
    text = lines(message)
    assert "*The run failed:* the model timed out &lt;!here&gt;" in text
    assert "*Sub-questions:* none" in text and "*Queries run:* none" in text
    assert violations(text=message.text, blocks=message.blocks) == []


def test_a_run_of_any_length_fits_one_message() -> None:
    steps = [
        {"action": f"step{n}", "input": "x" * 5000, "output": "& " * 900, "latency_ms": n}
        for n in range(500)
    ]
    crowded = Answer(
        question="Q",
        claims=(),
        citations=tuple(
            Citation(n, "T" * 300, "https://docs.example/" + "p" * 900, "u", n, n, "s", "c")
            for n in range(1, 200)
        ),
        stop_reason="max_steps_reached",
        escalate=True,
        sub_questions=tuple(SubQuestion("<sub> " * 100, "missing") for _ in range(300)),
    )
    huge = run(
        answer=crowded.as_dict(),
        question="Q " * 5000,
        steps=steps,
        queries=["<q>" * 300] * 400,
        evidence_chunk_ids=list(range(3000)),
        reasoner="r" * 2000,
    )
    message = trace_message(dataclasses.replace(huge))
    assert violations(text=message.text, blocks=message.blocks) == []
    assert "… and " in lines(message)
