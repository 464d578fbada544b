"""One module per entry point; each listener acks, hands the work to a task, and returns."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.slack.listeners import (
    actions,
    assistant,
    command,
    feedback,
    home,
    mention,
    message,
    views,
)
from bot.slack.services import SlackServices


def register_all(app: AsyncApp, services: SlackServices) -> None:
    # The assistant middleware must see assistant-thread messages before `message` does.
    assistant.register(app, services)
    mention.register(app, services)
    message.register(app, services)
    command.register(app, services)
    actions.register(app, services)
    feedback.register(app, services)
    views.register(app, services)
    home.register(app, services)
