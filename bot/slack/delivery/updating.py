"""chat.update on a message that may still be an open stream.

Slack refuses to edit a message that is still streaming (`streaming_state_conflict`)
until the stream is stopped: by chat.stopStream, or by Slack itself after a while
(undocumented; reported as about 30 s idle or 5 minutes in all). A process killed
mid-answer leaves its stream open, and the sweep re-runs the question, or tells its
asker to ask again, well before that (a lease is 90 s by default), replacing that
very message. So an update refused for this reason stops the stream and is sent once
more; every other update costs no extra call.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

log = logging.getLogger(__name__)

STILL_STREAMING = "streaming_state_conflict"


async def update_message(
    client: AsyncWebClient,
    *,
    channel: str,
    ts: str,
    text: str,
    blocks: Sequence[Mapping[str, Any]] | None,
    metadata: Mapping[str, Any] | None = None,
) -> None:
    """Replace message `ts` with `text` and `blocks`, closing the stream it still is."""
    arguments: dict[str, Any] = {
        "channel": channel,
        "ts": ts,
        "text": text,
        "blocks": blocks,
        "metadata": dict(metadata) if metadata else None,
    }
    try:
        await client.chat_update(**arguments)
    except SlackApiError as error:
        if error.response.get("error") != STILL_STREAMING:
            raise
        log.info("message %s in %s is an open stream: stopping it before the update", ts, channel)
        try:
            await client.chat_stopStream(channel=channel, ts=ts)
        except SlackApiError as stop_error:  # stopped meanwhile (by Slack): fine
            log.info("stopping stream %s: %s", ts, stop_error.response.get("error"))
        await client.chat_update(**arguments)
