"""Start-up recovery: questions acked by a process that died before answering them.

A question's delivery row is claimed at the ack and finished when its answer (or its
failure line) is shown. A row still unfinished `older_than` after its claim belongs to a
process that was killed mid-answer (SIGKILL, OOM, a lost machine). `kb serve` calls
`recover_unanswered` once at start-up, one replica at a time (an advisory lock): each
such question's placeholder is replaced with "please ask again", or, when the process
died before the placeholder was up, the line is posted in the question's thread. The
question is never silently dropped; it is not re-run, since the asker may have asked
again already and the event payload is not kept.
"""

from __future__ import annotations

import logging
from datetime import timedelta

import aiohttp
import asyncpg
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.blocks import interrupted_message
from store.deliveries import DeliveryLog, Unfinished
from store.locks import RECOVERY_LOCK_KEY, try_advisory_lock

log = logging.getLogger(__name__)


async def recover_unanswered(
    *,
    pool: asyncpg.Pool,
    client: AsyncWebClient,
    deliveries: DeliveryLog,
    older_than: timedelta,
) -> int:
    """Tell the askers of questions left unanswered; return how many were told."""
    async with try_advisory_lock(pool, RECOVERY_LOCK_KEY) as acquired:
        if not acquired:
            log.info("another replica is recovering unanswered questions")
            return 0
        told = 0
        for question in await deliveries.unfinished(older_than=older_than):
            if not await deliveries.abandon(question.key):
                continue  # answered meanwhile by the process that took it
            try:
                await _tell(client, question)
            except (SlackApiError, aiohttp.ClientError, OSError, TimeoutError):
                log.warning("could not tell an asker to ask again; next start-up retries")
                await deliveries.reopen(question.key)
                continue
            told += 1
        if told:
            log.warning("%d question(s) were left unanswered by a stopped process", told)
        return told


async def _tell(client: AsyncWebClient, question: Unfinished) -> None:
    message = interrupted_message()
    if question.placeholder_ts is not None:
        await client.chat_update(
            channel=question.channel_id,
            ts=question.placeholder_ts,
            text=message.text,
            blocks=message.blocks,
        )
        return
    await client.chat_postMessage(
        channel=question.channel_id,
        thread_ts=question.thread_ts,
        text=message.text,
        blocks=message.blocks,
    )
