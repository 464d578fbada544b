"""An answer streamed into its thread (chat.startStream, chat.appendStream, chat.stopStream).

The placeholder is a stream: started with the placeholder's words at the first sign of
work, then the progress lines ("Searching: annual leave") and each claim the agent hands
over (only claims that passed grounding: agent/answer.py `ClaimCallback`) are appended,
at most one append per `interval` seconds; what arrives in between waits and goes in the
next append. At the answer the stream is stopped with whatever still waits, then the
message is rewritten with chat.update to exactly what the non-streamed path shows (the
same blocks, Sources, buttons and metadata, through the wrapped `ThreadReply`, or in the
assistant panel the `AssistantReply`):
stopStream draws its `blocks` *below* the streamed text, so they could only repeat the
claims or keep the progress lines in the answer for good.

Where Slack refuses to stream (chat.startStream answers an error or does not answer: an
old workspace, a kind of conversation it does not stream to), the reply is the
reply it wraps (placeholder and chat.update; the panel's post), and the asker sees no
error. An
append that fails (the stream expired, rate limits outlasting the retries) ends the
appending; the answer still replaces the message at the end.

chat.startStream is sent without the client's blind 5xx retries (posting.py): a retry
could open a second stream. A stream Slack opened but did not confirm is left to expire.
Nor does it wait out a 429 (a burst of questions can outrun the method's rate limit,
lower than appendStream's Tier 4): the asker gets the placeholder at once instead.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from agent.answer import Citation, Claim
from bot.slack.delivery.posting import without_blind_retries
from bot.slack.delivery.replies import Metadata, Reply
from bot.slack.render.blocks import SlackMessage, placeholder_message
from bot.slack.render.mrkdwn import excerpt

log = logging.getLogger(__name__)

# chat.appendStream is Tier 4, but a burst of steps and claims still goes in one call.
APPEND_INTERVAL = 0.3
_STEP_CHARS = 300
_QUOTE_CHARS = 2000
_FAILURES = (SlackApiError, aiohttp.ClientError, OSError, TimeoutError)
# What a Slack without message streams answers: no point asking again.
_NO_STREAMS = frozenset({"unknown_method"})


def progress_line(*, step: str | None = None, queue_position: int | None = None) -> str:
    """One line of progress in the stream's Markdown: the step, the queue, or the start."""
    if step:
        return f"_{excerpt(step, _STEP_CHARS)}_\n"
    return f"_{placeholder_message(queue_position=queue_position).text}_\n"


def claim_line(claim: Claim, citation: Citation) -> str:
    """One verified claim in the stream's Markdown: its span, its quote, its number."""
    quote = f"“{excerpt(claim.quote, _QUOTE_CHARS)}” [{citation.number}]"
    if claim.span:
        return f"- **{excerpt(claim.span, _STEP_CHARS)}** — {quote}\n"
    return f"- {quote}\n"


class Adopting(Reply, Protocol):
    """A reply that can take a stopped stream's message as its own (replies.py)."""

    def adopt(self, ts: str) -> None: ...


