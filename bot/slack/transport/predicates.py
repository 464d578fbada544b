"""Decisions about Slack payloads, as pure functions (no I/O), tested on real payload files.

Middleware and listeners ask these; anything that needs the database (has the bot
answered this thread?) is looked up first and passed in as a plain value.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from enum import Enum
from typing import Any

from bot.slack.transport.followups import FollowUp, follow_up
from bot.slack.transport.incoming import decode

Payload = Mapping[str, Any]

# Message subtypes that are someone writing to the channel; everything else (edits,
# deletions, joins, topic changes, bot_message…) is not a question.
_USER_SUBTYPES = frozenset({None, "thread_broadcast", "file_share"})
_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")


class Route(Enum):
    """What to do with a message addressed (or not) to the bot."""

    IGNORE = "ignore"
    ANSWER = "answer"  # in the message's thread, with the thread's earlier turns
    ANSWER_IF_GROUNDED = "answer_if_grounded"  # help channels: post only a grounded answer
    REACT = "react"  # a thank-you in the bot's thread: a reaction, not a reply


def event_of(body: Payload) -> Payload | None:
    event = body.get("event")
    return event if isinstance(event, Mapping) else None


def is_message(event: Payload) -> bool:
    return event.get("type") in ("message", "app_mention")


def is_edit_or_deletion(event: Payload) -> bool:
    return event.get("subtype") in ("message_changed", "message_deleted")


def is_join_or_leave(event: Payload) -> bool:
    subtype = event.get("subtype") or ""
    return event.get("type") in ("member_joined_channel", "member_left_channel") or (
        subtype.endswith("_join") or subtype.endswith("_leave")
    )


def is_user_message(event: Payload) -> bool:
    """Someone wrote something: not an edit, deletion, join or other system subtype."""
    return is_message(event) and event.get("subtype") in _USER_SUBTYPES


def is_from_bot(event: Payload) -> bool:
    return bool(event.get("bot_id")) or event.get("subtype") == "bot_message"


def is_from_self(event: Payload, *, bot_user_id: str | None, bot_id: str | None) -> bool:
    if bot_user_id and event.get("user") == bot_user_id:
        return True
    return bool(bot_id) and event.get("bot_id") == bot_id


def is_noise(
    event: Payload, *, bot_user_id: str | None, bot_id: str | None, ignore_bots: bool
) -> bool:
    """A message event the bot never answers: its own, edits, deletions, joins, other bots."""
    if not is_message(event):
        return False
    if is_from_self(event, bot_user_id=bot_user_id, bot_id=bot_id):
        return True
    if is_edit_or_deletion(event) or is_join_or_leave(event):
        return True
    if is_from_bot(event):
        return ignore_bots
    return not is_user_message(event)


def is_dm(event: Payload) -> bool:
    return event.get("channel_type") == "im"


def is_thread_reply(event: Payload) -> bool:
    thread_ts = event.get("thread_ts")
    return bool(thread_ts) and thread_ts != event.get("ts")


def mentions(text: str, user_id: str | None) -> bool:
    return bool(user_id) and any(m[1] == user_id for m in _MENTION.finditer(text or ""))


def question_text(text: str, *, bot_user_id: str | None) -> str:
    """The message as plain text (decoded once, see bot.slack.transport.incoming) without the bot's
    mention, whitespace tidied."""
    if bot_user_id:
        text = _MENTION.sub(lambda m: "" if m[1] == bot_user_id else m[0], text or "")
    return " ".join(decode(text or "").split())


def route(
    event: Payload,
    *,
    bot_user_id: str | None,
    help_channels: frozenset[str],
    thread_answered: bool,
    thread_needs_mention: bool,
    thread_askers: frozenset[str] | None = None,
) -> Route:
    """What to do with a user message (`app_mention` or `message`), noise already filtered.

    The same message can arrive as both `app_mention` and `message`: both give the same
    route, and the answer is claimed once per message (see `message_key`). A reply in a
    thread the bot answered is judged by `followups.follow_up` against `thread_askers`
    (who the bot answered there); None answers every reply, as before that judgement.
    """
    if event.get("type") == "app_mention" or is_dm(event):
        return Route.ANSWER
    mentioned = mentions(event.get("text", ""), bot_user_id)
    if is_thread_reply(event):
        if mentioned:
            return Route.ANSWER
        if not thread_answered or thread_needs_mention:
            return Route.IGNORE
        if thread_askers is None:
            return Route.ANSWER
        decision = follow_up(
            event.get("text", ""),
            author=str(event.get("user", "")),
            askers=thread_askers,
            bot_user_id=bot_user_id,
        )
        return _FOLLOW_UP_ROUTES[decision]
    if mentioned:
        return Route.ANSWER
    if event.get("channel") in help_channels:
        return Route.ANSWER_IF_GROUNDED
    return Route.IGNORE


_FOLLOW_UP_ROUTES = {
    FollowUp.ANSWER: Route.ANSWER,
    FollowUp.REACT: Route.REACT,
    FollowUp.IGNORE: Route.IGNORE,
}


def never_for_the_bot(
    event: Payload, *, bot_user_id: str | None, help_channels: frozenset[str]
) -> bool:
    """Channel chatter: a message no setting or thread could make the bot answer.

    Dropped before its delivery is recorded, so a busy channel costs no database writes.
    """
    if event.get("type") != "message":
        return False
    possible = route(
        event,
        bot_user_id=bot_user_id,
        help_channels=help_channels,
        thread_answered=True,
        thread_needs_mention=False,
        # As if the author were the asker: whether they are is a database question.
        thread_askers=frozenset({str(event.get("user", ""))}),
    )
    return possible is Route.IGNORE


def message_key(event: Payload) -> str:
    """One key per message, whichever event type delivered it."""
    return f"message:{event.get('channel')}:{event.get('ts')}"


def delivery_key(body: Payload) -> tuple[str, str] | None:
    """(key, kind) recorded before work starts: the event id, or a request fingerprint.

    Slack resends the same event id on a retry; a slash command, button or modal has no
    id, but a duplicate delivery is the same payload (same trigger_id), so a hash of the
    payload identifies it.
    """
    if body.get("type") == "url_verification" or body.get("ssl_check"):
        return None
    event_id = body.get("event_id")
    if event_id:
        return f"event:{event_id}", "event"
    kind = "command" if "command" in body else str(body.get("type") or "request")
    return f"{kind}:{_fingerprint(body)}", kind


def command_question_key(command: Payload) -> str:
    """One key per `/kb` question, its delivery row's (a duplicate is the same payload)."""
    return f"question:{_fingerprint(command)}"


def _fingerprint(body: Payload) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def thread_of(event: Payload) -> str:
    """The thread an answer to this message goes in: its thread, or a new one under it."""
    return str(event.get("thread_ts") or event.get("ts"))


class CommandKind(Enum):
    HELP = "help"
    ASK = "ask"


def parse_kb_command(text: str, *, private_by_default: bool) -> tuple[CommandKind, str, bool]:
    """`/kb` text → (kind, question, private): `/kb`, `/kb help`, `/kb private <q>`, `/kb <q>`."""
    words = decode(text or "").split()  # Slack escapes command text as it does messages
    if not words or (len(words) == 1 and words[0].lower() in ("help", "?")):
        return CommandKind.HELP, "", False
    if words[0].lower() == "private":
        question = " ".join(words[1:])
        return (CommandKind.ASK, question, True) if question else (CommandKind.HELP, "", False)
    if words[0].lower() == "public" and len(words) > 1:
        return CommandKind.ASK, " ".join(words[1:]), False
    return CommandKind.ASK, " ".join(words), private_by_default
