"""Slack's assistant panel (bolt's AsyncAssistant): thread started, and user messages.

Only threads opened by `assistant_thread_started` are the panel's; other DM threads
are ordinary DMs. Telling them apart is a query, so it is made after the ack
(`SlackServices.dm_thread_message`), and the thread context a channel switch brings is
saved after the ack too: nothing here waits on Postgres before Slack has its 200.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant

from bot.slack.surfaces.services import SlackServices


def register(app: AsyncApp, services: SlackServices) -> None:
    assistant = AsyncAssistant(thread_context_store=services.thread_context)

    @assistant.thread_started
    async def on_started(ack: AsyncAck, event: dict[str, Any], context: AsyncBoltContext) -> None:
        await ack()
        services.hand_off(context, services.assistant.started(event), name="assistant_started")

    # bolt's default saves the context before its ack returns (process_before_response).
    @assistant.thread_context_changed
    async def on_context_changed(
        ack: AsyncAck, event: dict[str, Any], context: AsyncBoltContext
    ) -> None:
        await ack()
        work = services.assistant.context_changed(event)
        services.hand_off(context, work, name="assistant_context_changed")

    @assistant.user_message
    async def on_user_message(
        ack: AsyncAck, event: dict[str, Any], context: AsyncBoltContext
    ) -> None:
        await ack()
        work = services.dm_thread_message(
            event, team_id=context.team_id or "", bot_user_id=context.bot_user_id or ""
        )
        services.hand_off(context, work, name="dm_thread_message")

    app.assistant(assistant)
