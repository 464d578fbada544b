"""A question whose process died mid-answer, asked again on this replica (once).

The sweep (sweep.py) takes the question's delivery row (a fresh lease, its second run)
and hands it here: the question is rebuilt from what the row kept (store/deliveries.py
`Question`) and answered through the same surface, over what the first run left: its
placeholder in the thread (the recorded ts, else found by its post key) is replaced by
the answer, a private `/kb` answer goes through the response_url, the assistant panel's
answer is posted in its thread. A public `/kb` question whose process died before its
thread was recorded is posted in the channel first, under the first run's post key, so
a question the first run did post (its ts never recorded) is found, not posted twice.
A question with no way back to its asker (a private one whose response_url expired, a
row kept no question) is not re-run: the sweep tells its asker instead.
"""

from __future__ import annotations

import logging
from dataclasses import replace

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.access.gate import AccessGate
from bot.slack.delivery.conversation import Asked, Conversation
from bot.slack.delivery.delivery_trail import DeliveryTrail
from bot.slack.delivery.posting import POST_EVENT, Poster
from bot.slack.delivery.replies import (
    AssistantReply,
    EphemeralReply,
    Reply,
    ThreadReply,
    placeholder_post_key,
)
from bot.slack.delivery.threads import question_metadata
from bot.slack.render.notices import asked_on_behalf
from store.deliveries import DeliveryLog, Question, Unfinished

log = logging.getLogger(__name__)


def can_rerun(unfinished: Unfinished) -> bool:
    """Whether the row kept enough to answer the question again where it was asked."""
    question = unfinished.question
    if question is None:
        return False
    if question.surface == "private":
        return unfinished.response_url is not None
    return True


class Rerun:
    def __init__(
        self,
        *,
        client: AsyncWebClient,
        conversation: Conversation,
        gate: AccessGate,
        deliveries: DeliveryLog,
        bot_user_id: str,
    ) -> None:
        self._client = client
        self._conversation = conversation
        self._gate = gate
        self._deliveries = deliveries
        self._bot_user_id = bot_user_id

    async def __call__(self, unfinished: Unfinished) -> None:
        """Answer the question again; a failure shows the failure line, like any run."""
        assert unfinished.question is not None  # can_rerun said so
        question = unfinished.question
        asked = await self._asked(unfinished, question)
        log.info("re-running a question its process left unanswered")
        if question.surface == "command" and unfinished.thread_ts is None:
            if asked.access.shows_nothing and unfinished.response_url is not None:
                # As the first run does: told privately, the question not posted for them.
                shown = unfinished.placeholder_ephemeral
                private = EphemeralReply(unfinished.response_url, shown=shown)
                await self._conversation.run(asked, private)
                return
            thread_ts = await self._post_question(unfinished)
            unfinished = replace(unfinished, thread_ts=thread_ts)
            asked = replace(asked, thread_ts=thread_ts)
        await self._conversation.run(asked, await self._reply(unfinished, question))

    async def _asked(self, unfinished: Unfinished, question: Question) -> Asked:
        # What the asker may see, decided again as when they asked: a guest, an outsider
        # or a private channel's threads are narrowed here too (bot/slack/access/gate.py).
        channel = unfinished.channel_id
        if question.surface == "assistant":
            access = await self._gate.in_assistant(channel_id=channel, user_id=question.user_id)
        else:
            access = await self._gate.in_channel(
                channel_id=channel, user_id=question.user_id, channel_type=question.channel_type
            )
        return Asked(
            team_id=question.team_id,
            channel_id=channel,
            user_id=question.user_id,
            question=question.text,
            surface=question.surface,
            access=access,
            bot_user_id=self._bot_user_id,
            thread_ts=None if question.surface == "private" else unfinished.thread_ts,
            message_ts=question.message_ts,
            with_history=question.with_history,
            delivery=unfinished.key,
        )

    async def _reply(self, unfinished: Unfinished, question: Question) -> Reply:
        # The re-run's own posts get their own keys: the first run's may be in the thread.
        post_key = f"{unfinished.key}/again"
        if question.surface == "private":
            assert unfinished.response_url is not None
            return EphemeralReply(unfinished.response_url, shown=unfinished.placeholder_ephemeral)
        if question.surface == "assistant":
            assert unfinished.thread_ts is not None
            return AssistantReply(
                self._client,
                channel_id=unfinished.channel_id,
                thread_ts=unfinished.thread_ts,
                post_key=post_key,
            )
        trail = DeliveryTrail(self._deliveries, unfinished.key)
        placeholder = unfinished.placeholder_ts or await self._find_placeholder(unfinished)
        if placeholder is not None:
            await trail.placeholder_posted(placeholder)
        return ThreadReply(
            self._client,
            channel_id=unfinished.channel_id,
            thread_ts=unfinished.thread_ts,
            on_placeholder=trail.placeholder_posted,
            post_key=post_key,
            placeholder_ts=placeholder,
        )

    async def _post_question(self, unfinished: Unfinished) -> str:
        """The `/kb` question in its channel, as the first run posts it (slash.py), under
        the same post key: found if the first run posted it, else posted now."""
        assert unfinished.question is not None
        user, text = unfinished.question.user_id, unfinished.question.text
        key, channel = f"{unfinished.key}/question", unfinished.channel_id
        poster = Poster(self._client)
        try:
            found = await poster.find(key=key, channel=channel, thread_ts=None)
        except (SlackApiError, aiohttp.ClientError, OSError, TimeoutError):
            found = None  # a duplicate question is better than none
        thread_ts = found or await poster.post(
            key=key,
            channel=channel,
            thread_ts=None,
            text=asked_on_behalf(user_id=user, question=text),
            metadata=question_metadata(user_id=user, question=text),
            unfurl_links=False,
            unfurl_media=False,
        )
        await DeliveryTrail(self._deliveries, unfinished.key).replying_in(thread_ts)
        return thread_ts

    async def _find_placeholder(self, unfinished: Unfinished) -> str | None:
        """The first run's placeholder, posted but its ts never recorded (None if not found)."""
        if unfinished.thread_ts is None:
            return None
        try:
            return await Poster(self._client).find(
                key=placeholder_post_key(unfinished.key),
                channel=unfinished.channel_id,
                thread_ts=unfinished.thread_ts,
                event_type=POST_EVENT,
            )
        except (SlackApiError, aiohttp.ClientError, OSError, TimeoutError):
            log.info("could not look for the first run's placeholder; posting a new one")
            return None
