"""Telling the asker of a question a dead process left unanswered to ask again.

A question's delivery row is claimed at the ack and finished when its answer (or its
failure line) is shown; a row whose lease ran out belongs to a process that was killed
mid-answer (SIGKILL, OOM, a lost machine). The sweep (sweep.py) re-runs such a question
once (rerun.py); when it cannot, or the re-run died too, it calls `tell_to_ask_again`:
the question's placeholder is replaced with "please ask again" (found by its post key
when the process died before recording its ts), or, when the process died before the
placeholder was up, the line is posted in the question's thread. A `/kb` question with
no thread (a private answer, or killed before the bot posted the question) is told
privately by the Responder (bot/slack/surfaces/responder.py): through the command's
response_url while Slack honours it (30 minutes), else with chat.postEphemeral, else in
the asker's DM with the app. When none reaches them the next sweep tries again: the
question is never silently dropped.
"""

from __future__ import annotations

from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.delivery.posting import POST_EVENT, Poster
from bot.slack.delivery.replies import placeholder_post_key
from bot.slack.delivery.updating import update_message
from bot.slack.render.blocks import interrupted_message
from bot.slack.surfaces.responder import Recipient, Responder
from store.deliveries import Unfinished


async def tell_to_ask_again(client: AsyncWebClient, question: Unfinished) -> bool:
    """Tell the asker of a question its process left unanswered to ask again; False
    when a private notice reached nobody (the next sweep tries again)."""
    poster = Poster(client)
    placeholder = question.placeholder_ts
    if placeholder is None and question.thread_ts is not None:
        # Posted, but killed before its ts was recorded: the post key finds it.
        placeholder = await _unanswered_placeholder(poster, question)
    message = interrupted_message()
    if placeholder is not None:
        await update_message(  # the dead run's placeholder may be its open stream
            client,
            channel=question.channel_id,
            ts=placeholder,
            text=message.text,
            blocks=message.blocks,
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
        return await _tell_privately(client, question, question.asker_user_id)
    return True


async def _unanswered_placeholder(poster: Poster, question: Unfinished) -> str | None:
    """The placeholder, while it still is one: an answer shown over it (kb_answer
    metadata) or an assistant panel's first answer is never replaced."""
    return await poster.find(
        key=placeholder_post_key(question.key),
        channel=question.channel_id,
        thread_ts=question.thread_ts,
        event_type=POST_EVENT,
    )


async def _tell_privately(client: AsyncWebClient, question: Unfinished, user: str) -> bool:
    """Through the response_url while Slack honours it (replacing the private
    placeholder), else as an ephemeral message, else in the asker's DM with the bot."""
    message = interrupted_message(command=True)
    asker = Recipient(
        user_id=user,
        channel_id=question.channel_id,
        about="a /kb question's recovery",
        response_url=question.response_url,
        response_url_first=True,
        replace_original=question.placeholder_ephemeral,
        dm_post_key=f"{question.key}/recovered",
    )
    return await Responder(client).tell_privately(asker, message.text, message.blocks)
