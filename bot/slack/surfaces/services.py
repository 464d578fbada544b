"""Everything the listeners hand work to, built once by the composition root (bot/wiring.py).

`hand_off` is how a listener starts its work after the ack: the work runs only once the
delivery is claimed in Postgres (see transport/middleware.py), so the ack never waits on the
database and a duplicate delivery, here or on another instance, does nothing. While
the database is down the claim waits for it (delivery/claims.py), the request kept on disk
meanwhile (delivery/journal.py), so nothing acked is lost, even if this process dies.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from typing import Any

from slack_bolt.authorization import AuthorizeResult
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.access.config import AccessPolicy, BotOptions
from bot.slack.delivery.claims import claim_when_reachable
from bot.slack.delivery.journal import Journal
from bot.slack.delivery.leases import Leases
from bot.slack.delivery.rerun import Rerun
from bot.slack.delivery.tasks import BackgroundTasks
from bot.slack.surfaces.assistant_desk import AssistantDesk, StoredThreadContext
from bot.slack.surfaces.command_desk import CommandDesk
from bot.slack.surfaces.escalation_desk import EscalationDesk
from bot.slack.surfaces.feedback_desk import FeedbackDesk
from bot.slack.surfaces.home_desk import HomeDesk
from bot.slack.surfaces.message_desk import MessageDesk
from bot.slack.surfaces.trace_desk import TraceDesk
from bot.slack.transport.middleware import DELIVERY, Delivery
from bot.slack.transport.thread_watch import ThreadWatch
from store.deliveries import DeliveryLog

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SlackServices:
    client: AsyncWebClient
    identity: AuthorizeResult  # the bot, from auth.test at start-up
    signing_secret: str | None
    options: BotOptions
    access: AccessPolicy
    deliveries: DeliveryLog
    messages: MessageDesk
    commands: CommandDesk
    assistant: AssistantDesk
    thread_context: StoredThreadContext
    escalations: EscalationDesk
    feedback: FeedbackDesk
    traces: TraceDesk
    home: HomeDesk
    tasks: BackgroundTasks
    # The questions this process is answering (their leases), and how a question a dead
    # process left is asked again: both for the sweep (delivery/sweep.py).
    leases: Leases
    rerun: Rerun
    # Threads of the `slack` sources read again when they change (kb serve with sources).
    thread_watch: ThreadWatch | None = None
    # Where requests acked during a database outage wait for their claim (delivery/journal.py).
    journal: Journal | None = None

    async def dm_thread_message(
        self, event: Mapping[str, Any], *, team_id: str, bot_user_id: str
    ) -> None:
        """A message in a DM thread: the assistant panel's if its thread was opened as
        one, else an ordinary DM (a lookup, so made after the ack)."""
        if await self.assistant.is_assistant_thread(event):
            await self.assistant.user_message(event, team_id=team_id, bot_user_id=bot_user_id)
        else:
            await self.messages.handle(event, team_id=team_id, bot_user_id=bot_user_id)

    def hand_off(
        self, context: AsyncBoltContext, work: Coroutine[Any, Any, None], *, name: str
    ) -> None:
        """Run `work` after the ack, if this delivery is the first of its kind."""
        first = _first_delivery(self.deliveries, self.journal, context.get(DELIVERY), work)
        self.tasks.start(first, name=name)


async def _first_delivery(
    deliveries: DeliveryLog,
    journal: Journal | None,
    delivery: Delivery | None,
    work: Coroutine[Any, Any, None],
) -> None:
    if delivery is None:
        await work
        return
    kept = delivery.replayed

    async def keep() -> None:
        nonlocal kept
        if journal is None or delivery.request is None:
            return
        try:
            await asyncio.to_thread(journal.keep, delivery.key, delivery.request)
            kept = True
        except OSError as exc:  # a full or read-only disk: it is still held in memory
            log.error("could not keep the delivery on disk (%s); it waits in memory only", exc)

    claimed = await claim_when_reachable(
        lambda: deliveries.claim(delivery.key, kind=delivery.kind), on_wait=keep
    )
    if kept and journal is not None:
        await asyncio.to_thread(journal.drop, delivery.key)  # the database has it now
    if not claimed:
        work.close()
        log.info("duplicate %s delivery dropped", delivery.kind)
        return
    await work
