"""One module per entry point; each listener acks, hands the work to a task, and returns."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.slack.surfaces import (
    action_listener as actions,
)
from bot.slack.surfaces import (
    assistant_listener as assistant,
)
from bot.slack.surfaces import (
    command_listener as command,
)
from bot.slack.surfaces import (
    feedback_listener as feedback,
)
from bot.slack.surfaces import (
    home_listener as home,
)
from bot.slack.surfaces import (
    mention_listener as mention,
)
from bot.slack.surfaces import (
    message_listener as message,
)
from bot.slack.surfaces import (
    view_listener as views,
)
from bot.slack.surfaces.services import SlackServices


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
