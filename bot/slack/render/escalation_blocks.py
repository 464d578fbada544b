"""Escalation in messages: the post to the escalation channel, its resolved state, the
"Escalated by" note on the original reply, and the expert's answer in the asker's thread.

The post pings the configured user group (`<!subteam^S…>`), the only mention the bot
sends of its own, taken from configuration and never from text. It is one message: the
claims appear as short excerpts (the whole answer is one click away in the thread), and
each list keeps to a budget so the post stays within Block Kit's limits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent.answer import Answer
from bot.slack.render import action_ids as ids
from bot.slack.render.layout import (
    Block,
    SlackMessage,
    actions,
    button,
    context,
    fallback,
    header,
    pack,
    section,
)
from bot.slack.render.mrkdwn import (
    channel_mention,
    escape,
    excerpt,
    group_mention,
    inline,
    link,
    shorten,
    user_mention,
)
from bot.slack.render.sections import capped_lines, closest_lines, line_sections, source_line

ESCALATED_BLOCK_ID = "kb_escalated"
# A permalink is ~80 characters; a longer "link" is not worth the room it takes.
_MAX_NOTE_LINK = 300


@dataclass(frozen=True, slots=True)
class EscalationPost:
    """What the escalation channel is told; ids come from Slack payloads and settings."""

    escalation_id: int
    run_id: int
    question: str
    asker: str  # Slack user id
    answer: Answer | None = None  # what the bot found, when it found anything
    escalated_by: str | None = None  # who pressed the button, when not the asker
    channel: str | None = None  # where the question was asked
    thread_link: str | None = None  # chat.getPermalink of the asker's thread
    user_group: str | None = None  # the configured subteam to ping


def escalation_message(post: EscalationPost) -> SlackMessage:
    """The post for the escalation channel, with "Answer & add to knowledge base" and
    "Mark resolved"."""
    value = ids.action_value(run=post.run_id, escalation=post.escalation_id)
    buttons = actions(
        [
            button(
                "Answer & add to knowledge base",
                action_id=ids.ESCALATION_ANSWER,
                value=value,
                style="primary",
            ),
            button("Mark resolved", action_id=ids.ESCALATION_RESOLVE, value=value),
        ]
    )
    return SlackMessage(text=_post_fallback(post), blocks=[*_post_body(post), buttons])


def resolved_escalation_message(
    post: EscalationPost, *, resolved_by: str, answered: bool, answer_link: str | None = None
) -> SlackMessage:
    """The same post once handled: its buttons give way to who resolved it and how."""
    status = escalation_status_blocks(
        resolved_by=resolved_by, answered=answered, answer_link=answer_link
    )
    return SlackMessage(
        text=fallback(f"Resolved: {post.question}"), blocks=[*_post_body(post), *status]
    )


def escalation_status_blocks(
    *, resolved_by: str, answered: bool, answer_link: str | None = None
) -> list[Block]:
    """ "✅ Resolved by @x", or answered and added to the knowledge base, with a link."""
    who = user_mention(resolved_by) or "someone"
    if not answered:
        return [context(f"✅ Resolved by {who}")]
    text = f"✅ Answered by {who} and added to the knowledge base"
    if answer_link and len(answer_link) <= _MAX_NOTE_LINK:
        text += f" · {link(answer_link, 'the answer')}"
    return [context(text)]


def escalated_note(*, by: str, link: str | None) -> Block:
    """ "Escalated by <@U…> → escalation thread", where the Escalate button was."""
    who = user_mention(by)
    text = f"🙋 Escalated by {who}" if who else "🙋 Escalated to a human"
    if link and len(link) <= _MAX_NOTE_LINK:
        text += f" → {_link(link, 'escalation thread')}"
    return {**context(text), "block_id": ESCALATED_BLOCK_ID}


def mark_escalated(
    blocks: Sequence[Mapping[str, Any]], *, escalated_by: str, link: str | None
) -> list[Block]:
    """The blocks of a posted reply (as a block_actions payload carries them) with the
    Escalate button replaced by the "Escalated by" note; applying it twice changes nothing."""
    note = escalated_note(by=escalated_by, link=link)
    marked: list[Block] = []
    for block in blocks:
        if block.get("block_id") == ESCALATED_BLOCK_ID:
            continue
        if block.get("type") == "actions":
            marked.append(note)
            kept = [e for e in block.get("elements", []) if e.get("action_id") != ids.ESCALATE]
            if kept:
                marked.append({**block, "elements": kept})
            continue
        marked.append(dict(block))
    return marked if note in marked else [*marked, note]


def expert_answer_messages(
    *, text: str, expert: str, escalation_link: str | None = None
) -> list[SlackMessage]:
    """The expert's answer, posted in the asker's thread (their words, escaped, quoted)."""
    who = user_mention(expert) or "An expert"
    quoted = [f"> {line}" for line in inline(text).strip().split("\n")]
    note = "📚 Added to the knowledge base: the next person who asks gets this answer."
    if escalation_link and len(escalation_link) <= _MAX_NOTE_LINK:
        note += f" {_link(escalation_link, 'Escalation thread')}"
    units = [
        [section(f"💬 {who} answered:")],
        *([section(piece)] for piece in line_sections(quoted)),
        [context(note)],
    ]
    return [
        SlackMessage(text=fallback(f"An expert answered: {text}"), blocks=page)
        for page in pack(units)
    ]


def _link(url: str, label: str) -> str:
    # `link` is shadowed by parameters of that name in this module's functions.
    return link(url, label)


def _post_body(post: EscalationPost) -> list[Block]:
    ping = group_mention(post.user_group)
    asker = user_mention(post.asker) or "Someone"
    where = channel_mention(post.channel)
    opening = f"{ping + ' ' if ping else ''}{asker} asked{' in ' + where if where else ''}:"
    question = "\n".join(f"> {line}" for line in escape(shorten(post.question, 1000)).split("\n"))
    about = [opening, question]
    escalator = user_mention(post.escalated_by)
    if escalator and post.escalated_by != post.asker:
        about.append(f"Escalated by {escalator}.")
    if post.thread_link:
        about.append(link(post.thread_link, "Open the thread"))
    return [header("Question for a human"), section("\n".join(about)), *_findings(post.answer)]


def _findings(answer: Answer | None) -> list[Block]:
    if answer is None or not answer.claims:
        found = "*What I found:* nothing grounded in the documents."
        blocks = [section(found)]
        if answer is not None and answer.closest_pages:
            blocks.append(section(capped_lines(closest_lines(answer.closest_pages), limit=2000)))
    else:
        lines = ["*What I found*"]
        lines += [f"• “{excerpt(claim.quote, 300)}” [{claim.citation}]" for claim in answer.claims]
        blocks = [section(capped_lines(lines, limit=2500, more="… and {count} more in the thread"))]
        sources = ["*Sources*", *(source_line(c) for c in answer.citations)]
        blocks.append(section(capped_lines(sources, limit=2000)))
    if answer is not None and answer.gaps:
        missing = ["*Missing*"]
        missing += [
            f"• {excerpt(gap.sub_question, 300)}"
            + (f" — {excerpt(gap.detail, 300)}" if gap.detail else "")
            for gap in answer.gaps
        ]
        blocks.append(section(capped_lines(missing, limit=2000)))
    return blocks


def _post_fallback(post: EscalationPost) -> str:
    # The fallback decides who is notified, so the group's ping belongs in it too.
    ping = group_mention(post.user_group)
    asker = user_mention(post.asker) or "someone"
    line = fallback(f"Question for a human: {post.question}")
    return f"{ping + ' ' if ping else ''}{line} (asked by {asker})"
