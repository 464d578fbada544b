"""A thread's earlier turns, as the agent's `history`: read from Slack, capped and cached.

`conversations.replies` gives the messages; the bot's answers carry their run id as
message metadata (`kb_answer`), so a bot turn is rebuilt from the stored run (its
claims and citations, filtered to what the channel may see), never parsed back from
Block Kit. A `/kb` question the bot posted on the asker's behalf carries `kb_question`
and counts as the asker's turn. Other bot messages (placeholders, failures, the rest of
a long answer) are skipped.

Only the bot's own messages (`user` is the bot) are trusted with that metadata: another
app, or a user token, can attach `kb_answer` / `kb_question` to its message, and must not
put words in the asker's or the bot's mouth. A long thread is read page by page
(`has_more` / `next_cursor`, oldest first as Slack lists replies), keeping only the newest
messages, so a follow-up in a thread of hundreds of messages still sees the latest turns.

Threads are cached for `ttl` seconds and the bot adds its own new turns to the cache,
so a conversation of follow-ups costs one `conversations.replies` call per minute.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from agent.answer import Answer, Turn
from bot.slack.access.config import Access
from bot.slack.access.visibility import NOT_FOUND_TURN, visible_turn
from bot.slack.transport.predicates import question_text
from store.runs import RunRepository

log = logging.getLogger(__name__)

ANSWER_EVENT = "kb_answer"
QUESTION_EVENT = "kb_question"
PAGE = 200  # conversations.replies' documented maximum page size is 1,000; 200 recommended
MAX_PAGES = 25  # bounded work per thread: up to 5,000 replies read


def answer_metadata(run_id: int | None) -> dict[str, Any]:
    return {"event_type": ANSWER_EVENT, "event_payload": {"run_id": run_id}}


def question_metadata(*, user_id: str, question: str) -> dict[str, Any]:
    return {"event_type": QUESTION_EVENT, "event_payload": {"user": user_id, "question": question}}


def bot_turn(answer: Answer) -> Turn:
    if answer.reply:
        text = answer.reply
    elif answer.claims:
        text = " ".join(claim.statement for claim in answer.claims)
    else:
        text = NOT_FOUND_TURN
    return Turn(role="bot", text=text, claims=answer.claims, citations=answer.citations)


@dataclass(slots=True)
class _Thread:
    fetched_at: float
    turns: list[Turn] = field(default_factory=list)


class ThreadHistory:
    def __init__(
        self,
        *,
        client: AsyncWebClient,
        runs: RunRepository,
        max_turns: int = 10,
        max_threads: int = 512,
        ttl: float = 60.0,
    ) -> None:
        self._client = client
        self._runs = runs
        self._max_turns = max_turns
        self._max_threads = max_threads
        self._ttl = ttl
        self._threads: OrderedDict[tuple[str, str], _Thread] = OrderedDict()
        self._answers: OrderedDict[int, Answer | None] = OrderedDict()

    async def turns(
        self, *, channel_id: str, thread_ts: str, before_ts: str, access: Access, bot_user_id: str
    ) -> list[Turn]:
        """The thread's turns before `before_ts`, the latest `max_turns` of them."""
        if self._max_turns == 0:
            return []
        cached = self._threads.get((channel_id, thread_ts))
        if cached is None or time.monotonic() - cached.fetched_at > self._ttl:
            try:
                fetched = await self._fetch(channel_id, thread_ts, before_ts, bot_user_id)
            except SlackApiError as exc:
                # Slack refused the read (a token without this kind of conversation's
                # history scope, a thread gone): the question is answered on its own
                # rather than not at all, and the next one tries the read again.
                log.warning(
                    "could not read the thread's earlier turns (%s); answering without them",
                    exc.response.get("error"),
                )
                return []
            cached = _Thread(time.monotonic(), fetched)
            self._keep(channel_id, thread_ts, cached)
        return [visible_turn(t, access) for t in cached.turns[-self._max_turns :]]

    def remember(self, *, channel_id: str, thread_ts: str, turns: Sequence[Turn]) -> None:
        """Add the bot's newest exchange to a cached thread (or start caching it)."""
        cached = self._threads.get((channel_id, thread_ts))
        if cached is None:
            cached = _Thread(time.monotonic())
        cached.turns.extend(turns)
        del cached.turns[: -self._max_turns or None]
        self._keep(channel_id, thread_ts, cached)

    def _keep(self, channel_id: str, thread_ts: str, thread: _Thread) -> None:
        self._threads[(channel_id, thread_ts)] = thread
        self._threads.move_to_end((channel_id, thread_ts))
        while len(self._threads) > self._max_threads:
            self._threads.popitem(last=False)

    async def _fetch(
        self, channel_id: str, thread_ts: str, before_ts: str, bot_user_id: str
    ) -> list[Turn]:
        turns: list[Turn] = []
        for message in await self._newest(channel_id, thread_ts, before_ts):
            if message.get("ts") == before_ts:
                continue
            turn = await self._turn(message, bot_user_id)
            if turn is not None:
                turns.append(turn)
        return turns[-self._max_turns :]

    async def _newest(
        self, channel_id: str, thread_ts: str, before_ts: str
    ) -> list[Mapping[str, Any]]:
        """The thread's newest messages before `before_ts`, through every page (bounded)."""
        # A turn can take a few messages (the question, a placeholder, a split answer).
        kept: deque[Mapping[str, Any]] = deque(maxlen=max(self._max_turns * 4, 20))
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            response = await self._client.conversations_replies(
                channel=channel_id,
                ts=thread_ts,
                latest=before_ts,
                inclusive=False,
                include_all_metadata=True,
                limit=PAGE,
                cursor=cursor,
            )
            kept.extend(response.get("messages") or [])
            cursor = (response.get("response_metadata") or {}).get("next_cursor")
            if not (response.get("has_more") and cursor):
                break
        return list(kept)

    async def _turn(self, message: Mapping[str, Any], bot_user_id: str) -> Turn | None:
        from_bot = bool(message.get("bot_id")) or message.get("user") == bot_user_id
        if not (bot_user_id and message.get("user") == bot_user_id):
            # Metadata from another app or a user is not the bot's record: read it as text.
            return None if from_bot else _user_turn(message, bot_user_id)
        metadata = message.get("metadata") or {}
        payload = metadata.get("event_payload") or {}
        if metadata.get("event_type") == ANSWER_EVENT and isinstance(payload.get("run_id"), int):
            answer = await self._answer(payload["run_id"])
            return bot_turn(answer) if answer is not None else None
        if metadata.get("event_type") == QUESTION_EVENT and payload.get("question"):
            return Turn(role="user", text=str(payload["question"]))
        return None

    async def _answer(self, run_id: int) -> Answer | None:
        if run_id not in self._answers:
            run = await self._runs.get(run_id)
            self._answers[run_id] = Answer.from_dict(run.answer) if run and run.answer else None
            while len(self._answers) > self._max_threads:
                self._answers.popitem(last=False)
        return self._answers[run_id]


def _user_turn(message: Mapping[str, Any], bot_user_id: str) -> Turn | None:
    text = question_text(message.get("text", ""), bot_user_id=bot_user_id)
    return Turn(role="user", text=text) if text else None
