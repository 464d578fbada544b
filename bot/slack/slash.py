"""`/kb`: post the question visibly and answer in its thread, or answer privately.

The visible question is posted as the bot ("<@user> asked: …", escaped so it can ping
no one) and carries `kb_question` metadata, so a follow-up in that thread counts it as
the asker's turn. A private answer goes through the command's `response_url`: only the
asker sees it, and nothing of it is re-posted anywhere public.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.slack.blocks import failure_message
from bot.slack.config import AccessPolicy
from bot.slack.conversation import Asked, Conversation
from bot.slack.notices import NOT_IN_CHANNEL, asked_on_behalf
from bot.slack.replies import EphemeralReply, ThreadReply
from bot.slack.threads import question_metadata

log = logging.getLogger(__name__)

_CANNOT_POST = {"not_in_channel", "channel_not_found", "is_archived", "restricted_action"}


class CommandDesk:
    def __init__(
        self, *, client: AsyncWebClient, conversation: Conversation, access: AccessPolicy
    ) -> None:
        self._client = client
        self._conversation = conversation
        self._access = access

    async def ask(
        self, command: Mapping[str, Any], *, question: str, private: bool, bot_user_id: str
    ) -> None:
        channel = str(command.get("channel_id", ""))
        user = str(command.get("user_id", ""))
        asked = Asked(
            team_id=str(command.get("team_id", "")),
            channel_id=channel,
            user_id=user,
            question=question,
            surface="private" if private else "command",
            access=self._access.for_channel(channel),
            bot_user_id=bot_user_id,
        )
        if private:
            await self._conversation.run(asked, EphemeralReply(str(command["response_url"])))
            return
        try:
            thread_ts = await self._post_question(channel, user, question, command)
        except Exception:
            log.exception("could not post the /kb question")
            await EphemeralReply(str(command["response_url"])).failed(failure_message(run_id=None))
            return
        if thread_ts is None:
            return
        reply = ThreadReply(self._client, channel_id=channel, thread_ts=thread_ts)
        await self._conversation.run(_in_thread(asked, thread_ts), reply)

    async def _post_question(
        self, channel: str, user: str, question: str, command: Mapping[str, Any]
    ) -> str | None:
        try:
            response = await self._client.chat_postMessage(
                channel=channel,
                text=asked_on_behalf(user_id=user, question=question),
                metadata=question_metadata(user_id=user, question=question),
                unfurl_links=False,
                unfurl_media=False,
            )
        except SlackApiError as exc:
            if exc.response.get("error") not in _CANNOT_POST:
                raise
            await AsyncWebhookClient(str(command["response_url"])).send(
                text=NOT_IN_CHANNEL, response_type="ephemeral"
            )
            return None
        return str(response["ts"])


def _in_thread(asked: Asked, thread_ts: str) -> Asked:
    return replace(asked, thread_ts=thread_ts)
