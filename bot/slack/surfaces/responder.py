"""Telling one person something only they should see: the person who clicked a button,
or the asker of a `/kb` question a dead process left unanswered (delivery/recovery.py).

`chat.postEphemeral` fails where the bot is not a member: a DM between two people, a
private channel the bot was never added to (where `/kb private` still works). The click
would then show nothing and look broken. So every private reply goes down a chain until
one reaches the person:

1. `chat.postEphemeral` in the conversation, under the clicked message's thread
   (the usual case for a click: it names the user and threads the note where the
   button was);
2. the `response_url`, which Slack honours for 30 minutes wherever the click or command
   happened, member or not;
3. a message in the app's DM with the person.

A `/kb` question's recovery takes the response_url first (`Recipient.response_url_first`):
it is the only way to replace a private placeholder, and there is no thread to go in.

Each refusal is logged with Slack's error code; if all three fail, one warning line says
the person could not be told (there is nowhere left to say it).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.slack.delivery.posting import Poster
from bot.slack.surfaces.clicks import Click
from bot.slack.transport.web import retry_handlers

log = logging.getLogger(__name__)

_TRANSPORT = (aiohttp.ClientError, OSError, TimeoutError)


@dataclass(frozen=True, slots=True)
class Recipient:
    """One person to tell privately, and every way there is to reach them."""

    user_id: str
    channel_id: str | None
    # For the logs: what the reply is ("a click reply (action kb_why)").
    about: str
    thread_ts: str | None = None
    response_url: str | None = None
    response_url_first: bool = False
    # The response_url's message (a private placeholder) is replaced, not added to.
    replace_original: bool = False
    # The DM is posted at most once under this key (a retried recovery posts no second).
    dm_post_key: str | None = None


def recipient_of(click: Click) -> Recipient:
    return Recipient(
        user_id=click.user_id,
        channel_id=click.channel_id,
        about=f"a click reply (action {click.action_id})",
        thread_ts=click.thread_ts,
        response_url=click.response_url,
    )


class _Refused(Exception):
    """A response_url answered with an HTTP error."""


class Responder:
    def __init__(self, client: AsyncWebClient) -> None:
        self._client = client

    async def tell(
        self, click: Click, text: str, blocks: Sequence[Mapping[str, Any]] | None = None
    ) -> bool:
        """Show `text` (and `blocks`) to the person who clicked; False if nothing reached them."""
        return await self.tell_privately(recipient_of(click), text, blocks)

    async def tell_privately(
        self, person: Recipient, text: str, blocks: Sequence[Mapping[str, Any]] | None = None
    ) -> bool:
        """Show `text` (and `blocks`) to `person` alone; False if nothing reached them."""
        shown = {"text": text, **({"blocks": list(blocks)} if blocks else {})}
        ways = [self._ephemeral, self._respond]
        if person.response_url_first:
            ways.reverse()
        for way in [*ways, self._direct]:
            if await way(person, shown):
                return True
        log.warning("could not tell %s to the person it was for", person.about)
        return False

    async def _ephemeral(self, person: Recipient, shown: dict[str, Any]) -> bool:
        if not person.channel_id:
            return False
        call = self._client.chat_postEphemeral(
            channel=person.channel_id, user=person.user_id, thread_ts=person.thread_ts, **shown
        )
        return await _reached("chat.postEphemeral", person, call)

    async def _respond(self, person: Recipient, shown: dict[str, Any]) -> bool:
        if not person.response_url:
            return False
        hook = AsyncWebhookClient(person.response_url, retry_handlers=retry_handlers())
        return await _reached("the response_url", person, _sent(hook, person, shown))

    async def _direct(self, person: Recipient, shown: dict[str, Any]) -> bool:
        if not person.user_id:
            return False
        call: Awaitable[object]
        if person.dm_post_key is None:
            call = self._client.chat_postMessage(channel=person.user_id, **shown)
        else:
            call = Poster(self._client).post(
                key=person.dm_post_key, channel=person.user_id, thread_ts=None, **shown
            )
        return await _reached("the app's DM", person, call)


async def _sent(hook: AsyncWebhookClient, person: Recipient, shown: dict[str, Any]) -> None:
    response = await hook.send(
        response_type="ephemeral", replace_original=person.replace_original, **shown
    )
    if response.status_code >= 400:
        raise _Refused(f"HTTP {response.status_code}")


async def _reached(way: str, person: Recipient, call: Awaitable[Any]) -> bool:
    """Await one way of telling `person`; log why it did not reach them."""
    try:
        await call
        return True
    except SlackApiError as exc:
        log.info("%s refused %s: %s", way, person.about, exc.response.get("error"))
    except _Refused as exc:
        log.info("%s refused %s: %s", way, person.about, exc)
    except _TRANSPORT as exc:
        log.info("%s failed for %s: %s", way, person.about, type(exc).__name__)
    return False
