"""Slack's assistant panel (bolt's AsyncAssistant): thread started, and user messages.

Only threads opened by `assistant_thread_started` are the panel's; other DM threads
fall through to the `message` listener.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.listener_matcher.async_listener_matcher import AsyncCustomListenerMatcher
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant

from bot.slack.services import SlackServices


def register(app: AsyncApp, services: SlackServices) -> None:
    assistant = AsyncAssistant(thread_context_store=services.thread_context)

    async def in_panel_thread(event: dict[str, Any]) -> bool:
        return await services.assistant.is_assistant_thread(event)

    # bolt runs a plain function matcher synchronously: an async one needs its matcher class.
    panel_thread = AsyncCustomListenerMatcher(app_name="kb", func=in_panel_thread)

    @assistant.thread_started
    async def on_started(ack: AsyncAck, event: dict[str, Any], context: AsyncBoltContext) -> None:
        await ack()
        services.hand_off(context, services.assistant.started(event), name="assistant_started")

    # bolt annotates `matchers` as one matcher, but takes (and its own code passes) a list.
    @assistant.user_message(matchers=[panel_thread])  # type: ignore[arg-type]
    async def on_user_message(
        ack: AsyncAck, event: dict[str, Any], context: AsyncBoltContext
    ) -> None:
        await ack()
        work = services.assistant.user_message(
            event, team_id=context.team_id or "", bot_user_id=context.bot_user_id or ""
        )
        services.hand_off(context, work, name="assistant_message")

    app.assistant(assistant)
