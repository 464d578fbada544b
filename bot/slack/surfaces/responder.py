"""Telling the person who clicked a button something only they should see.

`chat.postEphemeral` fails where the bot is not a member: a DM between two people, a
private channel the bot was never added to (where `/kb private` still works). The click
would then show nothing and look broken. So every click reply goes down a chain until
one reaches the person:

1. `chat.postEphemeral` in the clicked conversation, under the clicked message's thread
   (the usual case: it names the user and threads the note where the button was);
2. the click's `response_url`, which Slack honours for 30 minutes wherever the click
   happened, member or not;
3. a message in the app's DM with the person.

Each refusal is logged with Slack's error code; if all three fail, one warning line says
the person could not be told (there is nowhere left to say it).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.slack.surfaces.clicks import Click
from bot.slack.transport.web import retry_handlers

log = logging.getLogger(__name__)

_TRANSPORT = (aiohttp.ClientError, OSError, TimeoutError)


class Responder:
    def __init__(self, client: AsyncWebClient) -> None:
        self._client = client

    async def tell(
        self, click: Click, text: str, blocks: Sequence[Mapping[str, Any]] | None = None
    ) -> bool:
        """Show `text` (and `blocks`) to the person who clicked; False if nothing reached them."""
        shown = {"text": text, **({"blocks": list(blocks)} if blocks else {})}
        if click.channel_id and await self._ephemeral(click, shown):
            return True
        if click.response_url and await self._respond(click.response_url, shown):
            return True
        if click.user_id and await self._direct(click.user_id, shown):
            return True
        log.warning("could not tell the person who clicked a button (action %s)", click.action_id)
        return False

    async def _ephemeral(self, click: Click, shown: dict[str, Any]) -> bool:
        try:
            await self._client.chat_postEphemeral(
                channel=click.channel_id or "",
                user=click.user_id,
                thread_ts=click.thread_ts,
                **shown,
            )
            return True
        except SlackApiError as exc:
            log.info("chat.postEphemeral refused a click reply: %s", exc.response.get("error"))
        except _TRANSPORT as exc:
            log.info("chat.postEphemeral failed for a click reply: %s", type(exc).__name__)
        return False

    async def _respond(self, response_url: str, shown: dict[str, Any]) -> bool:
        hook = AsyncWebhookClient(response_url, retry_handlers=retry_handlers())
        try:
            response = await hook.send(response_type="ephemeral", replace_original=False, **shown)
        except _TRANSPORT as exc:
            log.info("the click's response_url could not be reached: %s", type(exc).__name__)
            return False
        if response.status_code < 400:
            return True
        log.info("the click's response_url refused (HTTP %d)", response.status_code)
        return False

    async def _direct(self, user_id: str, shown: dict[str, Any]) -> bool:
        try:
            await self._client.chat_postMessage(channel=user_id, **shown)
            return True
        except SlackApiError as exc:
            log.info("no DM for a click reply: %s", exc.response.get("error"))
        except _TRANSPORT as exc:
            log.info("no DM for a click reply: %s", type(exc).__name__)
        return False
