"""`/kb`: post the question visibly and answer in its thread, or answer privately.

The visible question is posted as the bot ("<@user> asked: …", escaped so it can ping
no one) and carries `kb_question` metadata, so a follow-up in that thread counts it as
the asker's turn. A private answer goes through the command's `response_url`: only the
asker sees it, and nothing of it is re-posted anywhere public.

Each question is claimed with the channel, the asker and the response_url, then its
row follows the answer (the question's thread once posted, the placeholder), so a
restart after a crash can tell the asker to ask again: in the thread, or privately.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.slack.access.gate import AccessGate
from bot.slack.delivery.conversation import Asked, Conversation
from bot.slack.delivery.delivery_trail import DeliveryTrail
from bot.slack.delivery.posting import Poster
from bot.slack.delivery.replies import EphemeralReply, Reply, ThreadReply
from bot.slack.delivery.streaming import Streams
from bot.slack.delivery.threads import question_metadata
from bot.slack.render.blocks import failure_message
from bot.slack.render.notices import NOT_IN_CHANNEL, asked_on_behalf
from bot.slack.transport.predicates import command_question_key
from store.deliveries import DeliveryLog, Question

log = logging.getLogger(__name__)

_CANNOT_POST = {"not_in_channel", "channel_not_found", "is_archived", "restricted_action"}


class CommandDesk:
    def __init__(
        self,
        *,
        client: AsyncWebClient,
        conversation: Conversation,
        gate: AccessGate,
        deliveries: DeliveryLog,
        streams: Streams | None = None,
    ) -> None:
        self._client = client
        self._streams = streams
        self._poster = Poster(client)
        self._conversation = conversation
        self._gate = gate
        self._deliveries = deliveries

    async def ask(
        self, command: Mapping[str, Any], *, question: str, private: bool, bot_user_id: str
    ) -> None:
        channel = str(command.get("channel_id", ""))
        user = str(command.get("user_id", ""))
        response_url = str(command["response_url"])
        key = command_question_key(command)
        claimed = await self._deliveries.claim(
            key,
            kind="command",
            reply_channel=channel,
            asker_user_id=user,
            response_url=response_url,
            question=Question(
                team_id=str(command.get("team_id", "")),
                user_id=user,
                text=question,
                surface="private" if private else "command",
            ),
        )
        if not claimed:
            return
        trail = DeliveryTrail(self._deliveries, key)
        asked = Asked(
            team_id=str(command.get("team_id", "")),
            channel_id=channel,
            user_id=user,
            question=question,
            surface="private" if private else "command",
            # A private answer is read by the asker alone; a posted one by the whole channel.
            access=await (self._gate.in_thread_of if private else self._gate.in_channel)(
                channel_id=channel, user_id=user, user_team=None
            ),
            bot_user_id=bot_user_id,
            delivery=key,
        )
        if private or asked.access.shows_nothing:
            # Someone who may see nothing here gets the refusal privately, and their
            # question is not posted for them.
            private_reply = EphemeralReply(
                response_url, on_placeholder=trail.placeholder_shown_ephemerally
            )
            await self._conversation.run(asked, private_reply)
            return
        try:
            thread_ts = await self._post_question(key, channel, user, question, response_url)
        except Exception:
            log.exception("could not post the /kb question")
            await EphemeralReply(response_url).failed(failure_message(run_id=None))
            await trail.finish("failed")
            return
        if thread_ts is None:
            await trail.finish("failed")
            return
        await trail.replying_in(thread_ts)
        placeholder = ThreadReply(
            self._client,
            channel_id=channel,
            thread_ts=thread_ts,
            on_placeholder=trail.placeholder_posted,
            post_key=key,
        )
        reply: Reply = placeholder
        if self._streams is not None:  # the answer streams into the question's thread
            reply = self._streams.reply(
                placeholder,
                channel_id=channel,
                thread_ts=thread_ts,
                team_id=asked.team_id,
                user_id=user,
                on_placeholder=trail.placeholder_posted,
            )
        await self._conversation.run(_in_thread(asked, thread_ts), reply)

    async def _post_question(
        self, key: str, channel: str, user: str, question: str, response_url: str
    ) -> str | None:
        try:
            return await self._poster.post(
                key=f"{key}/question",
                channel=channel,
                thread_ts=None,
                text=asked_on_behalf(user_id=user, question=question),
                metadata=question_metadata(user_id=user, question=question),
                unfurl_links=False,
                unfurl_media=False,
            )
        except SlackApiError as exc:
            if exc.response.get("error") not in _CANNOT_POST:
                raise
            await AsyncWebhookClient(response_url).send(
                text=NOT_IN_CHANNEL, response_type="ephemeral"
            )
            return None


def _in_thread(asked: Asked, thread_ts: str) -> Asked:
    return replace(asked, thread_ts=thread_ts)
