"""The Claude reasoner failing under a Slack question: the answer still arrives.

The bot's agent loop is built from settings with ANTHROPIC_API_KEY and
ANTHROPIC_BASE_URL pointing at the fake Anthropic API (tests/agent/fake_anthropic.py),
as `kb serve` builds it; the question comes in as a signed mention. The API answers the
first decision with 529 twice, 429 twice, no answer until the timeout twice, or
malformed tool input twice: the extractive reasoner takes over, the answer replaces the
placeholder, and the stored run (what "Why this answer?" shows) notes the fallback.
The reasoner-level retry policy is tested in tests/agent/test_claude.py.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import asyncpg
import pytest

from bot.settings import Settings
from bot.wiring import build_agent_loop
from store.runs import RunRepository
from tests.agent.fake_anthropic import FakeAnthropic, Reply, running_fake
from tests.bot.slack.rig import FakeSlack, mention

QUESTION = "How do I request annual leave?"

FAULTS = {
    "overloaded 529": Reply(status=529),
    "rate limited 429": Reply(status=429, headers={"retry-after": "0"}),
    "timeout": Reply(hang=True),
    "malformed output": Reply({"action": 7}),
}


@pytest.fixture
async def anthropic_api() -> AsyncIterator[FakeAnthropic]:
    async for fake in running_fake():
        yield fake


@pytest.mark.parametrize("fault", sorted(FAULTS))
async def test_an_anthropic_fault_still_gets_the_answer_posted_with_the_fallback_noted(
    fault: str,
    start_bot,
    fake_slack: FakeSlack,
    anthropic_api: FakeAnthropic,
    pool: asyncpg.Pool,
) -> None:
    anthropic_api.script("route", FAULTS[fault], FAULTS[fault])
    settings = Settings(
        ANTHROPIC_API_KEY="test-key",
        ANTHROPIC_BASE_URL=anthropic_api.base_url,
        KB_ANTHROPIC_TIMEOUT=1.0,
    )

    def claude(runtime):
        return build_agent_loop(
            settings,
            pool=runtime.pool,
            embedder=runtime.embedder,
            keyword_search=runtime.keyword_search,
            retriever=runtime.hybrid_retriever(),
        )

    bot = await start_bot(answerer=claude)
    await bot.sender.event(mention(QUESTION, ts="1700000900.000001", event_id="EvClaude"))
    (answer,) = await fake_slack.wait_for("chat.update")
    await bot.idle()
    assert [r.tool for r in anthropic_api.requests] == ["route", "route"]
    assert answer.params["metadata"]["event_type"] == "kb_answer"
    assert "HRLinks" in json.dumps(answer.params["blocks"])
    run = await RunRepository(pool).get(answer.params["metadata"]["event_payload"]["run_id"])
    assert run is not None and run.reasoner == "claude"
    assert any("claude was unavailable" in n and "extractive took over" in n for n in run.notes)
    assert len(fake_slack.calls_to("chat.postMessage")) == 1
