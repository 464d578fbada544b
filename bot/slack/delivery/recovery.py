"""Telling the asker of a question a dead process left unanswered to ask again.

A question's delivery row is claimed at the ack and finished when its answer (or its
failure line) is shown; a row whose lease ran out belongs to a process that was killed
mid-answer (SIGKILL, OOM, a lost machine). The sweep (sweep.py) re-runs such a question
once (rerun.py); when it cannot, or the re-run died too, it calls `tell_to_ask_again`:
the question's placeholder is replaced with "please ask again" (found by its post key
when the process died before recording its ts), or, when the process died before the
placeholder was up, the line is posted in the question's thread. A `/kb` question with
no thread (a private answer, or killed before the bot posted the question) is told
privately: through the command's response_url while Slack honours it (30 minutes),
else with chat.postEphemeral, else in the asker's DM with the app. The question is
never silently dropped.
"""

from __future__ import annotations

import logging

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.slack.delivery.posting import POST_EVENT, Poster
from bot.slack.delivery.replies import placeholder_post_key
from bot.slack.render.blocks import interrupted_message
from bot.slack.transport.web import retry_handlers
from store.deliveries import Unfinished

log = logging.getLogger(__name__)

# chat.postEphemeral errors that mean the asker cannot be reached in that channel.
_NOT_THERE = {"not_in_channel", "channel_not_found", "is_archived", "user_not_in_channel"}


async def tell_to_ask_again(client: AsyncWebClient, question: Unfinished) -> None:
    """Tell the asker of a question its process left unanswered to ask again."""
    poster = Poster(client)
    placeholder = question.placeholder_ts
    if placeholder is None and question.thread_ts is not None:
        # Posted, but killed before its ts was recorded: the post key finds it.
        placeholder = await _unanswered_placeholder(poster, question)
    message = interrupted_message()
    if placeholder is not None:
        await client.chat_update(
            channel=question.channel_id, ts=placeholder, text=message.text, blocks=message.blocks
        )
    elif question.thread_ts is not None or question.asker_user_id is None:
        await poster.post(
            key=f"{question.key}/recovered",
            channel=question.channel_id,
            thread_ts=question.thread_ts,
            text=message.text,
            blocks=message.blocks,
        )
    else:
        # A /kb question with no message to reply to: its answer was private, or the
        # process died before posting the question.
        await _tell_privately(client, question, question.asker_user_id)


async def _unanswered_placeholder(poster: Poster, question: Unfinished) -> str | None:
    """The placeholder, while it still is one: an answer shown over it (kb_answer
    metadata) or an assistant panel's first answer is never replaced."""
    return await poster.find(
        key=placeholder_post_key(question.key),
        channel=question.channel_id,
        thread_ts=question.thread_ts,
        event_type=POST_EVENT,
    )


async def _tell_privately(client: AsyncWebClient, question: Unfinished, user: str) -> None:
    """Through the response_url while Slack honours it (replacing the private
    placeholder), else as an ephemeral message, else in the asker's DM with the bot."""
    message = interrupted_message(command=True)
    if question.response_url is not None:
        hook = AsyncWebhookClient(question.response_url, retry_handlers=retry_handlers())
        try:
            response = await hook.send(
                response_type="ephemeral",
                replace_original=question.placeholder_ephemeral,
                text=message.text,
                blocks=message.blocks,
            )
            if response.status_code < 400:
                return
            log.info("the response_url refused (HTTP %d)", response.status_code)
        except (aiohttp.ClientError, OSError, TimeoutError):
            log.info("the response_url could not be reached", exc_info=True)
    try:
        await client.chat_postEphemeral(
            channel=question.channel_id, user=user, text=message.text, blocks=message.blocks
        )
    except SlackApiError as exc:
        if exc.response.get("error") not in _NOT_THERE:
            raise
        # Not in that channel (or it is gone): the app's DM with the asker reaches them.
        await Poster(client).post(
            key=f"{question.key}/recovered",
            channel=user,
            thread_ts=None,
            text=message.text,
            blocks=message.blocks,
        )
