"""Why an answer says what it says: a stored run as a typed `Trace`, and as plain lines.

`kb trace RUN_ID` prints `trace_lines(trace)`; the Slack "Why this answer?" button can
render the same `Trace` as blocks. Everything here comes from the `agent_runs` row.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from store.runs import StoredRun


@dataclass(frozen=True, slots=True)
class TraceStep:
    step: int
    action: str
    input: str
    output: str
    latency_ms: float


@dataclass(frozen=True, slots=True)
class TraceSource:
    chunk_id: int
    title: str
    url: str | None
    section: str
    cited: bool


@dataclass(frozen=True, slots=True)
class TraceSubQuestion:
    text: str
    status: str
    key: bool


@dataclass(frozen=True, slots=True)
class Trace:
    run_id: int
    created_at: datetime
    status: str  # running, finished, failed
    question: str
    standalone_question: str | None
    reasoner: str
    scope: dict[str, Any]
    history_turns: int
    sub_questions: tuple[TraceSubQuestion, ...]
    queries: tuple[str, ...]
    sources: tuple[TraceSource, ...]
    steps: tuple[TraceStep, ...]
    stop_reason: str | None
    escalate: bool | None
    verified: int
    rejected: int
    notes: tuple[str, ...]
    latency_ms: float | None
    error: str | None


def trace_from_run(run: StoredRun) -> Trace:
    cited = {c.get("chunk_id") for c in (run.answer or {}).get("claims", [])}
    return Trace(
        run_id=run.id,
        created_at=run.created_at,
        status=run.status,
        question=run.question,
        standalone_question=run.standalone_question,
        reasoner=run.reasoner,
        scope=run.scope,
        history_turns=run.history_turns,
        sub_questions=tuple(
            TraceSubQuestion(q.get("text", ""), q.get("status", ""), bool(q.get("key", True)))
            for q in run.sub_questions
        ),
        queries=tuple(run.queries),
        sources=tuple(
            TraceSource(
                int(s["chunk_id"]),
                s.get("title", ""),
                s.get("url"),
                s.get("section", ""),
                int(s["chunk_id"]) in cited,
            )
            for s in run.sources
        ),
        steps=tuple(
            TraceStep(
                int(s.get("step", 0)),
                s.get("action", ""),
                s.get("input", ""),
                s.get("output", ""),
                float(s.get("latency_ms", 0.0)),
            )
            for s in run.steps
        ),
        stop_reason=run.stop_reason,
        escalate=run.escalate,
        verified=int(run.verification.get("verified", 0)),
        rejected=int(run.verification.get("rejected", 0)),
        notes=tuple(run.notes),
        latency_ms=run.latency_ms,
        error=run.error,
    )


def trace_lines(trace: Trace) -> list[str]:
    """The trace as plain text lines (no markup), in the order a reader asks."""
    lines = [f"Run {trace.run_id} · {trace.status} · {trace.reasoner or 'unknown'} reasoner"]
    lines.append(f"Question: {trace.question}")
    if trace.standalone_question:
        lines.append(f"Searched as: {trace.standalone_question}")
    if trace.scope and any(v for v in trace.scope.values()):
        lines.append("Scope: " + _scope(trace.scope))
    if trace.sub_questions:
        lines.append("Sub-questions:")
        lines += [f"  - {q.text} ({q.status})" for q in trace.sub_questions]
    if trace.queries:
        lines.append("Queries run:")
        lines += [f"  - {q}" for q in trace.queries]
    if trace.sources:
        lines.append("Sources read:")
        lines += [
            f"  {'*' if s.cited else '-'} {s.title}" + (f" — {s.section}" if s.section else "")
            for s in _unique_sources(trace.sources)
        ]
    lines.append("Steps:")
    lines += [
        f"  {s.step}. {s.action}: {s.input} → {s.output} ({s.latency_ms:.0f} ms)"
        for s in trace.steps
    ]
    lines.append(
        f"Stopped: {trace.stop_reason or 'not yet'}; quotes verified {trace.verified}, "
        f"dropped {trace.rejected}" + ("; offered to a human" if trace.escalate else "")
    )
    lines += [f"Note: {note}" for note in trace.notes]
    if trace.error:
        lines.append(f"Error: {trace.error}")
    if trace.latency_ms is not None:
        lines.append(f"Took {trace.latency_ms:.0f} ms")
    return lines


def _unique_sources(sources: tuple[TraceSource, ...]) -> list[TraceSource]:
    seen: dict[tuple[str, str], TraceSource] = {}
    for source in sources:
        key = (source.title, source.section)
        if key not in seen or source.cited:
            seen[key] = source
    return list(seen.values())


def _scope(scope: dict[str, Any]) -> str:
    return "; ".join(f"{k}: {', '.join(map(str, v))}" for k, v in scope.items() if v)
