"""chat.postMessage at most once per message, though Slack may fail after posting it.

A 5xx or a dropped connection on chat.postMessage does not say whether Slack posted the
message, and Slack takes no idempotency key: a blind retry (slack_sdk's handlers) can
post it twice. So every message the bot posts for a question carries a post key in its
metadata (`event_payload.post`), chat.postMessage is sent without the blind retries,
and before each retry the thread (`conversations.replies`) or, for a top-level post,
the channel (`conversations.history`) is read with `include_all_metadata`: a bot message
with that key *is* the post, and its ts is used. A post to a user id lands in the app's
DM with them, which conversations.* only know by its D… id (`conversations.open`). A
429 still waits out Retry-After (Slack posted nothing), and every other call keeps the
client's retries.

When that read fails too, the post is retried: a duplicate is better than a lost answer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

log = logging.getLogger(__name__)

# The metadata of a bot message that has none of its own (a placeholder, a failure line,
# the rest of a long answer): only the post key.
POST_EVENT = "kb_post"
POST_KEY = "post"

_LOOKUP_PAGES = 5  # conversations.replies pages of 200 read before giving up
# A channel given as a user id (U…, or W… on Enterprise Grid): a post to their DM.
_USER_ID_PREFIXES = ("U", "W")


def with_post_key(metadata: Mapping[str, Any] | None, key: str) -> dict[str, Any]:
    """`metadata` with the post key added to its payload (or only the key)."""
    if not metadata:
        return {"event_type": POST_EVENT, "event_payload": {POST_KEY: key}}
    payload = dict(metadata.get("event_payload") or {})
    return {**metadata, "event_payload": {**payload, POST_KEY: key}}


def post_key_of(message: Mapping[str, Any]) -> str | None:
    payload = (message.get("metadata") or {}).get("event_payload") or {}
    key = payload.get(POST_KEY)
    return str(key) if key is not None else None


class Poster:
    """Posts messages with post keys; finds a post by its key."""

    def __init__(self, client: AsyncWebClient, *, attempts: int = 4, backoff: float = 0.5):
        self._client = client
        self._once = without_blind_retries(client)
        self._attempts = attempts
        self._backoff = backoff

    async def post(
        self,
        *,
        key: str,
        channel: str,
        thread_ts: str | None,
        metadata: Mapping[str, Any] | None = None,
        **message: Any,
    ) -> str:
        """Post once under `key`; return the message's ts (an earlier attempt's, if found)."""
        _, ts = await self.post_where(
            key=key, channel=channel, thread_ts=thread_ts, metadata=metadata, **message
        )
        return ts

    async def post_where(
        self,
        *,
        key: str,
        channel: str,
        thread_ts: str | None,
        metadata: Mapping[str, Any] | None = None,
        **message: Any,
    ) -> tuple[str, str]:
        """As `post`, returning the channel Slack posted in with the ts (a DM posted to a
        user id is in the D… channel Slack opened for it)."""
        marked = with_post_key(metadata, key)
        for attempt in range(1, self._attempts + 1):
            try:
                response = await self._once.chat_postMessage(
                    channel=channel, thread_ts=thread_ts, metadata=marked, **message
                )
                return str(response["channel"]), str(response["ts"])
            except SlackApiError as exc:
                if exc.response.status_code < 500:
                    raise  # Slack said no (or rate limits outlasted the retries): not posted
                failure: Exception = exc
            except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                failure = exc
            log.warning("chat.postMessage failed (%s), attempt %d", type(failure).__name__, attempt)
            await asyncio.sleep(self._backoff * 2 ** (attempt - 1))
            conversation = await self._conversation_quietly(channel)
            found = await self._find_quietly(key=key, channel=conversation, thread_ts=thread_ts)
            if found is not None:
                log.info("the failed chat.postMessage had posted; its message is kept")
                return conversation, found
            if attempt == self._attempts:
                raise failure
        raise AssertionError("unreachable")

    async def find(
        self, *, key: str, channel: str, thread_ts: str | None, event_type: str | None = None
    ) -> str | None:
        """The ts of the bot message posted under `key` in the thread (or channel), if any;
        with `event_type`, only while its metadata is still of that type."""
        for message in await self._messages(channel, thread_ts):
            if post_key_of(message) != key:
                continue
            if (
                event_type is None
                or (message.get("metadata") or {}).get("event_type") == event_type
            ):
                return str(message["ts"])
        return None

    async def _conversation_quietly(self, channel: str) -> str:
        """The conversation a post to `channel` lands in. chat.postMessage takes a user id
        (it posts in the app's DM with them) but conversations.history does not, so the
        DM is opened for its D… id; if that fails, the user id (the look-up fails, and
        the post is retried)."""
        if not channel.startswith(_USER_ID_PREFIXES):
            return channel
        try:
            response = await self._client.conversations_open(users=channel)
        except (SlackApiError, aiohttp.ClientError, OSError, TimeoutError):
            log.warning("could not open the DM to look for an earlier post", exc_info=True)
            return channel
        return str(response["channel"]["id"])

    async def _find_quietly(self, *, key: str, channel: str, thread_ts: str | None) -> str | None:
        try:
            return await self.find(key=key, channel=channel, thread_ts=thread_ts)
        except (SlackApiError, aiohttp.ClientError, OSError, TimeoutError):
            log.warning("could not look for an earlier post; posting again", exc_info=True)
            return None

    async def _messages(self, channel: str, thread_ts: str | None) -> list[dict[str, Any]]:
        if thread_ts is None:
            # The newest top-level messages: a post that failed a moment ago is among them.
            response = await self._client.conversations_history(
                channel=channel, include_all_metadata=True, limit=50
            )
            return list(response.get("messages") or [])
        messages: list[dict[str, Any]] = []
        cursor = None
        for _ in range(_LOOKUP_PAGES):
            response = await self._client.conversations_replies(
                channel=channel, ts=thread_ts, include_all_metadata=True, limit=200, cursor=cursor
            )
            messages.extend(response.get("messages") or [])
            cursor = (response.get("response_metadata") or {}).get("next_cursor")
            if not response.get("has_more") or not cursor:
                break
        return messages


def without_blind_retries(client: AsyncWebClient, *, nor_429s: bool = False) -> AsyncWebClient:
    """The same client (token, URL, session, observers, 429 handling), minus the handlers
    that would resend a request Slack may already have carried out; with `nor_429s`, minus
    the wait on a 429 too (for a call better given up than delayed)."""
    dropped: tuple[type, ...] = (AsyncServerErrorRetryHandler, AsyncConnectionErrorRetryHandler)
    if nor_429s:
        dropped += (AsyncRateLimitErrorRetryHandler,)
    handlers = [handler for handler in client.retry_handlers if not isinstance(handler, dropped)]
    return AsyncWebClient(
        token=client.token,
        base_url=client.base_url,
        session=client.session,
        timeout=client.timeout,
        retry_handlers=handlers,
    )
