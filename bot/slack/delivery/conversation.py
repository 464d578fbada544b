"""One question put to the bot, from after the ack to the answer on screen.

Knows nothing of HTTP or of how the question arrived: it takes an `Asked` (who, where,
what, which collections) and a `Reply` (where the answer goes), waits for a run slot of
the workspace (showing the queue position), reads the thread's earlier turns, runs the
answerer with the channel's scope (steps shown as they come, throttled), renders the
answer, and records which run answered whom where. Anything that goes wrong after the
ack replaces the placeholder with one plain line and the run id; the traceback goes to
the log, never to Slack.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from agent.answer import Answer, Answerer, Turn
from agent.errors import run_id_of
from bot.metrics import Metrics
from bot.slack.access.config import Access, BotOptions
from bot.slack.delivery.leases import Leases
from bot.slack.delivery.queue import WorkspaceQueue
from bot.slack.delivery.replies import ClaimSink, Reply
from bot.slack.delivery.threads import ThreadHistory, answer_metadata, bot_turn
from bot.slack.render.blocks import (
    ReplyOptions,
    SlackMessage,
    answer_messages,
    failure_message,
    outsider_message,
    too_long_message,
)
from bot.slack.render.mrkdwn import clean
from store.conversations import ConversationLog, PostedAnswer
from store.deliveries import DeliveryLog
from store.runs import RunRepository

log = logging.getLogger(__name__)

# The origin key holding this bot's reference for a run, so a run that raised is found.
REQUEST_KEY = "request"


@dataclass(frozen=True, slots=True)
class Asked:
    """A question put to the bot in Slack."""

    team_id: str
    channel_id: str
    user_id: str
    question: str
    surface: str  # mention, command, private, thread, dm, assistant, help
    access: Access
    bot_user_id: str
    # The thread the answer goes in, and the message that asked (history stops before it).
    thread_ts: str | None = None
    message_ts: str | None = None
    with_history: bool = False
    # Help channels: post only an answer that is fully grounded, otherwise nothing.
    grounded_only: bool = False
    # The slack_deliveries key this question was claimed under, when it is followed.
    delivery: str | None = None


def grounded(answer: Answer) -> bool:
    return answer.covered and not answer.escalate


def _retrieve_failure(task: asyncio.Task[object]) -> None:
    """Mark a finished task's exception as seen: another failure is the one raised."""
    if not task.cancelled():
        task.exception()


class _StepReporter:
    """Passes the answerer's steps to the reply once the run has taken `interval` seconds,
    then at most one update per `interval`: a quick answer replaces the placeholder
    directly, without chat.update calls that only Slack's rate limit would notice."""

    def __init__(self, reply: Reply, *, interval: float) -> None:
        self._reply = reply
        self._interval = interval
        self._last = time.monotonic()

    async def __call__(self, step: str) -> None:
        now = time.monotonic()
        if now - self._last < self._interval:
            return
        self._last = now
        try:
            await self._reply.working(step=step)
        except Exception:
            # Progress is a courtesy: a failed update must not fail the run.
            log.warning("could not show a step", exc_info=True)


