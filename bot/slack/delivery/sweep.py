"""The continuous recovery of questions whose process died mid-answer.

Every `every` seconds (and at start-up) each replica's sweep first renews the leases of
the questions it is answering itself (leases.py, its heartbeat), then, one replica at a
time (an advisory lock), looks for questions whose lease ran out (store/deliveries.py):
their process stopped renewing, so it died. Each is re-run once on this replica
(rerun.py); one that cannot be re-run, or whose re-run died too, has its asker told to
ask again (recovery.py). A question still being answered on a live replica keeps its
lease and is never touched, however long it takes, so a rolling deploy or a replica
that restarts in seconds leaves no "Searching…" behind and abandons nothing alive.

While the process drains (shutdown), it only renews: questions it is finishing keep
their leases, and it takes no new work.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import aiohttp
import asyncpg
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.delivery.leases import Leases
from bot.slack.delivery.recovery import tell_to_ask_again
from bot.slack.delivery.rerun import can_rerun
from bot.slack.delivery.tasks import BackgroundTasks
from store.deliveries import DeliveryLog, Unfinished
from store.locks import RECOVERY_LOCK_KEY, try_advisory_lock

log = logging.getLogger(__name__)

# The first run and one re-run; a question that fails twice is not tried again.
MAX_RUNS = 2

Rerunner = Callable[[Unfinished], Coroutine[Any, Any, None]]


@dataclass(frozen=True, slots=True)
class Swept:
    rerun: int = 0
    told: int = 0


class Sweep:
    def __init__(
        self,
        *,
        pool: asyncpg.Pool,
        client: AsyncWebClient,
        deliveries: DeliveryLog,
        leases: Leases,
        rerun: Rerunner,
        tasks: BackgroundTasks,
    ) -> None:
        self._pool = pool
        self._client = client
        self._deliveries = deliveries
        self._leases = leases
        self._rerun = rerun
        self._tasks = tasks
        self.draining = False

    async def run(self, *, every: float) -> None:
        """Renew and sweep every `every` seconds until cancelled. A round that cannot
        reach the database is logged, and the next one only renews: after an outage,
        every live replica renews its leases before any sweep takes one."""
        renew_only = False
        while True:
            await asyncio.sleep(every)  # a period, not a wait for something to happen
            try:
                if self.draining or renew_only:
                    await self.renew()
                else:
                    await self.once()
                renew_only = False
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError):
                log.warning("the question sweep could not reach the database; next round retries")
                renew_only = True
            except Exception:
                # A loop that dies stops every renewal of this process, and with them its
                # live answers' leases: log whatever broke a round and keep the period.
                log.exception("a question sweep round failed; the next one tries again")

    async def renew(self) -> None:
        """Record the outcomes the database missed, then extend this process's leases."""
        for key, outcome in self._leases.unrecorded():
            await self._deliveries.finish(key, outcome=outcome)
            self._leases.recorded(key)
        await self._deliveries.renew(self._leases.keys())

    async def once(self) -> Swept:
        """Renew this process's leases, then re-run or tell what dead processes left."""
        await self.renew()
        async with try_advisory_lock(self._pool, RECOVERY_LOCK_KEY) as acquired:
            if not acquired:
                return Swept()  # another replica is sweeping
            rerun = told = 0
            for question in await self._deliveries.expired():
                if question.runs < MAX_RUNS and can_rerun(question):
                    if await self._deliveries.take(question.key):
                        self._tasks.start(self._rerun(question), name="rerun")
                        rerun += 1
                elif await self._tell(question):
                    told += 1
        if rerun or told:
            log.warning("questions left by a stopped process: %d re-run, %d told", rerun, told)
        return Swept(rerun=rerun, told=told)

    async def _tell(self, question: Unfinished) -> bool:
        if not await self._deliveries.abandon(question.key):
            return False  # answered or renewed meanwhile by the process that has it
        try:
            told = await tell_to_ask_again(self._client, question)
        except (SlackApiError, aiohttp.ClientError, OSError, TimeoutError):
            told = False
        if not told:
            log.warning("could not tell an asker to ask again; the next sweep retries")
            await self._deliveries.reopen(question.key)
        return told
