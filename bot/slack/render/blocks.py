"""Answers as Slack messages (Block Kit), and the bot's other short messages.

`answer_messages` renders one answer: the conversational reply if any, the claims as
bullets with numbered citation links, a note for each conflict (both sides, their dates,
which is newer), "Not found" for the gaps, the Sources, and on the last message the
buttons (👍, 👎, "Why this answer?", "Escalate to a human").

Splitting, so every message stays within Block Kit's limits (bot/slack/render/limits.py):
- Claims are packed whole into sections of up to 3,000 characters; a section never holds
  part of a claim next to another claim.
- A claim longer than a section is cut, at sentence ends, else at spaces, else anywhere
  but inside an entity or a link, into consecutive sections of its own; a cut inside the
  quoted part keeps the quote's `>` on the continued line.
- Sections are packed whole into messages (`layout.pack`): a claim is in one message,
  unless it alone is longer than a whole message (8,000 characters), and then it has
  consecutive messages to itself.
- Each message of a split answer says "part k of n"; the buttons, and the note of who
  escalated it, are on the last message only.

All text from documents, users and the agent is escaped (bot/slack/render/mrkdwn.py).
The trace, escalation and view renderers live beside this module and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from agent.answer import Answer, Claim, Conflict
from bot.slack.render import action_ids as ids
from bot.slack.render.escalation_blocks import (
    EscalationPost,
    escalated_note,
    escalation_message,
    escalation_status_blocks,
    expert_answer_messages,
    mark_escalated,
    resolved_escalation_message,
)
from bot.slack.render.feedback_buttons import feedback_block
from bot.slack.render.layout import (
    Block,
    SlackMessage,
    actions,
    button,
    context,
    fallback,
    pack,
    section,
)
from bot.slack.render.limits import MESSAGE_BLOCKS, MESSAGE_TEXT_BUDGET, SECTION_TEXT
from bot.slack.render.mrkdwn import escape, excerpt, inline, link, slack_len, split
from bot.slack.render.notices import OUTSIDER
from bot.slack.render.sections import cited_date, closest_lines, line_sections, source_line
from bot.slack.render.trace_blocks import trace_message

__all__ = [
    "NOT_COVERED",
    "EscalationPost",
    "ReplyOptions",
    "SlackMessage",
    "answer_messages",
    "escalated_note",
    "escalation_message",
    "escalation_status_blocks",
    "expert_answer_messages",
    "failure_message",
    "help_message",
    "mark_escalated",
    "placeholder_message",
    "resolved_escalation_message",
    "too_long_message",
    "trace_message",
]

NOT_COVERED = "I couldn't find this in the knowledge base."
# Room kept in every message for its "part k of n" line, the "Escalated by" note and the
# buttons and the feedback buttons (four blocks; the note's link is at most 300 characters).
_RESERVED_BLOCKS = 4
_RESERVED_CHARS = 600
_MIN_FILL = 300

Vote = Literal["up", "down"]


@dataclass(frozen=True, slots=True)
class ReplyOptions:
    """How to render an answer beyond what the answer says."""

    # The run the buttons act on; None means the answer's own run_id.
    run_id: int | None = None
    # The setting that shows "Escalate to a human" on every answer, not only flagged ones.
    always_offer_escalation: bool = False
    # Who escalated it (a Slack user id) and the escalation post's permalink: the button
    # gives way to "Escalated by <@U…> → link".
    escalated_by: str | None = None
    escalation_link: str | None = None
    # The viewer's vote. Slack's feedback buttons show the pressed one themselves, so it
    # no longer changes the blocks.
    vote: Vote | None = None
    # False for places without interactivity (a preview of what was posted elsewhere).
    buttons: bool = True


def answer_messages(answer: Answer, *, options: ReplyOptions | None = None) -> list[SlackMessage]:
    """The answer as one or more messages, in posting order; buttons on the last one."""
    options = options or ReplyOptions()
    units = [
        *_opening(answer),
        *_claim_units(answer),
        *(_conflict_unit(answer, conflict) for conflict in answer.conflicts),
        *_gaps_unit(answer),
        *_sources_unit(answer),
        *_closest_unit(answer),
    ]
    # The room kept for the closing blocks does not depend on them, so the same answer
    # splits the same way before and after it is escalated or voted on.
    pages = pack(
        units,
        max_blocks=MESSAGE_BLOCKS - _RESERVED_BLOCKS,
        max_text=MESSAGE_TEXT_BUDGET - _RESERVED_CHARS,
    ) or [[]]
    pages[-1].extend(_closing(answer, options))
    summary = _summary(answer)
    if len(pages) == 1:
        return [SlackMessage(text=fallback(summary), blocks=pages[0])]
    total = len(pages)
    return [
        SlackMessage(
            text=fallback(summary if number == 1 else f"{answer.question} (part {number})"),
            blocks=[context(f"_Answer, part {number} of {total}_"), *page],
        )
        for number, page in enumerate(pages, start=1)
    ]


def _reply(answer: Answer) -> str:
    """The conversational reply as shown; a blank one is none (Slack refuses empty text)."""
    return inline(answer.reply or "").strip()


def _summary(answer: Answer) -> str:
    if _reply(answer):
        return answer.reply or ""
    if not answer.claims:
        return NOT_COVERED
    more = len(answer.claims) - 1
    return answer.claims[0].statement + (f" (and {more} more)" if more else "")


def _opening(answer: Answer) -> Iterator[list[Block]]:
    if reply := _reply(answer):
        yield [section(text) for text in split(reply, SECTION_TEXT)]
    if answer.standalone_question and answer.standalone_question != answer.question:
        yield [context(f"Searched for: {excerpt(answer.standalone_question, 300)}")]
    if not answer.claims and not _reply(answer):
        yield [section(NOT_COVERED)]


def _claim_units(answer: Answer) -> Iterator[list[Block]]:
    """Whole claims packed into sections; a claim too long for one gets sections alone."""
    packed: list[str] = []
    for claim in answer.claims:
        text = claim_mrkdwn(claim, answer)
        if slack_len(text) > SECTION_TEXT:
            if packed:
                yield [section("\n".join(packed))]
                packed = []
            yield [section(piece) for piece in _long_claim_sections(text)]
        elif slack_len("\n".join([*packed, text])) > SECTION_TEXT:
            yield [section("\n".join(packed))]
            packed = [text]
        else:
            packed.append(text)
    if packed:
        yield [section("\n".join(packed))]


def claim_mrkdwn(claim: Claim, answer: Answer) -> str:
    """One claim as a bullet: the answer span in bold and its quote, the quote itself, or
    the statement with its quote beneath."""
    cite = _citation_link(claim.citation, answer)
    if claim.span and not _same_words(claim.span, claim.quote):
        # The answer leads; its sentence, verbatim, shows where it comes from.
        return f"• *{inline(claim.span).strip()}* — “{inline(claim.quote).strip()}” {cite}"
    if _same_words(claim.statement, claim.quote):
        return f"• “{inline(claim.quote).strip()}” {cite}"
    quote = "\n".join(f"> {line}" for line in inline(claim.quote).strip().split("\n"))
    return f"• {inline(claim.statement).strip()} {cite}\n{quote}"


def _citation_link(number: int, answer: Answer) -> str:
    cited = next((c for c in answer.citations if c.number == number), None)
    return link(cited.url, f"[{number}]") if cited else f"[{number}]"


def _same_words(first: str, second: str) -> bool:
    return " ".join(first.lower().split()) == " ".join(second.lower().split())


def _long_claim_sections(text: str) -> list[str]:
    """A claim's lines cut to fill sections; continued quote lines keep their `> `."""
    sections: list[str] = []
    current = ""
    for line in text.split("\n"):
        prefix = "> " if line.startswith(">") else ""
        body = line[len(prefix) :]
        limit = SECTION_TEXT - len(prefix)
        room = SECTION_TEXT - slack_len(current) - len(prefix) - 1 if current else limit
        # Less room than this left in a section: start the line in a new one, not a sliver.
        first = room if room >= _MIN_FILL else None
        for index, piece in enumerate(split(body, limit, first=first)):
            if index == 0 and current and slack_len(piece) <= room:
                current = f"{current}\n{prefix}{piece}"
                continue
            if current:
                sections.append(current)
            current = prefix + piece
    sections.append(current)
    return [s for s in sections if s.strip()]


