"""A Slack thread → one document's text, and which threads and messages count.

Pure functions over the messages `conversations.replies` returns (parent first, replies
oldest first). Slack text arrives escaped (`&amp;`, `&lt;`, `&gt;`) with its own markup
for mentions and links (https://api.slack.com/reference/surfaces/formatting#retrieving-messages);
it is decoded once here into the cleaned-text convention: `@Name`, `#channel`,
`[label](url)`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from jobs.formats.plaintext import tidy_text

# Subtypes that are what a person wrote; joins, leaves, topic changes, bot posts and
# tombstones ("This message was deleted.") are not.
_HUMAN_SUBTYPES = {None, "thread_broadcast", "file_share", "me_message"}
_MARKUP = re.compile(r"<([^<>]+)>")


@dataclass(frozen=True, slots=True)
class ThreadRules:
    """Which threads become documents (the source's settings, as plain values)."""

    min_replies: int = 1
    # Only threads with this reaction on any message (e.g. "white_check_mark"), if set.
    require_reaction: str | None = None
    # Only threads with a reply from one of these users, if any are given.
    experts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ThreadText:
    title: str
    text: str
    latest: str  # the last kept message's ts
    replies: int
    authors: tuple[str, ...]


def is_human(message: Mapping[str, Any], *, bot_user: str | None) -> bool:
    """Written by a person: not a bot (so not this bot's answers), not a join or a tombstone."""
    if message.get("bot_id") or message.get("bot_profile"):
        return False
    if bot_user is not None and message.get("user") == bot_user:
        return False
    return message.get("subtype") in _HUMAN_SUBTYPES and bool(message.get("user"))


def qualifies(
    messages: Sequence[Mapping[str, Any]], rules: ThreadRules, *, bot_user: str | None
) -> bool:
    """A person's question with enough replies from people (and the ✅ or expert, if asked)."""
    if not messages or not is_human(messages[0], bot_user=bot_user):
        return False
    replies = [m for m in messages[1:] if is_human(m, bot_user=bot_user)]
    if len(replies) < rules.min_replies:
        return False
    if rules.require_reaction and not any(
        r.get("name") == rules.require_reaction for m in messages for r in m.get("reactions", [])
    ):
        return False
    return not rules.experts or any(r.get("user") in rules.experts for r in replies)


def mentioned_users(messages: Sequence[Mapping[str, Any]], *, bot_user: str | None) -> set[str]:
    """Every user id the thread's text shows a name for: its people and their `<@U…>`s."""
    kept = [m for m in messages if is_human(m, bot_user=bot_user)]
    found = {str(m["user"]) for m in kept}
    for message in kept:
        for markup in _MARKUP.findall(str(message.get("text") or "")):
            if markup.startswith("@"):
                found.add(markup[1:].split("|", 1)[0])
    return found


def thread_text(
    messages: Sequence[Mapping[str, Any]],
    *,
    names: Mapping[str, str],
    bot_user: str | None,
) -> ThreadText:
    """The question, then each person's reply in order, each under who wrote it."""
    kept = [m for m in messages if is_human(m, bot_user=bot_user)]
    blocks = []
    for index, message in enumerate(kept):
        who = names.get(str(message["user"]), str(message["user"]))
        verb = "asked" if index == 0 else "replied"
        body = decode(str(message.get("text") or ""), names=names.get)
        blocks.append(f"{who} {verb}:\n\n{body}")
    question = decode(str(kept[0].get("text") or ""), names=names.get) if kept else ""
    return ThreadText(
        title=_title(question),
        text=tidy_text("\n\n".join(blocks)),
        latest=str(kept[-1]["ts"]) if kept else "",
        replies=max(0, len(kept) - 1),
        authors=tuple(dict.fromkeys(names.get(str(m["user"]), str(m["user"])) for m in kept)),
    )


def decode(text: str, *, names: Callable[[str], str | None]) -> str:
    """Slack's markup and its three escapes → plain text with Markdown links."""

    def markup(match: re.Match[str]) -> str:
        inner = match[1]
        target, _, label = inner.partition("|")
        if target.startswith("@"):
            return "@" + (label or names(target[1:]) or target[1:])
        if target.startswith("#"):
            return "#" + (label or target[1:])
        if target.startswith("!"):
            special = target[1:].split("^", 1)[0]
            return label or ("@" + special if special in ("here", "channel", "everyone") else "")
        if label:
            return f"[{_unescape(label)}]({_unescape(target)})"
        return _unescape(target.removeprefix("mailto:"))

    return _unescape(_MARKUP.sub(markup, text))


def ts_time(ts: str) -> datetime:
    return datetime.fromtimestamp(float(ts), tz=UTC)


def _unescape(text: str) -> str:
    # `&amp;` last, so `&amp;lt;` stays the literal `&lt;` someone typed.
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _title(question: str) -> str:
    first = next((line.strip() for line in question.splitlines() if line.strip()), "")
    return first if len(first) <= 90 else first[:87].rstrip() + "…"