class StreamedReply:
    """A reply whose placeholder is a Slack stream, where Slack allows one.

    With `progress` (a thread) the stream starts at the first sign of work and carries the
    steps; without (the assistant panel, whose status shows the steps) it starts with the
    first claim, and the steps go to the wrapped reply.
    """

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        fallback: Adopting,
        channel_id: str,
        thread_ts: str,
        recipient_team_id: str,
        recipient_user_id: str,
        on_placeholder: Callable[[str], Awaitable[None]] | None = None,
        interval: float = APPEND_INTERVAL,
        progress: bool = True,
        on_refused: Callable[[str], None] | None = None,
    ) -> None:
        self._client = client
        # A 429 on chat.startStream is not waited out: the placeholder goes up now.
        self._once = without_blind_retries(client, nor_429s=True)
        self._fallback = fallback
        self._channel = channel_id
        self._thread_ts = thread_ts
        self._recipient = (recipient_team_id, recipient_user_id)
        # Told the stream's ts once it is up, so a restart can find and replace it.
        self._on_placeholder = on_placeholder
        self._interval = interval
        self._progress = progress
        self._on_refused = on_refused  # told Slack's error when it refuses to stream
        self._ts: str | None = None
        self._refused = False
        self._appending = True
        self._done = False
        self._waiting: list[str] = []
        self._last_append = 0.0
        self._flush: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    async def working(self, *, step: str | None = None, queue_position: int | None = None) -> None:
        if self._progress:
            async with self._lock:
                if not self._refused:
                    await self._show(progress_line(step=step, queue_position=queue_position))
        if self._refused or not self._progress:
            await self._fallback.working(step=step, queue_position=queue_position)

    async def claimed(self, claim: Claim, citation: Citation) -> None:
        async with self._lock:
            if not self._refused:
                await self._show(claim_line(claim, citation))

    async def _show(self, line: str) -> None:
        """Start the stream with `line`, or queue it for the next append."""
        if self._ts is None and not self._done:
            await self._start(line)
        else:
            self._wait(line)

    async def answered(self, messages: Sequence[SlackMessage], *, metadata: Metadata) -> str | None:
        await self._end(keep_waiting=True)
        return await self._fallback.answered(messages, metadata=metadata)

    async def failed(self, message: SlackMessage) -> None:
        await self._end(keep_waiting=False)
        await self._fallback.failed(message)

    async def _start(self, line: str) -> None:
        try:
            response = await self._once.chat_startStream(
                channel=self._channel,
                thread_ts=self._thread_ts,
                recipient_team_id=self._recipient[0],
                recipient_user_id=self._recipient[1],
                markdown_text=line,
            )
        except _FAILURES as exc:
            self._refused = True
            log.info("no stream here (%s): a placeholder instead", _reason(exc))
            if self._on_refused is not None:
                self._on_refused(_reason(exc))
            return
        self._ts = str(response["ts"])
        self._last_append = time.monotonic()
        if self._on_placeholder is not None:
            await self._on_placeholder(self._ts)

    def _wait(self, text: str) -> None:
        """Queue `text` for the next append, due `interval` after the last one."""
        if self._ts is None or self._done or not self._appending:
            return
        self._waiting.append(text)
        if self._flush is None:
            delay = max(0.0, self._last_append + self._interval - time.monotonic())
            self._flush = asyncio.create_task(self._append_after(delay))

    async def _append_after(self, delay: float) -> None:
        await asyncio.sleep(delay)
        async with self._lock:
            self._flush = None
            if self._done or not self._waiting:
                return
            text, self._waiting = "".join(self._waiting), []
            try:
                await self._client.chat_appendStream(
                    channel=self._channel, ts=str(self._ts), markdown_text=text
                )
            except _FAILURES as exc:
                self._appending = False
                log.info("stream append failed (%s): the answer will replace it", _reason(exc))
            finally:
                self._last_append = time.monotonic()

    async def _end(self, *, keep_waiting: bool) -> None:
        """Stop the stream (with what still waits, unless the run failed) and hand its
        message to the wrapped reply, whose answer or failure line replaces it. Once ended,
        a late step or claim starts nothing."""
        async with self._lock:
            if self._done:
                return
            self._done = True
            if self._ts is None:
                return
            if self._flush is not None:
                self._flush.cancel()
                self._flush = None
            text = "".join(self._waiting) if keep_waiting and self._appending else ""
            self._waiting = []
            try:
                await self._client.chat_stopStream(
                    channel=self._channel, ts=self._ts, markdown_text=text or None
                )
            except _FAILURES as exc:
                log.info("could not stop the stream (%s); replacing it anyway", _reason(exc))
            self._fallback.adopt(self._ts)


class Streams:
    """Where answers stream: in a thread, unless streaming is off (KB_SLACK_STREAM=false)
    or this Slack has shown it has no streams (`unknown_method`), after which no question
    spends a failing call finding that out again. Built once by the composition root."""

    def __init__(self, client: AsyncWebClient, *, enabled: bool = True) -> None:
        self._client = client
        self._enabled = enabled

    def reply(
        self,
        fallback: Adopting,
        *,
        channel_id: str,
        thread_ts: str | None,
        team_id: str,
        user_id: str,
        on_placeholder: Callable[[str], Awaitable[None]] | None = None,
        progress: bool = True,
    ) -> Reply:
        """`fallback` streamed where it can be, else `fallback` itself."""
        if not self._enabled or not thread_ts:
            return fallback
        return StreamedReply(
            self._client,
            fallback=fallback,
            channel_id=channel_id,
            thread_ts=thread_ts,
            recipient_team_id=team_id,
            recipient_user_id=user_id,
            on_placeholder=on_placeholder,
            progress=progress,
            on_refused=self._refused,
        )

    def _refused(self, error: str) -> None:
        if error in _NO_STREAMS and self._enabled:
            self._enabled = False
            log.info("this Slack has no message streams (%s): placeholders from now on", error)


def _reason(exc: Exception) -> str:
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error"))
    return type(exc).__name__
