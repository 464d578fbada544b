"""Button clicks and modal submissions, read from their payloads into typed values."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.slack.render.action_ids import ActionValue, ActionValueError, parse_action_value
from bot.slack.render.views import submitted_text, view_value


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
    # What the button names; None when its value is not one this bot wrote.
    value: ActionValue | None
    message_blocks: tuple[Mapping[str, Any], ...] = ()
    message_text: str = ""
    # The workspace of the person who clicked (another one in a Slack Connect channel).
    user_team: str | None = None

    @property
    def run_id(self) -> int | None:
        return self.value.run if self.value else None

    @property
    def escalation_id(self) -> int | None:
        return self.value.escalation if self.value else None


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
        value=_value(action.get("value")),
        message_blocks=tuple(message.get("blocks") or ()),
        message_text=str(message.get("text", "")),
        user_team=(body.get("user") or {}).get("team_id"),
    )


@dataclass(frozen=True, slots=True)
class Submission:
    """A modal submitted: who, the run (and escalation) it is about, and the view."""

    user_id: str
    value: ActionValue | None
    view: Mapping[str, Any]

    def text(self, *, block_id: str, action_id: str) -> str:
        return submitted_text(self.view, block_id=block_id, action_id=action_id)


def submission_of(body: Mapping[str, Any]) -> Submission:
    view = body.get("view") or {}
    try:
        value: ActionValue | None = view_value(view)
    except ActionValueError:
        value = None
    return Submission(user_id=str((body.get("user") or {}).get("id", "")), value=value, view=view)


def _value(raw: Any) -> ActionValue | None:
    try:
        return parse_action_value(raw)
    except ActionValueError:
        return None
