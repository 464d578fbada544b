"""The views: the App Home tab (`views.publish`) and the two modals (`views.open`).

The modals carry the run (and escalation) they are about in `private_metadata`, as the
same small JSON as the buttons; `view_value` and `submitted_text` read a submission back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.slack.render import action_ids as ids
from bot.slack.render.blocks import help_lines
from bot.slack.render.layout import Block, context, divider, header, section
from bot.slack.render.limits import INPUT_MAX_LENGTH
from bot.slack.render.mrkdwn import excerpt, link, shorten
from bot.slack.render.sections import capped_lines

View = dict[str, Any]
FEEDBACK_COMMENT_MAX = 2000


@dataclass(frozen=True, slots=True)
class SourceSummary:
    name: str
    collection: str
    documents: int


@dataclass(frozen=True, slots=True)
class RecentQuestion:
    question: str
    asked_at: datetime | None = None
    link: str | None = None  # the thread's permalink


@dataclass(frozen=True, slots=True)
class KnowledgeGap:
    """A group of questions that escalated or got 👎 (`kb stats`), for admins."""

    question: str  # the most recent wording
    count: int


@dataclass(frozen=True, slots=True)
class HomeContent:
    """What the App Home shows one user."""

    sources: Sequence[SourceSummary] = ()
    last_reindex: datetime | None = None  # the last successful one
    recent_questions: Sequence[RecentQuestion] = ()
    command: str = "/kb"
    gaps: Sequence[KnowledgeGap] | None = None  # None: not an admin, the section is left out


@dataclass(frozen=True, slots=True)
class ExpertAnswerForm:
    escalation_id: int
    run_id: int
    question: str


@dataclass(frozen=True, slots=True)
class FeedbackCommentForm:
    run_id: int


def home_view(content: HomeContent) -> View:
    """The App Home tab: what the bot knows, how to ask, and the user's recent questions."""
    blocks: list[Block] = [
        header("What I know"),
        section(_knowledge(content.sources)),
        context(_reindexed(content.last_reindex)),
        divider(),
        header("How to ask"),
        section("\n".join(help_lines(command=content.command))),
        divider(),
        header("Your recent questions"),
        section(_recent(content.recent_questions)),
    ]
    if content.gaps is not None:
        blocks += [divider(), header("Knowledge gaps (admins)"), section(_gaps(content.gaps))]
    return {"type": "home", "blocks": blocks}


def local_time(when: datetime, *, with_time: bool = True) -> str:
    """A time each viewer's Slack shows in their own time zone (`<!date^…>`), with UTC
    as the fallback text for clients that cannot (https://docs.slack.dev/messaging/formatting-message-text#date-formatting)."""
    stamp = int(when.timestamp())
    if with_time:
        return f"<!date^{stamp}^{{date_short_pretty}} at {{time}}|{when:%Y-%m-%d %H:%M} UTC>"
    return f"<!date^{stamp}^{{date_short_pretty}}|{when:%Y-%m-%d}>"


def _gaps(gaps: Sequence[KnowledgeGap]) -> str:
    if not gaps:
        return "No questions escalated or got a 👎 in the last 30 days."
    lines = ["Asked, and not answered well, in the last 30 days (`kb stats` has more):"]
    for gap in gaps:
        times = f"{gap.count} time{'s' if gap.count != 1 else ''}"
        lines.append(f"• {excerpt(shorten(gap.question, 140), 140)} — {times}")
    return capped_lines(lines, limit=2800)


def _knowledge(sources: Sequence[SourceSummary]) -> str:
    if not sources:
        return "Nothing is indexed yet."
    by_collection: dict[str, list[SourceSummary]] = {}
    for source in sources:
        by_collection.setdefault(source.collection, []).append(source)
    lines = ["Answers come from these collections of documents:"]
    for collection, members in sorted(by_collection.items()):
        count = sum(s.documents for s in members)
        names = ", ".join(shorten(s.name, 60) for s in members)
        lines.append(
            f"• *{excerpt(collection, 80)}* — {count} document{'s' if count != 1 else ''} "
            f"from {excerpt(names, 400)}"
        )
    return capped_lines(lines, limit=2800, more="… and {count} more collections")


