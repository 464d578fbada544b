"""Slack's assistant panel: a greeting with suggested prompts, then answers in its threads.

`assistant_thread_started` records the thread (so its messages are told apart from
ordinary DM threads), greets, and suggests prompts drawn from the collections the panel
may see. Each user message is answered like any other question, with the thread's
earlier turns, the panel's access, `assistant.threads.setStatus` while working, and the
thread titled after its first question; its delivery row names the panel's thread, so
a restart after a crash tells the asker there to ask again. The thread context Slack
sends is kept in Postgres (`StoredThreadContext`) instead of bolt's default, which
rewrites the first bot message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_bolt.context.assistant.thread_context import AssistantThreadContext
from slack_bolt.context.assistant.thread_context_store.async_store import (
    AsyncAssistantThreadContextStore,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.access.gate import AccessGate
from bot.slack.delivery.conversation import Asked, Conversation
from bot.slack.delivery.replies import AssistantReply
from bot.slack.delivery.streaming import Streams
from bot.slack.render.mrkdwn import escape, shorten
from bot.slack.render.notices import ASSISTANT_GREETING
from bot.slack.transport.predicates import message_key, question_text
from store.asked_documents import AskedDocuments, CitedDocument
from store.catalog import Catalog, CollectionSummary
from store.conversations import AssistantThreads
from store.deliveries import DeliveryLog, Question

MAX_PROMPTS = 4
PROMPT_TITLE = 75  # setSuggestedPrompts shows a short title; the message is what is asked
# Suggested prompts count the citations of this many days of answers.
PROMPT_DAYS = 30
TITLE_LENGTH = 60


def suggested_prompts(
    collections: list[CollectionSummary], cited: Sequence[CitedDocument] = ()
) -> list[dict[str, str]]:
    """At most four prompts, each a document title: the documents answers cited most
    (what people ask about), then one title per collection while there is room.

    `collections` are the ones the panel may see; a cited document of another is skipped.
    """
    allowed = {c.name for c in collections}
    titles = [d.title for d in cited if d.collection in allowed]
    titles += [c.sample_titles[0] for c in collections if c.sample_titles]
    prompts: list[dict[str, str]] = []
    for title in dict.fromkeys(" ".join(t.split()) for t in titles if t.strip()):
        if len(prompts) == MAX_PROMPTS:
            break
        topic = shorten(title, PROMPT_TITLE)
        prompts.append({"title": topic, "message": f"What should I know about {topic}?"})
    return prompts


class StoredThreadContext(AsyncAssistantThreadContextStore):
    """bolt's thread context store, on the assistant_threads table."""

    def __init__(self, threads: AssistantThreads) -> None:
        self._threads = threads

    async def save(self, *, channel_id: str, thread_ts: str, context: dict[str, str]) -> None:
        await self._threads.save_context(
            channel_id=channel_id, thread_ts=thread_ts, context=context
        )

    async def find(self, *, channel_id: str, thread_ts: str) -> AssistantThreadContext | None:
        found = await self._threads.context(channel_id=channel_id, thread_ts=thread_ts)
        return AssistantThreadContext(found) if found else None


class AssistantDesk:
    def __init__(
        self,
        *,
        client: AsyncWebClient,
        conversation: Conversation,
        threads: AssistantThreads,
        deliveries: DeliveryLog,
        catalog: Catalog,
        gate: AccessGate,
        asked: AskedDocuments | None = None,
        streams: Streams | None = None,
    ) -> None:
        self._asked = asked
        self._streams = streams
        self._client = client
        self._conversation = conversation
        self._threads = threads
        self._deliveries = deliveries
        self._catalog = catalog
        self._gate = gate

    async def is_assistant_thread(self, event: Mapping[str, Any]) -> bool:
        thread_ts = event.get("thread_ts")
        if not thread_ts or not event.get("channel"):
            return False
        return await self._threads.exists(channel_id=str(event["channel"]), thread_ts=thread_ts)

    async def context_changed(self, event: Mapping[str, Any]) -> None:
        """The panel's context (the channel the user is viewing), kept for its thread."""
        thread = event["assistant_thread"]
        await self._threads.save_context(
            channel_id=str(thread["channel_id"]),
            thread_ts=str(thread["thread_ts"]),
            context=thread.get("context") or {},
        )

    async def started(self, event: Mapping[str, Any]) -> None:
        thread = event["assistant_thread"]
        channel, thread_ts = str(thread["channel_id"]), str(thread["thread_ts"])
        await self._threads.started(
            channel_id=channel,
            thread_ts=thread_ts,
            user_id=str(thread.get("user_id", "")),
            context=thread.get("context") or {},
        )
        await self._client.chat_postMessage(
            channel=channel, thread_ts=thread_ts, text=ASSISTANT_GREETING
        )
        access = await self._gate.in_assistant(
            channel_id=channel, user_id=str(thread.get("user_id", ""))
        )
        collections = [c for c in await self._catalog.collections() if access.allows(c.name)]
        cited: list[CitedDocument] = []
        if self._asked is not None:
            since = datetime.now(UTC) - timedelta(days=PROMPT_DAYS)
            cited = await self._asked.most_cited(since=since)
        prompts = suggested_prompts(collections, cited)
        if prompts:
            await self._client.assistant_threads_setSuggestedPrompts(
                channel_id=channel, thread_ts=thread_ts, prompts=prompts
            )

    async def user_message(
        self, event: Mapping[str, Any], *, team_id: str, bot_user_id: str
    ) -> None:
        question = question_text(event.get("text", ""), bot_user_id=bot_user_id)
        if not question:
            return
        key, channel, thread_ts = message_key(event), str(event["channel"]), str(event["thread_ts"])
        # Followed to the end like any question: re-run, or "ask again", if its process dies.
        kept = Question(
            team_id=team_id,
            user_id=str(event.get("user", "")),
            text=question,
            surface="assistant",
            message_ts=str(event.get("ts")),
            with_history=True,
        )
        claimed = await self._deliveries.claim(
            key, kind="message", reply_channel=channel, reply_thread_ts=thread_ts, question=kept
        )
        if not claimed:
            return
        if await self._threads.claim_title(channel_id=channel, thread_ts=thread_ts):
            await self._client.assistant_threads_setTitle(
                channel_id=channel, thread_ts=thread_ts, title=_title(question)
            )
        user = str(event.get("user", ""))
        asked = Asked(
            team_id=team_id,
            channel_id=channel,
            user_id=user,
            question=question,
            surface="assistant",
            access=await self._gate.in_assistant(channel_id=channel, user_id=user),
            bot_user_id=bot_user_id,
            thread_ts=thread_ts,
            message_ts=str(event.get("ts")),
            with_history=True,
            delivery=key,
        )
        reply = AssistantReply(self._client, channel_id=channel, thread_ts=thread_ts, post_key=key)
        if self._streams is None:
            await self._conversation.run(asked, reply)
            return
        # The claims are streamed into the thread; the status keeps showing the steps.
        streamed = self._streams.reply(
            reply,
            channel_id=channel,
            thread_ts=thread_ts,
            team_id=team_id,
            user_id=asked.user_id,
            progress=False,
        )
        await self._conversation.run(asked, streamed)


def _title(question: str) -> str:
    """The decoded question, cut and escaped once for the wire."""
    return escape(shorten(question, TITLE_LENGTH))
