"""Modal submissions: the expert's answer, and the comment on a 👎."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from bot.slack import interim_render as ids
from bot.slack.clicks import submission_of
from bot.slack.notices import EMPTY_EXPERT_ANSWER
from bot.slack.services import SlackServices


def register(app: AsyncApp, services: SlackServices) -> None:
    @app.view(ids.EXPERT_ANSWER_VIEW)
    async def on_expert_answer(
        ack: AsyncAck, body: dict[str, Any], context: AsyncBoltContext
    ) -> None:
        submitted = submission_of(body)
        answer = submitted.value(ids.EXPERT_ANSWER_BLOCK)
        escalation_id = submitted.metadata.get("escalation")
        if not answer or not isinstance(escalation_id, int):
            errors = {ids.EXPERT_ANSWER_BLOCK: EMPTY_EXPERT_ANSWER}
            await ack(response_action="errors", errors=errors)
            return
        await ack()
        work = services.escalations.expert_answer(
            escalation_id=escalation_id, expert_id=submitted.user_id, text=answer
        )
        services.hand_off(context, work, name="expert_answer")

    @app.view(ids.COMMENT_VIEW)
    async def on_comment(ack: AsyncAck, body: dict[str, Any], context: AsyncBoltContext) -> None:
        await ack()
        submitted = submission_of(body)
        run_id = submitted.metadata.get("run")
        if isinstance(run_id, int):
            work = services.feedback.comment(
                run_id=run_id, user_id=submitted.user_id, text=submitted.value(ids.COMMENT_BLOCK)
            )
            services.hand_off(context, work, name="comment")