class Conversation:
    def __init__(
        self,
        *,
        answerer: Answerer,
        runs: RunRepository,
        answers: ConversationLog,
        threads: ThreadHistory,
        queue: WorkspaceQueue,
        options: BotOptions,
        deliveries: DeliveryLog | None = None,
        step_interval: float = 1.5,
        metrics: Metrics | None = None,
        leases: Leases | None = None,
    ) -> None:
        self._deliveries = deliveries
        self._leases = leases or Leases()
        self._answerer = answerer
        self._runs = runs
        self._answers = answers
        self._threads = threads
        self._queue = queue
        self._options = options
        self._step_interval = step_interval
        self._metrics = metrics

    async def run(self, asked: Asked, reply: Reply) -> None:
        """Answer `asked` through `reply`; never raises (a failure is shown instead).

        The question's lease is renewed (leases.py) for as long as it is being answered."""
        with self._leases.holding(asked.delivery):
            await self._run(asked, reply)

    async def _run(self, asked: Asked, reply: Reply) -> None:
        reference = uuid.uuid4().hex[:16]
        started = time.monotonic()
        # NUL and lone surrogates cannot be stored (Postgres text is UTF-8 without NUL);
        # bidi overrides could make the question read otherwise in the trace.
        asked = dataclasses.replace(asked, question=" ".join(clean(asked.question).split()))
        limit = self._options.max_question_chars
        try:
            if asked.access.shows_nothing:
                # A guest or someone of another organisation, where nothing is theirs to see.
                if not asked.grounded_only:
                    await reply.failed(outsider_message())
                await self._finish(asked, "silent" if asked.grounded_only else "answered")
                return
            if len(asked.question) > limit:
                if not asked.grounded_only:
                    await reply.failed(too_long_message(length=len(asked.question), limit=limit))
                await self._finish(asked, "failed")
                return
            answer = await self._answer(asked, reply, reference)
            seconds = time.monotonic() - started
            if self._metrics is not None:
                self._metrics.answered(answer, seconds=seconds)
            log.info(
                "answered",
                extra={
                    "run_id": answer.run_id,
                    "channel_id": asked.channel_id,
                    "stage": "answer",
                    "stop_reason": answer.stop_reason,
                    "latency_ms": round(seconds * 1000, 1),
                },
            )
            if asked.grounded_only and not grounded(answer):
                log.info("help channel: no grounded answer, nothing posted (run %s)", answer.run_id)
                await self._finish(asked, "silent")
                return
            messages = self._render(answer)
            message_ts = await reply.answered(messages, metadata=answer_metadata(answer.run_id))
            await self._finish(asked, "answered")
            await self._record(asked, answer, message_ts)
        except Exception as exc:
            log.exception("answering failed (request %s)", reference)
            if self._metrics is not None:
                self._metrics.answer_failed()
            if not asked.grounded_only:
                await self._show_failure(reply, reference, run_id=run_id_of(exc))
            await self._finish(asked, "failed")

    async def _finish(self, asked: Asked, outcome: str) -> None:
        """Mark the delivery finished; best effort (the database may be what failed)."""
        if self._deliveries is None or asked.delivery is None:
            return
        try:
            await self._deliveries.finish(asked.delivery, outcome=outcome)
        except Exception:
            log.warning("could not mark the delivery %s; the sweep will", outcome, exc_info=True)
            self._leases.finish_later(asked.delivery, outcome)

    async def _answer(self, asked: Asked, reply: Reply, reference: str) -> Answer:
        async def queued(position: int) -> None:
            await reply.working(queue_position=position)

        async with self._queue.slot(asked.team_id, on_queued=queued):
            # The placeholder (or stream) opens beside the thread's history and the run:
            # each is a Slack or database round trip that need not wait for the others.
            opening = asyncio.create_task(reply.working())
            try:
                history = await self._history(asked)
            except BaseException:
                await asyncio.wait([opening])  # up (or refused) before the failure replaces it
                _retrieve_failure(opening)
                raise
            running = asyncio.create_task(self._run_answerer(asked, reply, reference, history))
            try:
                await opening
            except BaseException:
                # No placeholder, no answer: the run stops, and the failure names it.
                running.cancel()
                await asyncio.wait([running])
                _retrieve_failure(running)
                raise
            return await running

    async def _run_answerer(
        self, asked: Asked, reply: Reply, reference: str, history: Sequence[Turn]
    ) -> Answer:
        # Only a streamed reply takes the claims as they come (bot/slack/delivery/streaming.py).
        claims = {"on_claim": reply.claimed} if isinstance(reply, ClaimSink) else {}
        return await self._answerer.answer(
            asked.question,
            history=history,
            scope=asked.access.scope,
            origin=self._origin(asked, reference),
            on_step=_StepReporter(reply, interval=self._step_interval),
            **claims,
        )

    async def _history(self, asked: Asked) -> Sequence[Turn]:
        if not (asked.with_history and asked.thread_ts and asked.message_ts):
            return ()
        return await self._threads.turns(
            channel_id=asked.channel_id,
            thread_ts=asked.thread_ts,
            before_ts=asked.message_ts,
            access=asked.access,
            bot_user_id=asked.bot_user_id,
        )

    def _origin(self, asked: Asked, reference: str) -> dict[str, str]:
        origin = {
            "team": asked.team_id,
            "channel": asked.channel_id,
            "user": asked.user_id,
            "surface": asked.surface,
            REQUEST_KEY: reference,
        }
        if asked.thread_ts:
            origin["thread"] = asked.thread_ts
        return origin

    def _render(self, answer: Answer) -> list[SlackMessage]:
        # Without an escalation channel the button still works: the question goes to the
        # people of the asker's own channel, in its thread (bot/slack/surfaces/escalation_desk.py).
        options = ReplyOptions(always_offer_escalation=self._options.always_escalate)
        return answer_messages(answer, options=options)

    async def _record(self, asked: Asked, answer: Answer, message_ts: str | None) -> None:
        thread_ts = None if asked.surface == "private" else asked.thread_ts
        await self._answers.record(
            PostedAnswer(
                run_id=answer.run_id,
                team_id=asked.team_id,
                channel_id=asked.channel_id,
                thread_ts=thread_ts,
                message_ts=message_ts,
                user_id=asked.user_id,
                question=asked.question,
                surface=asked.surface,
            )
        )
        if thread_ts:
            self._threads.remember(
                channel_id=asked.channel_id,
                thread_ts=thread_ts,
                turns=[Turn(role="user", text=asked.question), bot_turn(answer)],
            )

    async def _show_failure(self, reply: Reply, reference: str, *, run_id: int | None) -> None:
        """One plain line naming the run: the one the loop noted (known even when the
        database is what failed), else the one stored under this request's reference."""
        try:
            run_id = run_id or await self._failed_run(reference)
        except Exception:
            log.warning("could not look up the failed run (request %s)", reference, exc_info=True)
        try:
            await reply.failed(failure_message(run_id=run_id))
        except Exception:
            log.exception("could not show the failure either (request %s)", reference)

    async def _failed_run(self, reference: str) -> int | None:
        """The run that raised, marked failed if the answerer left it running."""
        run = await self._runs.find_by_origin(REQUEST_KEY, reference)
        if run is None:
            return None
        if run.status == "running":
            await self._runs.fail(run.id, error="the run raised; see the bot's log")
        return run.id
