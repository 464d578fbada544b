"""`app_home_opened`: publish the App Home tab."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from bot.slack.surfaces.services import SlackServices


def register(app: AsyncApp, services: SlackServices) -> None:
    @app.event("app_home_opened")
    async def on_home(ack: AsyncAck, event: dict[str, Any], context: AsyncBoltContext) -> None:
        await ack()
        if event.get("tab", "home") == "home":
            services.hand_off(context, services.home.publish(user_id=event["user"]), name="home")
