"""👍 / 👎 on an answer: one vote per run and user (a second click changes it), and on 👎 a
modal for an optional comment."""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.metrics import Metrics
from bot.slack.render.notices import FEEDBACK_THANKS, NOT_THIS_MESSAGE
from bot.slack.render.views import FeedbackCommentForm, feedback_comment_modal
from bot.slack.surfaces.click_checks import run_belongs_to_click
from bot.slack.surfaces.clicks import Click
from bot.slack.surfaces.responder import Responder
from store.feedback import FeedbackRepository
from store.runs import RunRepository

log = logging.getLogger(__name__)


class FeedbackDesk:
    def __init__(
        self,
        *,
        client: AsyncWebClient,
        feedback: FeedbackRepository,
        runs: RunRepository,
        metrics: Metrics | None = None,
    ) -> None:
        self._client = client
        self._feedback = feedback
        self._runs = runs
        self._metrics = metrics

    async def vote(self, click: Click, *, vote: int) -> None:
        if click.run_id is None:
            return
        run = await self._runs.get(click.run_id)
        if run is None or not run_belongs_to_click(run.origin, click):
            await Responder(self._client).tell(click, NOT_THIS_MESSAGE)
            return
        # The modal first: its trigger_id expires 3 s after the click, the vote can wait.
        opened = vote < 0 and bool(click.trigger_id)
        if opened:
            try:
                await self._client.views_open(
                    trigger_id=click.trigger_id,
                    view=feedback_comment_modal(FeedbackCommentForm(run_id=click.run_id)),
                )
            except SlackApiError as exc:  # e.g. expired_trigger_id: the vote still counts
                log.warning("comment modal not opened: %s", exc.response.get("error"))
                opened = False
        await self._feedback.vote(run_id=click.run_id, user_id=click.user_id, vote=vote)
        if self._metrics is not None:
            self._metrics.voted(vote)
        if not opened:  # a click that shows nothing looks broken
            await Responder(self._client).tell(click, FEEDBACK_THANKS)

    async def comment(self, *, run_id: int, user_id: str, text: str) -> None:
        if text:
            await self._feedback.comment(run_id=run_id, user_id=user_id, comment=text)
