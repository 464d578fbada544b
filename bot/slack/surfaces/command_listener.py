"""`/kb <question>`, `/kb private <question>`, and `/kb` / `/kb help` for usage."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from bot.slack.render.blocks import help_message
from bot.slack.surfaces.services import SlackServices
from bot.slack.transport.predicates import CommandKind, parse_kb_command

COMMAND = "/kb"


def register(app: AsyncApp, services: SlackServices) -> None:
    @app.command(COMMAND)
    async def on_kb(ack: AsyncAck, command: dict[str, Any], context: AsyncBoltContext) -> None:
        kind, question, private = parse_kb_command(
            command.get("text", ""), private_by_default=services.options.private_by_default
        )
        if kind is CommandKind.HELP:
            usage = help_message(command=COMMAND)
            await ack(text=usage.text, blocks=usage.blocks, response_type="ephemeral")
            return
        await ack()
        work = services.commands.ask(
            command, question=question, private=private, bot_user_id=context.bot_user_id or ""
        )
        services.hand_off(context, work, name="command")
