"""What the renderers return (`SlackMessage`), the Block Kit blocks they build, and packing.

Every mrkdwn text object is `verbatim`: Slack then links no bare URL or channel name and
parses no mention in it; only the control sequences `bot.slack.render.mrkdwn` builds remain.
Callers must not pass `link_names` or `parse="full"` when posting.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.slack.render.limits import MESSAGE_BLOCKS, MESSAGE_TEXT_BUDGET, block_text_size
from bot.slack.render.mrkdwn import escape, plain, shorten

Block = dict[str, Any]
# Fallback text is shortened before escaping; five bytes an entity keeps it under 4,000.
FALLBACK_CHARS = 600


@dataclass(frozen=True, slots=True)
class SlackMessage:
    """One message: `text` is the plain fallback for notifications, `blocks` what is shown."""

    text: str
    blocks: list[Block] = field(default_factory=list)
    unfurl_links: bool = False
    unfurl_media: bool = False

    def post_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for `chat.postMessage` (add channel and thread_ts)."""
        return {
            "text": self.text,
            "blocks": self.blocks,
            "unfurl_links": self.unfurl_links,
            "unfurl_media": self.unfurl_media,
        }

    def update_kwargs(self) -> dict[str, Any]:
        """For `chat.update`, `chat.postEphemeral` and `respond`, which take no unfurl flags."""
        return {"text": self.text, "blocks": self.blocks}


def fallback(text: str) -> str:
    """A notification line from untrusted text: short, plain, escaped."""
    return escape(shorten(plain(text), FALLBACK_CHARS)) or "slack-kb"


def section(text: str) -> Block:
    """A section of mrkdwn that the caller has escaped (see bot.slack.render.mrkdwn)."""
    return {"type": "section", "text": {"type": "mrkdwn", "text": text, "verbatim": True}}


def context(*texts: str) -> Block:
    return {
        "type": "context",
        "elements": [{"type": "mrkdwn", "text": t, "verbatim": True} for t in texts],
    }


def header(text: str) -> Block:
    """A header; `text` is plain (never parsed), cut to Block Kit's 150 characters."""
    return {"type": "header", "text": {"type": "plain_text", "text": shorten(text, 150)}}


def divider() -> Block:
    return {"type": "divider"}


def button(
    label: str,
    *,
    action_id: str,
    value: str,
    style: str | None = None,
    accessibility_label: str | None = None,
) -> Block:
    element: Block = {
        "type": "button",
        "text": {"type": "plain_text", "text": label, "emoji": True},
        "action_id": action_id,
        "value": value,
    }
    if style:
        element["style"] = style
    if accessibility_label:
        element["accessibility_label"] = accessibility_label
    return element


def actions(buttons: Iterable[Block]) -> Block:
    return {"type": "actions", "elements": list(buttons)}


def pack(
    units: Iterable[Sequence[Block]],
    *,
    max_blocks: int = MESSAGE_BLOCKS,
    max_text: int = MESSAGE_TEXT_BUDGET,
) -> list[list[Block]]:
    """Lay units (blocks that belong together) into as few messages as the limits allow.

    A unit goes whole into the current message if it fits, else whole into a new one. A
    unit too big for any message (one enormous claim) gets messages of its own, cut
    between its blocks, and the next unit starts afresh: a unit shares a message with
    others only when it is whole in it.
    """
    messages: list[list[Block]] = [[]]
    used = [0]  # block text in each message, kept rather than recounted

    def fits(blocks: int, text: int) -> bool:
        return len(messages[-1]) + blocks <= max_blocks and used[-1] + text <= max_text

    def add(blocks: Sequence[Block], text: int) -> None:
        messages[-1].extend(blocks)
        used[-1] += text

    def start() -> None:
        messages.append([])
        used.append(0)

    for unit in units:
        size = block_text_size(unit)
        if not fits(len(unit), size):
            if messages[-1]:
                start()
            if not fits(len(unit), size):
                for block in unit:
                    block_size = block_text_size([block])
                    if messages[-1] and not fits(1, block_size):
                        start()
                    add([block], block_size)
                start()
                continue
        add(unit, size)
    return [message for message in messages if message]
