"""👍 / 👎 through Slack's feedback_buttons: the same vote and 👎 comment modal as before.

The old kb_feedback_up / kb_feedback_down buttons stay handled (action_listener.py):
answers posted before the change still carry them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from bot.slack.render.feedback_buttons import FEEDBACK, vote_of
from bot.slack.surfaces.clicks import click_of
from bot.slack.surfaces.services import SlackServices


def register(app: AsyncApp, services: SlackServices) -> None:
    @app.action(FEEDBACK)
    async def on_feedback(ack: AsyncAck, body: dict[str, Any], context: AsyncBoltContext) -> None:
        await ack()
        chosen = vote_of((body.get("actions") or [{}])[0])
        if chosen is None:
            return  # a value this bot did not write: nothing to store
        click = dataclasses.replace(click_of(body), value=chosen.value)
        work = services.feedback.vote(click, vote=chosen.vote)
        services.hand_off(context, work, name="vote")