def _conflict_unit(answer: Answer, conflict: Conflict) -> list[Block]:
    lines = [f"*Sources disagree:* {excerpt(conflict.sub_question, 300)}"]
    for index in conflict.claims:
        if 0 <= index < len(answer.claims):
            lines.append(_conflict_side(answer, answer.claims[index]))
    newer = next((c for c in answer.citations if c.number == conflict.newer), None)
    if newer is not None:
        lines.append(
            f"Newer: [{newer.number}] {excerpt(newer.title, 150)} {_dated(newer.updated_at)}"
        )
    else:
        lines.append("Their dates don't say which is newer.")
    if conflict.detail:
        lines.append(excerpt(conflict.detail, 500))
    return [section(text) for text in line_sections(lines)]


def _conflict_side(answer: Answer, claim: Claim) -> str:
    cited = next((c for c in answer.citations if c.number == claim.citation), None)
    side = f"• {_citation_link(claim.citation, answer)} “{excerpt(claim.quote, 200)}”"
    if cited is None:
        return side
    return f"{side} — {excerpt(cited.title, 150)} {_dated(cited.updated_at)}"


def _dated(when: object) -> str:
    date = cited_date(when)
    return f"(updated {date})" if date else "(no date)"


def _gaps_unit(answer: Answer) -> Iterator[list[Block]]:
    if not answer.gaps:
        return
    lines = ["*Not found*"]
    for gap in answer.gaps:
        asked = excerpt(gap.sub_question, 300)
        detail = excerpt(gap.detail, 500)
        if not detail:
            lines.append(f"• {asked}")
        elif _same_words(gap.sub_question, answer.question):
            lines.append(f"• {detail}")
        else:
            lines.append(f"• {asked} — {detail}")
    yield [section(text) for text in line_sections(lines)]


