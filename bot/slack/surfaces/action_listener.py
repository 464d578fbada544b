"""Buttons: 👍 / 👎, "Why this answer?", "Escalate to a human", and the escalation's two."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from bot.slack.render import action_ids as ids
from bot.slack.surfaces.clicks import click_of
from bot.slack.surfaces.services import SlackServices


def register(app: AsyncApp, services: SlackServices) -> None:
    @app.action(ids.FEEDBACK_UP)
    async def on_vote_up(ack: AsyncAck, body: dict[str, Any], context: AsyncBoltContext) -> None:
        await ack()
        services.hand_off(context, services.feedback.vote(click_of(body), vote=1), name="vote")

    @app.action(ids.FEEDBACK_DOWN)
    async def on_vote_down(ack: AsyncAck, body: dict[str, Any], context: AsyncBoltContext) -> None:
        await ack()
        services.hand_off(context, services.feedback.vote(click_of(body), vote=-1), name="vote")

    @app.action(ids.WHY)
    async def on_why(ack: AsyncAck, body: dict[str, Any], context: AsyncBoltContext) -> None:
        await ack()
        services.hand_off(context, services.traces.show(click_of(body)), name="why")

    @app.action(ids.ESCALATE)
    async def on_escalate(ack: AsyncAck, body: dict[str, Any], context: AsyncBoltContext) -> None:
        await ack()
        services.hand_off(context, services.escalations.escalate(click_of(body)), name="escalate")

    @app.action(ids.ESCALATION_RESOLVE)
    async def on_resolve(ack: AsyncAck, body: dict[str, Any], context: AsyncBoltContext) -> None:
        await ack()
        services.hand_off(context, services.escalations.resolve(click_of(body)), name="resolve")

    @app.action(ids.ESCALATION_ANSWER)
    async def on_expert_answer(
        ack: AsyncAck, body: dict[str, Any], context: AsyncBoltContext
    ) -> None:
        await ack()
        work = services.escalations.open_answer_form(click_of(body))
        services.hand_off(context, work, name="expert_form")
