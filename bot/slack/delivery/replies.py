"""Where an answer goes, and how "working on it" is shown there.

- `ThreadReply`: a placeholder message in the thread, updated with the queue position
  or the step, then replaced by the answer with `chat.update` (further messages of a
  long answer are posted below it); a failure replaces it with one plain line.
- `EphemeralReply`: the same through a slash command's `response_url` (only the asker
  sees it; `replace_original` swaps the placeholder).
- `AssistantReply`: Slack's assistant panel, where progress is the thread status
  (`assistant.threads.setStatus`) and the answer is posted in the thread.

Each reply serialises its updates and ignores progress that arrives after the answer,
so a late step can never overwrite the answer. Messages are posted through `Poster`
(posting.py) under `<post_key>/<n>`, the n-th post of the reply, so a retried
chat.postMessage never posts one twice; the first post of a `ThreadReply` (its
placeholder) is `<post_key>/0`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from agent.answer import Citation, Claim
from bot.slack.delivery.posting import Poster
from bot.slack.delivery.updating import update_message
from bot.slack.render.blocks import SlackMessage, placeholder_message
from bot.slack.render.loading import loading_messages
from bot.slack.transport.web import retry_handlers

Metadata = Mapping[str, Any]


class Reply(Protocol):
    async def working(self, *, step: str | None = None, queue_position: int | None = None) -> None:
        """Show that the question is queued or being worked on."""
        ...

    async def answered(self, messages: Sequence[SlackMessage], *, metadata: Metadata) -> str | None:
        """Show the answer; return the ts of the message carrying its buttons, if any."""
        ...

    async def failed(self, message: SlackMessage) -> None:
        """Replace whatever was shown with `message`."""
        ...


@runtime_checkable
class ClaimSink(Protocol):
    """A reply that shows each verified claim as the agent hands it over (a stream)."""

    async def claimed(self, claim: Claim, citation: Citation) -> None: ...


class _InThread:
    """What a reply posted in a Slack thread keeps: the client, the thread, the post keys
    of its messages, and the message it replaces next (its placeholder, or a stopped
    stream it adopted)."""

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        channel_id: str,
        thread_ts: str | None,
        post_key: str | None,
        placeholder_ts: str | None = None,
    ) -> None:
        self._client = client
        self._posts = _PostKeys(post_key)
        self._poster = Poster(client)
        self._channel = channel_id
        self._thread_ts = thread_ts
        self._ts: str | None = placeholder_ts
        self._done = False
        self._lock = asyncio.Lock()

    async def failed(self, message: SlackMessage) -> None:
        async with self._lock:
            self._done = True
            await self._show(message)

    def adopt(self, ts: str) -> None:
        """Take the message `ts` (a stopped stream, bot/slack/delivery/streaming.py) as the
        message the answer replaces, under its key `<post_key>/0`; later posts keep theirs."""
        if self._ts is None:
            self._ts = ts
            self._posts.next()

    async def _show(self, message: SlackMessage, *, metadata: Metadata | None = None) -> str:
        raise NotImplementedError

    async def _update(self, ts: str, message: SlackMessage, metadata: Metadata | None) -> None:
        # A placeholder taken over from a dead run may be its still open stream.
        await update_message(
            self._client,
            channel=self._channel,
            ts=ts,
            text=message.text,
            blocks=message.blocks,
            metadata=metadata,
        )

    async def _post(self, message: SlackMessage, *, metadata: Metadata | None = None) -> str:
        return await _post_keyed(
            self._poster, self._posts, self._channel, self._thread_ts, message, metadata
        )


class ThreadReply(_InThread):
    def __init__(
        self,
        client: AsyncWebClient,
        *,
        channel_id: str,
        thread_ts: str | None,
        show_progress: bool = True,
        on_placeholder: Callable[[str], Awaitable[None]] | None = None,
        post_key: str | None = None,
        placeholder_ts: str | None = None,
    ) -> None:
        # A re-run (recovery) takes over the placeholder its first run left up.
        super().__init__(
            client,
            channel_id=channel_id,
            thread_ts=thread_ts,
            post_key=post_key,
            placeholder_ts=placeholder_ts,
        )
        self._show_progress = show_progress
        # Told the placeholder's ts once it is up, so a restart can find and replace it.
        self._on_placeholder = on_placeholder

    async def working(self, *, step: str | None = None, queue_position: int | None = None) -> None:
        if not self._show_progress:
            return
        async with self._lock:
            if self._done:
                return
            first = self._ts is None
            ts = await self._show(placeholder_message(step=step, queue_position=queue_position))
            if first and self._on_placeholder is not None:
                await self._on_placeholder(ts)

    async def answered(self, messages: Sequence[SlackMessage], *, metadata: Metadata) -> str | None:
        async with self._lock:
            self._done = True
            last = await self._show(messages[0], metadata=metadata)
            for message in messages[1:]:
                last = await self._post(message)
            return last

    async def _show(self, message: SlackMessage, *, metadata: Metadata | None = None) -> str:
        if self._ts is None:
            self._ts = await self._post(message, metadata=metadata)
            return self._ts
        await self._update(self._ts, message, metadata)
        return self._ts


class _PostKeys:
    """`<base>/0`, `<base>/1`, …: one key per message a reply posts."""

    def __init__(self, base: str | None) -> None:
        self._base = base or uuid.uuid4().hex
        self._count = 0

    def next(self) -> str:
        key = f"{self._base}/{self._count}"
        self._count += 1
        return key


def placeholder_post_key(post_key: str) -> str:
    """The key a `ThreadReply` posted under `post_key` gives its first message."""
    return f"{post_key}/0"


class EphemeralReply:
    def __init__(
        self,
        response_url: str,
        *,
        on_placeholder: Callable[[], Awaitable[None]] | None = None,
        shown: bool = False,
    ) -> None:
        self._hook = AsyncWebhookClient(response_url, retry_handlers=retry_handlers())
        # Told once the placeholder is shown, so a restart replaces it rather than adds one.
        self._on_placeholder = on_placeholder
        # A re-run (recovery) replaces the placeholder its first run showed.
        self._shown = shown
        self._done = False
        self._lock = asyncio.Lock()

    async def working(self, *, step: str | None = None, queue_position: int | None = None) -> None:
        async with self._lock:
            # A response_url takes five calls: show the first state and the queue, not steps.
            if not self._done and (not self._shown or (queue_position is None and step is None)):
                first = not self._shown
                await self._show(placeholder_message(step=step, queue_position=queue_position))
                if first and self._on_placeholder is not None:
                    await self._on_placeholder()

    async def answered(self, messages: Sequence[SlackMessage], *, metadata: Metadata) -> str | None:
        async with self._lock:
            self._done = True
            await self._show(messages[0])
            for message in messages[1:]:
                await self._send(message, replace=False)
        return None

    async def failed(self, message: SlackMessage) -> None:
        async with self._lock:
            self._done = True
            await self._show(message)

    async def _show(self, message: SlackMessage) -> None:
        await self._send(message, replace=self._shown)
        self._shown = True

    async def _send(self, message: SlackMessage, *, replace: bool) -> None:
        response = await self._hook.send(
            response_type="ephemeral",
            replace_original=replace,
            unfurl_links=message.unfurl_links,
            unfurl_media=message.unfurl_media,
            text=message.text,
            blocks=message.blocks,
        )
        if response.status_code >= 400:
            raise ConnectionError(f"response_url answered HTTP {response.status_code}")


WORKING_STATUS = "is searching the knowledge base…"


class AssistantReply(_InThread):
    def __init__(
        self,
        client: AsyncWebClient,
        *,
        channel_id: str,
        thread_ts: str,
        post_key: str | None = None,
    ) -> None:
        super().__init__(client, channel_id=channel_id, thread_ts=thread_ts, post_key=post_key)
        self._panel_thread_ts = thread_ts  # a panel's thread always exists (typed as such)
        self._steps: list[str] = []  # the loop's steps so far: the rotating loading messages

    async def working(self, *, step: str | None = None, queue_position: int | None = None) -> None:
        if queue_position:
            status = f"is busy: {queue_position} question(s) ahead of yours…"
        elif step:
            status = f"is working: {step}"
            self._steps.append(step)
        else:
            status = WORKING_STATUS
        rotating = loading_messages(self._steps) if not queue_position else []
        async with self._lock:
            if not self._done:
                await self._client.assistant_threads_setStatus(
                    channel_id=self._channel,
                    thread_ts=self._panel_thread_ts,
                    status=status[:250],
                    loading_messages=rotating or None,
                )

    async def answered(self, messages: Sequence[SlackMessage], *, metadata: Metadata) -> str | None:
        async with self._lock:
            self._done = True
            last = None
            for index, message in enumerate(messages):
                last = await self._show(message, metadata=metadata if index == 0 else None)
            return last

    async def _show(self, message: SlackMessage, *, metadata: Metadata | None = None) -> str:
        if self._ts is None:
            return await self._post(message, metadata=metadata)
        ts, self._ts = self._ts, None  # replaced once; the rest of the answer is posted
        await self._update(ts, message, metadata)
        return ts


async def _post_keyed(
    poster: Poster,
    posts: _PostKeys,
    channel: str,
    thread_ts: str | None,
    message: SlackMessage,
    metadata: Metadata | None,
) -> str:
    """Post `message` in the thread under the reply's next post key."""
    return await poster.post(
        key=posts.next(),
        channel=channel,
        thread_ts=thread_ts,
        text=message.text,
        blocks=message.blocks,
        unfurl_links=message.unfurl_links,
        unfurl_media=message.unfurl_media,
        metadata=metadata,
    )
