"""Renders an Answer as Slack Block Kit blocks and as plain text for the terminal."""

from __future__ import annotations

import re
from typing import Any

from agent.answer import Answer

_MARKDOWN_LINK = re.compile(r"\[([^\]]+)\]\((https?://[^)\s]+)\)")

NOT_COVERED = "I couldn't find this in the knowledge base."


def _slack_links(text: str) -> str:
    """Markdown links as Slack mrkdwn links, so quotes stay clickable."""
    return _MARKDOWN_LINK.sub(lambda m: f"<{m[2]}|{m[1]}>", text)


def _plain_links(text: str) -> str:
    return _MARKDOWN_LINK.sub(lambda m: m[1], text)


def answer_blocks(answer: Answer) -> list[dict[str, Any]]:
    """Block Kit for one answer: a section per claim, then the sources as context."""
    if answer.reply:
        return [_section(answer.reply)]
    if not answer.covered:
        gap = "; ".join(g.detail or g.sub_question for g in answer.gaps) or "no grounded evidence"
        return [_section(f"{NOT_COVERED}\n_What is missing:_ {gap}")]
    blocks = [
        _section(f"> {_slack_links(claim.quote)} [{claim.citation}]") for claim in answer.claims
    ]
    sources = [
        f"[{s.number}] <{s.url}|{s.title}>" if s.url else f"[{s.number}] {s.title}"
        for s in answer.citations
    ]
    blocks += [_section(f":warning: {c.detail}") for c in answer.conflicts]
    blocks += [_section(f"_Not found:_ {g.sub_question}") for g in _open_gaps(answer)]
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": "\n".join(sources)}]})
    return blocks


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}}


def answer_text(answer: Answer) -> str:
    """The same answer as terminal text: quotes with [n] citations, then Sources."""
    if answer.reply:
        return answer.reply
    if not answer.covered:
        lines = [NOT_COVERED]
        lines += [f"  Missing: {gap.detail or gap.sub_question}" for gap in answer.gaps]
        lines.append("  Try other words, or ask the people who own the topic.")
        return "\n".join(lines)
    lines = [f"• “{_plain_links(claim.quote)}” [{claim.citation}]" for claim in answer.claims]
    lines += [f"! {conflict.detail}" for conflict in answer.conflicts]
    lines += [f"  Not found: {gap.sub_question}" for gap in _open_gaps(answer)]
    lines += ["", "Sources:"]
    lines += [f"  [{s.number}] {s.title} — {s.url or s.uri}" for s in answer.citations]
    return "\n".join(lines)


def _open_gaps(answer: Answer) -> list[Any]:
    """Sub-questions the answer has nothing for (the rest of it is still shown)."""
    missing = {q.text for q in answer.sub_questions if q.status == "missing"}
    return [g for g in answer.gaps if g.sub_question in missing]
