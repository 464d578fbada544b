"""`kb serve` killed with SIGKILL mid-answer: the restarted process tells the asker to ask again.

The answer is made slow deterministically: the bot runs the Claude reasoner against the
fake Anthropic API, which holds the question's first request (route) open; the test
waits for that request, so the process is known to be mid-answer (acked, placeholder
up), then kills it. The restart finds the delivery claimed but never finished, replaces
the placeholder with "please ask again", records the delivery as abandoned, and answers
the next question as usual.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import asyncpg
import pytest

from tests.agent.fake_anthropic import FakeAnthropic, Reply, running_fake
from tests.bot.slack.processes import ServeProcess, serve_env
from tests.bot.slack.rig import FakeSlack, mention

QUESTION = "How do I request annual leave?"


@pytest.fixture
async def anthropic_api() -> AsyncIterator[FakeAnthropic]:
    async for fake in running_fake():
        yield fake


async def _wait_for_requests(
    fake: FakeAnthropic, tool: str, count: int, timeout: float = 120
) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while sum(r.tool == tool for r in fake.requests) < count:
        assert asyncio.get_running_loop().time() < deadline, "the bot never asked Claude"
        await asyncio.sleep(0.05)  # the request arrives from another process


async def test_a_question_acked_by_a_killed_process_is_told_to_ask_again_after_the_restart(
    corpus: asyncpg.Pool,
    database_url: str,
    fake_slack: FakeSlack,
    anthropic_api: FakeAnthropic,
    tmp_path: Path,
) -> None:
    # kb serve's warm-up run asks first (answered; its later steps fall back), then the
    # question, whose first decision is held open until the process is killed.
    anthropic_api.script("route", Reply({"action": "search", "standalone_question": "x"}))
    anthropic_api.script("route", Reply(hang=True))
    env = serve_env(
        database_url=database_url, home=tmp_path / "home", slack_url=fake_slack.base_url,
        sources=None, KB_SLACK_ABANDONED_AFTER="0",
    )  # fmt: skip
    slow = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": anthropic_api.base_url}
    async with aiohttp.ClientSession() as http:
        first = await ServeProcess.start(env | slow, log=tmp_path / "first.log")
        try:
            await first.wait_healthy(http)
            event = mention(QUESTION, ts="1700000700.000001", event_id="EvKilled")
            assert (await first.sender(http).event(event)).status == 200
            (placeholder,) = await fake_slack.wait_for("chat.postMessage")
            await _wait_for_requests(anthropic_api, "route", 2)  # warm-up's, then the question's
        finally:
            await first.kill()
        placeholder_ts = fake_slack.messages["C111"][0]["ts"]
        assert fake_slack.calls_to("chat.update") == []  # killed before any answer

        second = await ServeProcess.start(env, log=tmp_path / "second.log")
        try:
            (told,) = await fake_slack.wait_for("chat.update", timeout=180)
            assert told.params["ts"] == placeholder_ts
            assert "Please ask again" in told.params["text"]
            await second.wait_healthy(http)
            again = mention(QUESTION, ts="1700000701.000001", event_id="EvAgain")
            assert (await second.sender(http).event(again)).status == 200
            answered = await fake_slack.wait_for(
                "chat.update",
                where=lambda c: (c.params.get("metadata") or {}).get("event_type") == "kb_answer",
            )
            assert "HRLinks" in json.dumps(answered[0].params["blocks"])
        finally:
            assert await second.stop() == 0, second.output()[-3000:]
    assert "Searching" in placeholder.params["text"]
    outcomes = dict(
        await corpus.fetch(
            "SELECT key, outcome FROM slack_deliveries WHERE reply_channel IS NOT NULL"
        )
    )
    assert outcomes == {
        "message:C111:1700000700.000001": "abandoned",
        "message:C111:1700000701.000001": "answered",
    }
    # Told once: nothing else touched the dead question's placeholder.
    assert [c.params["ts"] for c in fake_slack.calls_to("chat.update")].count(placeholder_ts) == 1
