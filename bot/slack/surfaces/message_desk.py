"""Messages and mentions: which ones the bot answers, where, with what history and access.

`app_mention` and `message` events both end here. The route is a pure decision
(predicates.route); the answer is claimed once per message, so a message that arrives
both as a mention and as a message event is answered once, whichever comes first.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.access.config import BotOptions
from bot.slack.access.gate import AccessGate
from bot.slack.delivery.conversation import Asked, Conversation
from bot.slack.delivery.delivery_trail import DeliveryTrail
from bot.slack.delivery.replies import Reply, ThreadReply
from bot.slack.delivery.streaming import Streams
from bot.slack.render.blocks import help_message
from bot.slack.transport.predicates import (
    Route,
    is_dm,
    is_thread_reply,
    mentions,
    message_key,
    question_text,
    route,
    thread_of,
)
from store.conversations import ConversationLog
from store.deliveries import DeliveryLog, Question

log = logging.getLogger(__name__)
# Slack's emoji name for 🙂: "you're welcome", distinct from the 👍 of feedback.
THANKS_REACTION = "slightly_smiling_face"


class MessageDesk:
    def __init__(
        self,
        *,
        client: AsyncWebClient,
        conversation: Conversation,
        conversations: ConversationLog,
        deliveries: DeliveryLog,
        gate: AccessGate,
        options: BotOptions,
        streams: Streams | None = None,
    ) -> None:
        self._client = client
        self._streams = streams
        self._conversation = conversation
        self._conversations = conversations
        self._deliveries = deliveries
        self._gate = gate
        self._options = options

    async def handle(self, event: Mapping[str, Any], *, team_id: str, bot_user_id: str) -> None:
        decision = await self._route(event, bot_user_id)
        if decision is Route.IGNORE:
            return
        if decision is Route.REACT:
            await self._react(event)
            return
        question = question_text(event.get("text", ""), bot_user_id=bot_user_id)
        if not question and not mentions(event.get("text", ""), bot_user_id):
            return  # nothing asked and nobody called: a file share, an empty edit
        key, channel = message_key(event), str(event["channel"])
        # In a DM the answer goes in the message's thread when it has one, else below it.
        thread_ts = event.get("thread_ts") if is_dm(event) else thread_of(event)
        # Followed to the end (and recovered after a crash) unless a help channel's
        # silence is the right outcome anyway, or nothing was asked.
        followed = decision is Route.ANSWER and bool(question)
        claimed = await self._deliveries.claim(
            key,
            kind="message",
            reply_channel=channel if followed else None,
            reply_thread_ts=thread_ts if followed else None,
            question=_kept(event, decision, team_id=team_id, text=question) if followed else None,
        )
        if not claimed:
            return
        if not question:
            # Just "@kb": say how to ask, once, in the thread.
            reply = ThreadReply(self._client, channel_id=channel, thread_ts=thread_ts)
            await reply.failed(help_message())
            return
        user = str(event.get("user", ""))
        access = await self._gate.in_channel(
            channel_id=channel,
            user_id=user,
            user_team=event.get("user_team"),
            channel_type=event.get("channel_type"),
        )
        asked = Asked(
            team_id=team_id,
            channel_id=channel,
            user_id=user,
            question=question,
            surface=_surface(event, decision),
            access=access,
            bot_user_id=bot_user_id,
            thread_ts=thread_ts,
            message_ts=str(event.get("ts")),
            with_history=is_thread_reply(event),
            grounded_only=decision is Route.ANSWER_IF_GROUNDED,
            delivery=key if followed else None,
        )
        await self._conversation.run(asked, self._reply(asked, decision, key))

    def _reply(self, asked: Asked, decision: Route, key: str) -> Reply:
        """The answer's placeholder, replaced by chat.update; streamed where it can be (a
        help channel's answer is never streamed: it may end up not posted at all)."""
        placeholder = DeliveryTrail(self._deliveries, key).placeholder_posted
        reply = ThreadReply(
            self._client,
            channel_id=asked.channel_id,
            thread_ts=asked.thread_ts,
            show_progress=decision is Route.ANSWER,
            on_placeholder=placeholder,
            post_key=key,
        )
        if self._streams is None or decision is not Route.ANSWER:
            return reply
        return self._streams.reply(
            reply,
            channel_id=asked.channel_id,
            thread_ts=asked.thread_ts,
            team_id=asked.team_id,
            user_id=asked.user_id,
            on_placeholder=placeholder,
        )

    async def _route(self, event: Mapping[str, Any], bot_user_id: str) -> Route:
        askers: frozenset[str] = frozenset()
        if is_thread_reply(event) and not is_dm(event):
            askers = await self._conversations.thread_askers(
                channel_id=str(event.get("channel")), thread_ts=str(event.get("thread_ts"))
            )
        return route(
            event,
            bot_user_id=bot_user_id,
            help_channels=self._options.help_channels,
            thread_answered=bool(askers),
            thread_needs_mention=self._options.thread_needs_mention,
            thread_askers=askers,
        )

    async def _react(self, event: Mapping[str, Any]) -> None:
        """A thank-you: one reaction on it (claimed like an answer, so once per message)."""
        key = message_key(event)
        if not await self._deliveries.claim(key, kind="message"):
            return
        try:
            await self._client.reactions_add(
                channel=str(event["channel"]), timestamp=str(event["ts"]), name=THANKS_REACTION
            )
        except SlackApiError as exc:
            # Already reacted (a redelivery), or no reactions:write scope: a reaction is a
            # courtesy, never worth an error message in the thread.
            log.info("no reaction on a thank-you: %s", exc.response.get("error"))


def _kept(event: Mapping[str, Any], decision: Route, *, team_id: str, text: str) -> Question:
    """What a re-run of this message's question needs (delivery/recovery.py)."""
    return Question(
        team_id=team_id,
        user_id=str(event.get("user", "")),
        text=text,
        surface=_surface(event, decision),
        channel_type=event.get("channel_type"),
        message_ts=str(event.get("ts")),
        with_history=is_thread_reply(event),
    )


def _surface(event: Mapping[str, Any], decision: Route) -> str:
    if decision is Route.ANSWER_IF_GROUNDED:
        return "help"
    if is_dm(event):
        return "dm"
    if is_thread_reply(event):
        return "thread"
    return "mention"
