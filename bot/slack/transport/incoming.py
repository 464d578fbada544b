"""Slack-escaped text as it arrives → the plain text a person typed, decoded exactly once.

Slack sends message and `/kb` text with `&`, `<` and `>` as `&amp;`, `&lt;` and `&gt;`,
and wraps references in angle brackets: `<@U…|name>`, `<#C…|name>`, `<!subteam^S…|@team>`,
`<!here>`, `<!date^…|fallback>`, `<https://…|label>`
(https://docs.slack.dev/messaging/formatting-message-text). The agent searches the words a
person sees, so `decode` turns each reference into what Slack shows for it (`@name`,
`#name`, `label (https://…)`) and each entity into its character, in one pass: `&amp;lt;`
is the text `&lt;`, never `<`. The way out is `bot.slack.render.mrkdwn.escape`, applied once where
the text enters a message, so `decode` then `escape` gives back what Slack sent for
plain text (the round trip the property tests check).
"""

from __future__ import annotations

import re

_ENTITIES = {"&amp;": "&", "&lt;": "<", "&gt;": ">"}
# One pass over both kinds of token, so nothing a decode produces is decoded again.
_TOKEN = re.compile(r"&(?:amp|lt|gt);|<([^<>\n]*)>")
_SPECIAL = {"here", "channel", "everyone"}


def decode(text: str) -> str:
    """Slack's escaped `text` as plain text: entities as characters, references readable."""
    return _TOKEN.sub(_plain, text or "")


def _entities(text: str) -> str:
    return re.sub(r"&(?:amp|lt|gt);", lambda m: _ENTITIES[m[0]], text)


def _plain(match: re.Match[str]) -> str:
    token = match[0]
    if token in _ENTITIES:
        return _ENTITIES[token]
    inner = match[1] or ""
    target, _, label = inner.partition("|")
    label = _entities(label).strip()
    if target.startswith("@"):
        return f"@{label.removeprefix('@') or target[1:]}"
    if target.startswith("#"):
        return f"#{label.removeprefix('#') or target[1:]}"
    if target.startswith("!"):
        return _special(target[1:], label)
    return _link(_entities(target), label)


def _special(command: str, label: str) -> str:
    """`<!here>`, `<!subteam^S…|@team>`, `<!date^…|fallback>`: what Slack shows for them."""
    name, _, argument = command.partition("^")
    if name in _SPECIAL:
        return f"@{name}"
    if name == "subteam":
        group = argument.partition("^")[0]
        return f"@{label.removeprefix('@') or group}"
    return label or name  # a date shows its fallback text


def _link(url: str, label: str) -> str:
    """A link as a reader sees it: the label, and the target too when the label hides it."""
    if not label:
        return url.removeprefix("mailto:")
    if _bare(label) == _bare(url):
        return label
    return f"{label} ({url})"


def _bare(place: str) -> str:
    lowered = place.lower().strip()
    for prefix in ("mailto:", "https://", "http://", "www."):
        lowered = lowered.removeprefix(prefix)
    return lowered.rstrip("/")