def _sources_unit(answer: Answer) -> Iterator[list[Block]]:
    if answer.citations:
        lines = ["*Sources*", *(source_line(c) for c in answer.citations)]
        yield [section(text) for text in line_sections(lines)]


def _closest_unit(answer: Answer) -> Iterator[list[Block]]:
    """Where to look when nothing answered: the pages read that came closest."""
    if not answer.claims and answer.closest_pages:
        yield [section(text) for text in line_sections(closest_lines(answer.closest_pages))]


def _closing(answer: Answer, options: ReplyOptions) -> list[Block]:
    """Who escalated it, then the buttons: together, and always last."""
    blocks: list[Block] = []
    if options.escalated_by:
        blocks.append(escalated_note(by=options.escalated_by, link=options.escalation_link))
    run_id = options.run_id if options.run_id is not None else answer.run_id
    if options.buttons and run_id is not None:
        offer = (answer.escalate or options.always_offer_escalation) and not options.escalated_by
        blocks.append(answer_buttons(run_id=run_id, escalate=offer))
        # 👍 / 👎 as Slack's own feedback buttons, which show the pressed one themselves.
        blocks.append(feedback_block(run_id=run_id))
    return blocks


def answer_buttons(*, run_id: int, escalate: bool) -> Block:
    """ "Why this answer?" and, when offered, "Escalate to a human" (votes: feedback_block)."""
    value = ids.action_value(run=run_id)
    buttons = [button("Why this answer?", action_id=ids.WHY, value=value)]
    if escalate:
        buttons.append(button("Escalate to a human", action_id=ids.ESCALATE, value=value))
    return actions(buttons)


def placeholder_message(
    *, step: str | None = None, queue_position: int | None = None
) -> SlackMessage:
    """What stands in the thread until the answer replaces it (`chat.update`)."""
    if queue_position is not None and queue_position > 0:
        text = f"You're number {queue_position} in the queue; I'll start on your question soon."
        return SlackMessage(text=text, blocks=[section(f"⏳ {text}")])
    blocks = [section("🔎 Searching the knowledge base…")]
    if step:
        blocks.append(context(f"Now: {excerpt(step, 300)}"))
    return SlackMessage(text="Searching the knowledge base…", blocks=blocks)


def failure_message(*, run_id: int | None) -> SlackMessage:
    """One plain line for a run that failed after the ack, naming the run to report."""
    ref = f"run {run_id}" if run_id is not None else "no run was recorded"
    text = (
        f"Sorry, something went wrong while answering this ({ref}). Please ask again in a "
        "minute; if it keeps failing, tell the people who run slack-kb and quote the run."
    )
    return SlackMessage(text=text, blocks=[section(text)])


def interrupted_message(*, command: bool = False) -> SlackMessage:
    """For a question whose answer was lost when the bot stopped mid-run (a crash, a kill);
    `command` when it is told apart from its question (a private `/kb` answer)."""
    what = "your /kb question" if command else "this"
    text = (
        f"Sorry, the bot restarted before it could answer {what}, and the answer was lost. "
        "Please ask again."
    )
    return SlackMessage(text=text, blocks=[section(text)])


def too_long_message(*, length: int, limit: int) -> SlackMessage:
    """The polite refusal of a question longer than the configured limit."""
    text = (
        f"Your question is {length:,} characters long; I can take up to {limit:,}. Please "
        "ask it in fewer words (the key question first), and I'll search for it."
    )
    return SlackMessage(text=text, blocks=[section(text)])


def outsider_message() -> SlackMessage:
    """The one line for a guest or outsider where slack.toml lets them see nothing."""
    return SlackMessage(text=OUTSIDER, blocks=[section(OUTSIDER)])


def help_message(*, command: str = "/kb") -> SlackMessage:
    """Usage, for `/kb`, `/kb help` and the App Home."""
    return SlackMessage(
        text=escape(f"How to ask slack-kb: {command} <question>"),
        blocks=[section("\n".join(help_lines(command=command)))],
    )


def help_lines(*, command: str = "/kb") -> Sequence[str]:
    cmd, question = escape(command), escape("<question>")
    return (
        "*Ask slack-kb* — answers from your team's documents, each with its quote and source.",
        f"• `{cmd} {question}` posts your question here and answers in its thread",
        f"• `{cmd} private {question}` answers only you",
        f"• `{cmd} help` or `{cmd}` shows this help",
        "• Mention the bot in a channel or send it a direct message; reply in the thread "
        "to follow up",
        "• Under each answer: 👍 / 👎, *Why this answer?* (how it was found) and "
        "*Escalate to a human* when the documents don't hold the answer",
    )
