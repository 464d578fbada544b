"""Whether a click may act on what its button names: button values can be forged.

A button's value is whatever the client sends, so a crafted click could name another
person's run (their DM question and its evidence) or another escalation. Each action
therefore checks the record against the message it was clicked on before showing or
doing anything: the run was asked in the channel the click comes from, and a private
answer (`/kb private`, a DM, the assistant panel) was asked by the person clicking.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.slack.surfaces.clicks import Click

# Surfaces whose answer only the asker sees: nobody else may press their buttons.
PRIVATE_SURFACES = frozenset({"private", "dm", "assistant"})


def run_belongs_to_click(origin: Mapping[str, str], click: Click) -> bool:
    """The run was asked where the button was clicked (and by the clicker, if private)."""
    channel = origin.get("channel")
    if not channel or channel != click.channel_id:
        return False
    if origin.get("surface") in PRIVATE_SURFACES or click.is_ephemeral:
        return bool(click.user_id) and origin.get("user") == click.user_id
    return True


def escalation_post_clicked(
    *, post_channel_id: str | None, post_ts: str | None, click: Click
) -> bool:
    """The click is on the escalation's own post in the escalation channel."""
    if not post_channel_id or post_channel_id != click.channel_id:
        return False
    return post_ts is None or click.message_ts is None or post_ts == click.message_ts
