"""`app_mention`: answer in the thread of the mention."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from bot.slack.surfaces.services import SlackServices


def register(app: AsyncApp, services: SlackServices) -> None:
    @app.event("app_mention")
    async def on_mention(ack: AsyncAck, event: dict[str, Any], context: AsyncBoltContext) -> None:
        await ack()
        work = services.messages.handle(
            event, team_id=context.team_id or "", bot_user_id=context.bot_user_id or ""
        )
        services.hand_off(context, work, name="app_mention")
