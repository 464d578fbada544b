"""A first question's search begins when the run does, beside the route and plan
decisions (issue 20, "Measured": with Claude those take seconds), through the real SDK,
the local fake of the Messages API and the handbook pages in Postgres.

While Claude's route decision is held, the store sees the question's vector search; the
first step takes those hits instead of searching again. A run routed to a reply cancels
the early search, and nothing of it is left running.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import anthropic
import pytest

from agent.reasoners.claude import ClaudeOptions, ClaudeReasoner
from store.vector_search import SEARCH_SQL
from tests.agent.conftest import Built, statements_sent
from tests.agent.fake_anthropic import FakeAnthropic, Reply, running_fake

QUESTION = "How much annual leave do I earn?"


@pytest.fixture
async def fake() -> AsyncIterator[FakeAnthropic]:
    async for running in running_fake():
        yield running


def _reasoner(fake: FakeAnthropic) -> ClaudeReasoner:
    client = anthropic.AsyncAnthropic(api_key="test-key", base_url=fake.base_url, max_retries=0)
    return ClaudeReasoner(client=client, options=ClaudeOptions(model="claude-test", timeout=30.0))


def _vector_searches(sent: list[str]) -> int:
    return sum(1 for q in sent if q == SEARCH_SQL)


async def _until(condition, seconds: float) -> bool:
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.02)  # polling what another task does
    return True


async def test_the_question_is_searched_while_the_route_is_decided_and_searched_once(
    fake: FakeAnthropic, handbook: Built
) -> None:
    sent = await statements_sent(handbook.pool)
    fake.script("route", Reply({"action": "search", "standalone_question": QUESTION}, hang=True))
    fake.script("plan", Reply({"sub_questions": [{"text": QUESTION, "key": True}]}))
    fake.always("extract", Reply({"quotes": []}))
    fake.always("judge", Reply({"answered": [], "gaps": []}))
    fake.always("rewrite", Reply({"query": ""}))
    run = asyncio.create_task(handbook.loop(reasoner=_reasoner(fake)).answer(QUESTION))
    try:
        searched = await _until(lambda: _vector_searches(sent) > 0, seconds=30)
        asked = [r.tool for r in fake.requests]
    finally:
        fake.release()
        await run
    # Seen before the route was decided (the search may even beat the route's request).
    assert searched and asked in ([], ["route"])
    assert [r.tool for r in fake.requests][:2] == ["route", "plan"]
    assert _vector_searches(sent) == 1  # the first step took the early search's hits


async def test_a_run_routed_to_a_reply_cancels_its_early_search(
    fake: FakeAnthropic, handbook: Built
) -> None:
    route = {"action": "reply", "standalone_question": "thanks", "reply": "You're welcome."}
    fake.script("route", Reply(route))
    # The chunks are locked for the run, so the early search is still waiting when the
    # reply is ready: only cancelling it leaves nothing of it running.
    async with handbook.pool.acquire() as holder:
        locked = holder.transaction()
        await locked.start()
        try:
            await holder.execute("LOCK TABLE chunks IN ACCESS EXCLUSIVE MODE")
            answer = await handbook.loop(reasoner=_reasoner(fake)).answer("thanks!")
            left = [t for t in asyncio.all_tasks() if "_retriever_call" in repr(t.get_coro())]
        finally:
            await locked.rollback()
    assert not answer.claims and [r.tool for r in fake.requests] == ["route"]
    assert left == []


async def test_the_question_is_searched_while_the_run_is_being_stored(
    fake: FakeAnthropic, handbook: Built
) -> None:
    """The run's row waits behind a lock on agent_runs: the search does not wait with it."""
    sent = await statements_sent(handbook.pool)
    fake.script("route", Reply({"action": "search", "standalone_question": QUESTION}))
    fake.script("plan", Reply({"sub_questions": [{"text": QUESTION, "key": True}]}))
    fake.always("extract", Reply({"quotes": []}))
    fake.always("judge", Reply({"answered": [], "gaps": []}))
    fake.always("rewrite", Reply({"query": ""}))
    async with handbook.pool.acquire() as holder:
        locked = holder.transaction()
        await locked.start()
        try:
            await holder.execute("LOCK TABLE agent_runs IN ACCESS EXCLUSIVE MODE")
            run = asyncio.create_task(handbook.loop(reasoner=_reasoner(fake)).answer(QUESTION))
            searched = await _until(lambda: _vector_searches(sent) > 0, seconds=30)
            asked = [r.tool for r in fake.requests]
        finally:
            await locked.rollback()
        answer = await run
    assert searched and asked == []  # searched before the run was stored or routed
    assert answer.run_id is not None and _vector_searches(sent) == 1
