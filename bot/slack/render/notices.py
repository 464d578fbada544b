"""The bot's one-line notices (plain text, mostly ephemeral), in one place.

Block Kit messages are rendered in blocks.py; these are the short lines around them. Any
text from a user is escaped (mrkdwn.escape), so it can ping or link no one.
"""

from __future__ import annotations

from bot.slack.render.mrkdwn import escape

NOT_IN_CHANNEL = (
    "I can't post in this channel. Invite me with `/invite @kb`, or ask privately with "
    "`/kb private <question>`."
)
RUN_NOT_FOUND = "I can't find that answer any more; ask the question again."
ESCALATION_OFF = (
    "Escalation is not set up here; an admin sets KB_SLACK_ESCALATION_CHANNEL to turn it on."
)
# Without an escalation channel, a question with no channel thread to escalate in (a DM, a
# private /kb answer) gets this line (KB_SLACK_ESCALATION_ELSEWHERE replaces it).
ESCALATION_ELSEWHERE = (
    "Nobody here takes escalations from a direct message. Ask your question in your team's "
    "help channel with @kb, and press Escalate there: the people in that channel can answer."
)
NOT_A_MEMBER = "Only members of this channel can answer this question for the knowledge base."
ALREADY_ESCALATED = "This question was already escalated"
ESCALATION_NOT_FOUND = "I can't find that escalation any more."
ESCALATION_FAILED = (
    "I couldn't post to the escalation channel, so nobody was told. Ask an admin to invite "
    "me there, then press the button again."
)
EMPTY_EXPERT_ANSWER = "Write the answer to add to the knowledge base."
FEEDBACK_THANKS = "Thanks, your feedback is recorded."
NOT_THIS_MESSAGE = "That button doesn't belong to this message, so I did nothing."
# To a guest, someone of another organisation, or anyone in a channel shared with another
# organisation, where slack.toml lets them see nothing.
OUTSIDER = (
    "Sorry, I can't share the knowledge base here: it is for members of this workspace, "
    "and this conversation (or you) is outside it. Members can ask me privately with "
    "`/kb private <question>`."
)
EXPERTS_ONLY = (
    "Only the experts (members of the escalation channel or its user group) can add "
    "answers to the knowledge base."
)


def asked_on_behalf(*, user_id: str, question: str) -> str:
    return f"<@{user_id}> asked: {escape(question)}"


def already_escalated(link: str | None) -> str:
    return f"{ALREADY_ESCALATED}: {link}" if link else f"{ALREADY_ESCALATED}."


def added_to_knowledge(collection: str) -> str:
    return (
        f"Thanks! Your answer was posted in the asker's thread and added to the knowledge "
        f"base (collection `{escape(collection)}`)."
    )


ASSISTANT_GREETING = (
    "Hi! Ask me anything the team's documents cover; I answer with quotes and links to "
    "where they come from, and say so when the documents don't hold the answer."
)
