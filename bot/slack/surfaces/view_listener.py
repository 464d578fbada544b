"""Modal submissions: the expert's answer, and the comment on a 👎."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from bot.slack.render import action_ids as ids
from bot.slack.render.notices import EMPTY_EXPERT_ANSWER
from bot.slack.surfaces.clicks import submission_of
from bot.slack.surfaces.services import SlackServices


def register(app: AsyncApp, services: SlackServices) -> None:
    @app.view(ids.EXPERT_ANSWER_MODAL)
    async def on_expert_answer(
        ack: AsyncAck, body: dict[str, Any], context: AsyncBoltContext
    ) -> None:
        submitted = submission_of(body)
        text = submitted.text(block_id=ids.EXPERT_ANSWER_BLOCK, action_id=ids.EXPERT_ANSWER_INPUT)
        escalation_id = submitted.value.escalation if submitted.value else None
        if not text or escalation_id is None:
            errors = {ids.EXPERT_ANSWER_BLOCK: EMPTY_EXPERT_ANSWER}
            await ack(response_action="errors", errors=errors)
            return
        await ack()
        work = services.escalations.expert_answer(
            escalation_id=escalation_id, expert_id=submitted.user_id, text=text
        )
        services.hand_off(context, work, name="expert_answer")

    @app.view(ids.FEEDBACK_COMMENT_MODAL)
    async def on_comment(ack: AsyncAck, body: dict[str, Any], context: AsyncBoltContext) -> None:
        await ack()
        submitted = submission_of(body)
        if submitted.value is not None:
            text = submitted.text(
                block_id=ids.FEEDBACK_COMMENT_BLOCK, action_id=ids.FEEDBACK_COMMENT_INPUT
            )
            work = services.feedback.comment(
                run_id=submitted.value.run, user_id=submitted.user_id, text=text
            )
            services.hand_off(context, work, name="comment")
