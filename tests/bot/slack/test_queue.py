"""Agent runs are capped per workspace; a question that waits says so in its placeholder."""

from __future__ import annotations

import asyncio

import pytest

from bot.slack.access.config import BotOptions
from bot.slack.delivery.queue import WorkspaceQueue
from tests.bot.slack.rig import GatedAnswerer, mention


async def test_a_question_beyond_the_workspace_cap_is_queued_visibly_then_answered(
    start_bot, fake_slack
):
    agents: list[GatedAnswerer] = []

    def slow(runtime):
        agents.append(GatedAnswerer(runtime.answerer()))
        return agents[-1]

    bot = await start_bot(answerer=slow, options=BotOptions(runs_per_workspace=1))
    await bot.sender.event(mention("How do I request annual leave?", ts="1.1", event_id="Ev1"))
    await agents[0].started.wait()
    await bot.sender.event(mention("How do I book travel?", ts="2.1", event_id="Ev2"))
    first, second = await fake_slack.wait_for("chat.postMessage", count=2)
    assert "Searching" in first.params["text"]
    assert "number 1 in the queue" in second.params["text"]
    agents[0].gate.set()
    await bot.idle()
    updates = fake_slack.calls_to("chat.update", progress=True)
    assert any("Searching" in u.params["text"] for u in updates)  # its turn came
    assert len(fake_slack.calls_to("chat.update")) == 2  # then both answers
    assert not [m for m in fake_slack.messages["C111"] if "queue" in m["text"]]


class _Asker:
    """One question: enters its slot when its turn comes, until it is released."""

    def __init__(self, queue: WorkspaceQueue, team: str) -> None:
        self.queue, self.team = queue, team
        self.entered, self.queued, self.release = asyncio.Event(), asyncio.Event(), asyncio.Event()
        self.position: int | None = None

    async def _told(self, position: int) -> None:
        self.position = position
        self.queued.set()

    async def run(self) -> None:
        async with self.queue.slot(self.team, on_queued=self._told):
            self.entered.set()
            await self.release.wait()


async def test_each_workspace_has_its_own_slots_and_waiters_go_in_order():
    queue = WorkspaceQueue(limit=1)
    a1, a2, a3, b1 = (_Asker(queue, team) for team in ("a", "a", "a", "b"))
    tasks = [asyncio.create_task(a1.run())]
    await a1.entered.wait()
    tasks.append(asyncio.create_task(a2.run()))
    await a2.queued.wait()
    tasks.append(asyncio.create_task(a3.run()))
    await a3.queued.wait()
    tasks.append(asyncio.create_task(b1.run()))
    await b1.entered.wait()  # another workspace is not behind team a's queue
    assert (a2.position, a3.position, b1.position) == (1, 2, None)
    a1.release.set()
    await a2.entered.wait()
    assert not a3.entered.is_set()
    for asker in (a2, a3, b1):
        asker.release.set()
    await asyncio.gather(*tasks)
    assert queue.waiting("a") == 0


async def test_a_cancelled_wait_gives_its_place_up():
    queue = WorkspaceQueue(limit=1)
    holder, waiter = _Asker(queue, "t"), _Asker(queue, "t")
    first = asyncio.create_task(holder.run())
    await holder.entered.wait()
    second = asyncio.create_task(waiter.run())
    await waiter.queued.wait()
    second.cancel()
    with pytest.raises(asyncio.CancelledError):
        await second
    assert queue.waiting("t") == 0
    holder.release.set()
    await first
    async with queue.slot("t") as waited:
        assert waited is False
