"""TEMPORARY stand-in for bot/slack/blocks.py and bot/slack/actions.py (issue-11-blocks).

Deleted when the real renderer is merged; nothing here is meant to ship. It follows the
agreed signatures closely enough for the listeners to be written against them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.answer import Answer
from store.runs import StoredRun

VOTE_UP = "kb_vote_up"
VOTE_DOWN = "kb_vote_down"
WHY = "kb_why"
ESCALATE = "kb_escalate"
RESOLVE = "kb_resolve"
EXPERT_ANSWER = "kb_expert_answer"
EXPERT_ANSWER_VIEW = "kb_expert_answer_view"
COMMENT_VIEW = "kb_comment_view"
EXPERT_ANSWER_BLOCK = "expert_answer"
EXPERT_ANSWER_INPUT = "answer"
COMMENT_BLOCK = "comment"
COMMENT_INPUT = "comment"


@dataclass(frozen=True, slots=True)
class SlackMessage:
    text: str
    blocks: list[dict[str, Any]]
    unfurl_links: bool = False
    unfurl_media: bool = False


@dataclass(frozen=True, slots=True)
class ReplyOptions:
    show_escalate: bool = False
    private: bool = False


@dataclass(frozen=True, slots=True)
class EscalationPost:
    escalation_id: int
    question: str
    asker_id: str
    escalated_by: str
    thread_permalink: str | None
    answer: Answer
    usergroup: str | None = None
    status: str = "open"
    resolved_by: str | None = None


@dataclass(frozen=True, slots=True)
class HomeCollection:
    name: str
    documents: int
    sources: Sequence[str] = field(default_factory=tuple)


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}}


def _button(text: str, action_id: str, value: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "button",
        "text": {"type": "plain_text", "text": text},
        "action_id": action_id,
        "value": json.dumps(value),
    }


def answer_messages(answer: Answer, *, options: ReplyOptions) -> list[SlackMessage]:
    blocks: list[dict[str, Any]] = []
    if answer.reply:
        blocks.append(_section(_esc(answer.reply)))
    elif not answer.covered:
        gaps = "; ".join(g.detail or g.sub_question for g in answer.gaps)
        blocks.append(_section(f"I couldn't find this in the knowledge base. {_esc(gaps)}"))
    for claim in answer.claims:
        blocks.append(_section(f"• {_esc(claim.quote)} [{claim.citation}]"))
    for c in answer.citations:
        link = f"<{c.url}|{_esc(c.title)}>" if c.url else _esc(c.title)
        blocks.append(
            {"type": "context", "elements": [{"type": "mrkdwn", "text": f"[{c.number}] {link}"}]}
        )
    run = {"run": answer.run_id}
    buttons = [
        _button("👍", VOTE_UP, run),
        _button("👎", VOTE_DOWN, run),
        _button("Why this answer?", WHY, run),
    ]
    if options.show_escalate:
        buttons.append(_button("Escalate to a human", ESCALATE, run))
    blocks.append({"type": "actions", "block_id": "kb_actions", "elements": buttons})
    text = " ".join(c.quote for c in answer.claims) or "I couldn't find this in the knowledge base."
    return [SlackMessage(text=text[:3000], blocks=blocks)]


def placeholder_message(
    *, step: str | None = None, queue_position: int | None = None
) -> SlackMessage:
    if queue_position:
        text = f"Queued: {queue_position} question(s) ahead of yours…"
    elif step:
        text = f"Searching the knowledge base… ({_esc(step)})"
    else:
        text = "Searching the knowledge base…"
    return SlackMessage(text=text, blocks=[_section(text)])


def failure_message(*, run_id: int | None) -> SlackMessage:
    ref = f" (run {run_id})" if run_id is not None else ""
    text = f"Sorry, something went wrong while answering{ref}. Please try again."
    return SlackMessage(text=text, blocks=[_section(text)])


def trace_message(run: StoredRun) -> SlackMessage:
    lines = [f"*Run {run.id}*: stopped because {run.stop_reason}"]
    lines += [f"query: {_esc(q)}" for q in run.queries]
    for c in (run.answer or {}).get("citations", []):
        lines.append(f"read: {_esc(c['title'])}")
    text = "\n".join(lines)
    return SlackMessage(text=text, blocks=[_section(text)])


def escalation_message(post: EscalationPost) -> SlackMessage:
    ping = f"<!subteam^{post.usergroup}> " if post.usergroup else ""
    lines = [f"{ping}<@{post.asker_id}> asked: {_esc(post.question)}"]
    if post.thread_permalink:
        lines.append(f"<{post.thread_permalink}|thread>")
    for claim in post.answer.claims:
        lines.append(f"found: {_esc(claim.quote)} [{claim.citation}]")
    for c in post.answer.citations:
        lines.append(f"[{c.number}] {_esc(c.title)} {c.url or ''}")
    for gap in post.answer.gaps:
        lines.append(f"missing: {_esc(gap.detail or gap.sub_question)}")
    blocks = [_section("\n".join(lines))]
    value = {"escalation": post.escalation_id}
    if post.status == "open":
        blocks.append(
            {
                "type": "actions",
                "elements": [
                    _button("Mark resolved", RESOLVE, value),
                    _button("Answer & add to knowledge base", EXPERT_ANSWER, value),
                ],
            }
        )
    else:
        blocks.append(_section(f"Resolved by <@{post.resolved_by}>"))
    return SlackMessage(text="\n".join(lines)[:3000], blocks=blocks)


def escalated_reply(
    blocks: Sequence[Mapping[str, Any]], *, by: str, link: str | None
) -> list[dict[str, Any]]:
    kept = [dict(b) for b in blocks if b.get("type") != "actions"]
    note = f"Escalated by <@{by}>" + (f" → <{link}|escalation>" if link else "")
    return [*kept, {"type": "context", "elements": [{"type": "mrkdwn", "text": note}]}]


def expert_reply_message(*, expert_id: str, answer: str) -> SlackMessage:
    text = f"<@{expert_id}> answered: {_esc(answer)}"
    return SlackMessage(text=text[:3000], blocks=[_section(text)])


def help_message() -> SlackMessage:
    text = "Ask me with `/kb <question>`, `/kb private <question>`, or mention me."
    return SlackMessage(text=text, blocks=[_section(text)])


def home_view(
    *, collections: Sequence[HomeCollection], last_reindex: str | None, recent: Sequence[str]
) -> dict[str, Any]:
    lines = [f"{c.name}: {c.documents} documents ({', '.join(c.sources)})" for c in collections]
    lines.append(f"last reindex: {last_reindex or 'never'}")
    lines += [f"recent: {_esc(q)}" for q in recent]
    return {"type": "home", "blocks": [_section("\n".join(lines))]}


def expert_answer_modal(*, escalation_id: int, question: str) -> dict[str, Any]:
    return {
        "type": "modal",
        "callback_id": EXPERT_ANSWER_VIEW,
        "private_metadata": json.dumps({"escalation": escalation_id}),
        "title": {"type": "plain_text", "text": "Answer"},
        "submit": {"type": "plain_text", "text": "Add"},
        "blocks": [
            _section(_esc(question)),
            {
                "type": "input",
                "block_id": EXPERT_ANSWER_BLOCK,
                "label": {"type": "plain_text", "text": "Answer"},
                "element": {
                    "type": "plain_text_input",
                    "action_id": EXPERT_ANSWER_INPUT,
                    "multiline": True,
                },
            },
        ],
    }


def comment_modal(*, run_id: int) -> dict[str, Any]:
    return {
        "type": "modal",
        "callback_id": COMMENT_VIEW,
        "private_metadata": json.dumps({"run": run_id}),
        "title": {"type": "plain_text", "text": "Feedback"},
        "submit": {"type": "plain_text", "text": "Send"},
        "blocks": [
            {
                "type": "input",
                "block_id": COMMENT_BLOCK,
                "optional": True,
                "label": {"type": "plain_text", "text": "What was wrong?"},
                "element": {
                    "type": "plain_text_input",
                    "action_id": COMMENT_INPUT,
                    "multiline": True,
                },
            },
        ],
    }


def button_value(raw: str | None) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