def _reindexed(when: datetime | None) -> str:
    if when is None:
        return "No reindex has finished yet."
    return f"Last successful reindex: {local_time(when)}"


def _recent(questions: Sequence[RecentQuestion]) -> str:
    if not questions:
        return "You haven't asked anything yet. Mention the bot or use the command to ask."
    lines = ["Your latest questions, newest first:"]
    for asked in questions:
        shown = shorten(asked.question, 140)
        line = f"• {link(asked.link, shown) if asked.link else excerpt(shown, 140)}"
        if asked.asked_at is not None:
            line += f" · {local_time(asked.asked_at, with_time=False)}"
        lines.append(line)
    return capped_lines(lines, limit=2800)


def expert_answer_modal(form: ExpertAnswerForm) -> View:
    """ "Answer & add to knowledge base": one multiline plain-text answer."""
    return {
        "type": "modal",
        "callback_id": ids.EXPERT_ANSWER_MODAL,
        "title": _plain("Answer the question"),
        "submit": _plain("Post answer"),
        "close": _plain("Cancel"),
        "private_metadata": ids.action_value(run=form.run_id, escalation=form.escalation_id),
        "blocks": [
            section(f"*Question:* {excerpt(form.question, 2500)}"),
            _text_input(
                block_id=ids.EXPERT_ANSWER_BLOCK,
                action_id=ids.EXPERT_ANSWER_INPUT,
                label="Your answer",
                placeholder="What should the asker, and the next person who asks, know?",
                max_length=INPUT_MAX_LENGTH,
            ),
            context(
                "Your answer is posted in the asker's thread and added to the knowledge "
                "base, cited with a link to this escalation."
            ),
        ],
    }


def feedback_comment_modal(form: FeedbackCommentForm) -> View:
    """After 👎: an optional word on what was wrong."""
    return {
        "type": "modal",
        "callback_id": ids.FEEDBACK_COMMENT_MODAL,
        "title": _plain("What was wrong?"),
        "submit": _plain("Send"),
        "close": _plain("Skip"),
        "private_metadata": ids.action_value(run=form.run_id),
        "blocks": [
            section(
                "Thanks, your 👎 is recorded. A word on what was missing or wrong helps "
                "the people who write the documents."
            ),
            {
                **_text_input(
                    block_id=ids.FEEDBACK_COMMENT_BLOCK,
                    action_id=ids.FEEDBACK_COMMENT_INPUT,
                    label="What was missing or wrong?",
                    placeholder="Optional",
                    max_length=FEEDBACK_COMMENT_MAX,
                ),
                "optional": True,
            },
        ],
    }


def view_value(view: Mapping[str, Any]) -> ids.ActionValue:
    """The run (and escalation) a submitted modal is about; ActionValueError if forged."""
    return ids.parse_action_value(view.get("private_metadata"))


def submitted_text(view: Mapping[str, Any], *, block_id: str, action_id: str) -> str:
    """The text typed into one input of a submitted view ("" when it was left empty)."""
    values = view.get("state", {}).get("values", {})
    value = values.get(block_id, {}).get(action_id, {}).get("value")
    return value.strip() if isinstance(value, str) else ""


def _plain(text: str) -> dict[str, str]:
    return {"type": "plain_text", "text": text}


def _text_input(
    *, block_id: str, action_id: str, label: str, placeholder: str, max_length: int
) -> Block:
    return {
        "type": "input",
        "block_id": block_id,
        "label": _plain(label),
        "element": {
            "type": "plain_text_input",
            "action_id": action_id,
            "multiline": True,
            "max_length": max_length,
            "placeholder": _plain(placeholder),
        },
    }
