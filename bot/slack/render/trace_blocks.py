"""The ephemeral "Why this answer?": how a stored run found (or failed to find) its answer.

Read from the `StoredRun` alone: its sub-questions, the queries it ran, the sources it
read and cited, the grounding check, why it stopped, and each step with its latency
(runs without steps show the answer's timings instead). One message, each list capped,
so a run of any length fits; everything in it is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent.answer import Answer
from bot.slack.render.layout import Block, SlackMessage, context, fallback, header, section
from bot.slack.render.mrkdwn import escape, shorten
from bot.slack.render.sections import capped_lines, source_line
from store.runs import StoredRun

_STOP_REASONS = {
    "enough_evidence": "it had enough evidence",
    "max_steps_reached": "it reached its step limit",
    "no_better_action": "no further search looked useful",
    "insufficient_grounding": "nothing it found was grounded well enough",
    "no_retrieval_needed": "the question needed no search",
}
# Each list gets this much of the message, so five lists and the rest stay under budget.
_LIST_CHARS = 1200
_ITEM_CHARS = 200


def trace_message(run: StoredRun) -> SlackMessage:
    """The run as a short report for the person who asked "Why this answer?"."""
    answer = _answer(run.answer)
    blocks: list[Block] = [
        header("Why this answer?"),
        section(f"*Question:* {escape(shorten(run.question, 500))}"),
        context(escape(shorten(_summary_line(run), 1000))),
    ]
    if run.status == "failed":
        blocks.append(section(f"*The run failed:* {escape(shorten(run.error or '', 500))}"))
    elif run.status == "running":
        blocks.append(section("The run has not finished yet."))
    blocks += [
        _list("Sub-questions", _sub_questions(answer)),
        _list("Queries run", [f"• {escape(shorten(q, _ITEM_CHARS))}" for q in run.queries]),
        _list("Sources read", _sources(run, answer)),
        _list("Steps", _steps(run, answer)),
    ]
    grounding = _grounding(run.verification)
    if grounding:
        blocks.append(context(grounding))
    return SlackMessage(text=fallback(f"Why this answer: {run.question}"), blocks=blocks)


def _answer(stored: Mapping[str, Any] | None) -> Answer | None:
    # A run that failed midway may hold a partial answer; the trace shows what there is.
    if not stored:
        return None
    try:
        return Answer.from_dict(stored)
    except (KeyError, TypeError, ValueError):
        return None


def _summary_line(run: StoredRun) -> str:
    parts = [f"Run {run.id}", run.status]
    if run.finished_at is not None:
        seconds = (run.finished_at - run.created_at).total_seconds()
        parts.append(f"took {seconds:.1f} s")
    if run.reasoner:
        parts.append(f"{run.reasoner} reasoner")
    if run.stop_reason:
        parts.append(f"stopped because {_STOP_REASONS.get(run.stop_reason, run.stop_reason)}")
    if run.history_turns:
        parts.append(f"{run.history_turns} earlier turns of the thread")
    return " · ".join(parts)


def _sub_questions(answer: Answer | None) -> list[str]:
    if answer is None:
        return []
    return [
        f"• {escape(shorten(q.text, _ITEM_CHARS))} — {q.status}{'' if q.key else ' (not key)'}"
        for q in answer.sub_questions
    ]


def _sources(run: StoredRun, answer: Answer | None) -> list[str]:
    lines = [source_line(c) for c in answer.citations] if answer else []
    if run.evidence_chunk_ids:
        count = len(run.evidence_chunk_ids)
        lines.append(f"{count} passage{'s' if count != 1 else ''} kept as evidence")
    return lines


def _steps(run: StoredRun, answer: Answer | None) -> list[str]:
    if run.steps:
        return [_step_line(number, step) for number, step in enumerate(run.steps, start=1)]
    timings = answer.timings_ms if answer else {}
    return [f"• {escape(shorten(name, 60))} · {ms:.0f} ms" for name, ms in timings.items()]


def _step_line(number: int, step: Mapping[str, Any]) -> str:
    action = shorten(str(step.get("action", "step")), 60)
    line = f"{number}. *{escape(action)}*"
    if step.get("input"):
        line += f" {escape(shorten(str(step['input']), _ITEM_CHARS))}"
    if step.get("output"):
        line += f" → {escape(shorten(str(step['output']), _ITEM_CHARS))}"
    latency = step.get("latency_ms")
    if isinstance(latency, int | float) and not isinstance(latency, bool):
        line += f" · {latency:.0f} ms"
    return line


def _grounding(verification: Mapping[str, Any]) -> str:
    counts = {key: _count(verification.get(key)) for key in ("verified", "rejected")}
    if counts["verified"] is None and counts["rejected"] is None:
        return ""
    verified, rejected = counts["verified"] or 0, counts["rejected"] or 0
    return (
        f"Grounding check: {verified} quote{'s' if verified != 1 else ''} verified in "
        f"their sources, {rejected} dropped"
    )


def _count(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return len(value) if isinstance(value, list | tuple) else None


def _list(title: str, lines: list[str]) -> Block:
    if not lines:
        return section(f"*{title}:* none")
    return section(capped_lines([f"*{title}*", *lines], limit=_LIST_CHARS))
