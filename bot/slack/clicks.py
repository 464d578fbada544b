"""Button clicks and modal submissions, read from their payloads into typed values."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.slack.interim_render import button_value


@dataclass(frozen=True, slots=True)
class Click:
    """A button pressed on one of the bot's messages."""

    action_id: str
    user_id: str
    team_id: str
    channel_id: str | None
    message_ts: str | None
    thread_ts: str | None
    is_ephemeral: bool
    response_url: str | None
    trigger_id: str | None
    value: Mapping[str, Any]
    message_blocks: tuple[Mapping[str, Any], ...] = ()
    message_text: str = ""

    @property
    def run_id(self) -> int | None:
        return _int(self.value.get("run"))

    @property
    def escalation_id(self) -> int | None:
        return _int(self.value.get("escalation"))


def click_of(body: Mapping[str, Any]) -> Click:
    action = (body.get("actions") or [{}])[0]
    container = body.get("container") or {}
    message = body.get("message") or {}
    channel = body.get("channel") or {}
    return Click(
        action_id=str(action.get("action_id", "")),
        user_id=str((body.get("user") or {}).get("id", "")),
        team_id=str((body.get("team") or {}).get("id", "") or ""),
        channel_id=container.get("channel_id") or channel.get("id"),
        message_ts=container.get("message_ts") or message.get("ts"),
        thread_ts=message.get("thread_ts") or container.get("thread_ts"),
        is_ephemeral=bool(container.get("is_ephemeral")),
        response_url=body.get("response_url"),
        trigger_id=body.get("trigger_id"),
        value=button_value(action.get("value")),
        message_blocks=tuple(message.get("blocks") or ()),
        message_text=str(message.get("text", "")),
    )


@dataclass(frozen=True, slots=True)
class Submission:
    """A modal submitted: who, the modal's private metadata, and its input values."""

    callback_id: str
    user_id: str
    metadata: Mapping[str, Any]
    values: Mapping[str, str]

    def value(self, block_id: str) -> str:
        return self.values.get(block_id, "").strip()


def submission_of(body: Mapping[str, Any]) -> Submission:
    view = body.get("view") or {}
    try:
        metadata = json.loads(view.get("private_metadata") or "{}")
    except json.JSONDecodeError:
        metadata = {}
    values: dict[str, str] = {}
    for block_id, inputs in ((view.get("state") or {}).get("values") or {}).items():
        for element in inputs.values():
            values[block_id] = str(element.get("value") or "")
    return Submission(
        callback_id=str(view.get("callback_id", "")),
        user_id=str((body.get("user") or {}).get("id", "")),
        metadata=metadata if isinstance(metadata, dict) else {},
        values=values,
    )


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
