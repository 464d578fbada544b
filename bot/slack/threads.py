"""A thread's earlier turns, as the agent's `history`: read from Slack, capped and cached.

`conversations.replies` gives the messages; the bot's answers carry their run id as
message metadata (`kb_answer`), so a bot turn is rebuilt from the stored run (its
claims and citations, filtered to what the channel may see), never parsed back from
Block Kit. A `/kb` question the bot posted on the asker's behalf carries `kb_question`
and counts as the asker's turn. Other bot messages (placeholders, failures, the rest of
a long answer) are skipped.

Threads are cached for `ttl` seconds and the bot adds its own new turns to the cache,
so a conversation of follow-ups costs one `conversations.replies` call per minute.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from agent.answer import Answer, Turn
from bot.slack.config import Access
from bot.slack.predicates import question_text
from bot.slack.visibility import NOT_FOUND_TURN, visible_turn
from store.runs import RunRepository

ANSWER_EVENT = "kb_answer"
QUESTION_EVENT = "kb_question"


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
            cached = _Thread(
                time.monotonic(), await self._fetch(channel_id, thread_ts, before_ts, bot_user_id)
            )
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
        response = await self._client.conversations_replies(
            channel=channel_id,
            ts=thread_ts,
            latest=before_ts,
            inclusive=False,
            include_all_metadata=True,
            limit=100,
        )
        turns: list[Turn] = []
        for message in response.get("messages") or []:
            if message.get("ts") == before_ts:
                continue
            turn = await self._turn(message, bot_user_id)
            if turn is not None:
                turns.append(turn)
        return turns[-self._max_turns :]

    async def _turn(self, message: Mapping[str, Any], bot_user_id: str) -> Turn | None:
        metadata = message.get("metadata") or {}
        payload = metadata.get("event_payload") or {}
        if metadata.get("event_type") == ANSWER_EVENT and isinstance(payload.get("run_id"), int):
            answer = await self._answer(payload["run_id"])
            return bot_turn(answer) if answer is not None else None
        if metadata.get("event_type") == QUESTION_EVENT and payload.get("question"):
            return Turn(role="user", text=str(payload["question"]))
        if message.get("bot_id") or message.get("user") == bot_user_id:
            return None
        text = question_text(message.get("text", ""), bot_user_id=bot_user_id)
        return Turn(role="user", text=text) if text else None

    async def _answer(self, run_id: int) -> Answer | None:
        if run_id not in self._answers:
            run = await self._runs.get(run_id)
            self._answers[run_id] = Answer.from_dict(run.answer) if run and run.answer else None
            while len(self._answers) > self._max_threads:
                self._answers.popitem(last=False)
        return self._answers[run_id]
