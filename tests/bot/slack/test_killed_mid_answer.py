"""`kb serve` killed with SIGKILL mid-answer: the restarted process answers every question.

The answers are made slow deterministically: the bot runs the Claude reasoner against
the fake Anthropic API, which holds each question's first request (route) open; the
test waits for those requests, so the process is known to be mid-answer on all of them
(acked, placeholder up), then kills it. One kill leaves a question of each kind
unanswered: an @mention, a `/kb` question (posted, answered in its thread), a
`/kb private` one (behind its response_url) and one in the assistant panel. The restart
finds their deliveries claimed but never finished and tells each asker where they
asked: the restart's sweep finds their leases run out (nothing renews them) and re-runs
each once, over what the dead run left: the mention's and the `/kb` thread's
placeholders are replaced by the answers, the private placeholder is replaced through
the response_url, the panel gets its answer in its thread. Each delivery is recorded
answered on its second run, nobody is told to ask again, and the next question is
answered as usual. (A re-run that dies too: tests/bot/slack/test_sweep.py.)

And the other side: a slow answer on a live replica renews its lease for as long as it
takes, so another replica sweeping meanwhile never takes it, re-runs it or tells its
asker to ask again (what a rolling deploy must not do).
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
from tests.bot.slack.rig import Call, FakeSlack, mention, payload, slash_command

QUESTION = "How do I request annual leave?"
PANEL, PANEL_THREAD = "D111", "1726133698.626339"


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


async def _wait_for_placeholders(fake: FakeSlack, timeout: float = 120) -> None:
    """The mention's and the `/kb` thread's placeholders posted, the private one shown."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not (
        fake.messages["C111"]
        and len(fake.messages["C222"]) >= 2
        and any(h.path.endswith("/private") for h in fake.hooks)
    ):
        assert asyncio.get_running_loop().time() < deadline, "a placeholder never went up"
        await asyncio.sleep(0.05)


def _panel_started() -> dict:
    body = payload("event_assistant_thread_started.json")
    body["event_id"] = "EvPanelStarted"
    return body


def _panel_question(text: str, *, ts: str) -> dict:
    body = payload("event_message_im_in_thread.json")
    body["event_id"] = "EvPanelQuestion"
    body["event"] |= {"text": text, "ts": ts, "event_ts": ts}
    return body


def _kb(text: str, *, channel: str, hook: str, fake: FakeSlack) -> dict:
    form = slash_command(text, response_url=fake.hook_url(hook), trigger_id=f"111.{hook}")
    return form | {"channel_id": channel}


def _told(fake: FakeSlack, method: str, **where: str) -> list:
    return [
        c
        for c in fake.calls_to(method)
        if "Please ask again" in str(c.params.get("text"))
        and all(c.params.get(k) == v for k, v in where.items())
    ]


async def test_questions_of_every_kind_acked_by_a_killed_process_are_rerun_and_answered(
    corpus: asyncpg.Pool,
    database_url: str,
    fake_slack: FakeSlack,
    anthropic_api: FakeAnthropic,
    tmp_path: Path,
) -> None:
    # kb serve's warm-up run asks first (answered; its later steps fall back), then the
    # four questions, whose first decisions are held open until the process is killed.
    anthropic_api.script("route", Reply({"action": "search", "standalone_question": "x"}))
    anthropic_api.script("route", *[Reply(hang=True)] * 4)
    env = serve_env(
        database_url=database_url, home=tmp_path / "home", slack_url=fake_slack.base_url,
        sources=None, KB_SLACK_LEASE="3", KB_SLACK_SWEEP_EVERY="0.5",
        KB_SLACK_RUNS_PER_WORKSPACE="4",
    )  # fmt: skip
    slow = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": anthropic_api.base_url}
    async with aiohttp.ClientSession() as http:
        first = await ServeProcess.start(env | slow, log=tmp_path / "first.log")
        try:
            await first.wait_healthy(http)
            sender = first.sender(http)
            assert (await sender.event(_panel_started())).status == 200
            await fake_slack.wait_for(
                "chat.postMessage", where=lambda c: c.params["channel"] == PANEL
            )
            sent = [
                await sender.event(mention(QUESTION, ts="1700000700.000001", event_id="EvKilled")),
                await sender.command(_kb(QUESTION, channel="C222", hook="public", fake=fake_slack)),
                await sender.command(
                    _kb(f"private {QUESTION}", channel="C333", hook="private", fake=fake_slack)
                ),
                await sender.event(_panel_question(QUESTION, ts="1726133700.000001")),
            ]
            assert [s.status for s in sent] == [200] * 4
            await _wait_for_requests(anthropic_api, "route", 5)  # warm-up's, then the four
            # The runs start beside their placeholders: killed once those are up too.
            await _wait_for_placeholders(fake_slack)
        finally:
            await first.kill()
        assert fake_slack.calls_to("chat.update") == []  # killed before any answer
        mention_placeholder = fake_slack.messages["C111"][0]["ts"]
        kb_question, kb_placeholder = fake_slack.messages["C222"]
        assert kb_placeholder["thread_ts"] == kb_question["ts"]
        (private_placeholder,) = [h for h in fake_slack.hooks if h.path.endswith("/private")]
        assert "Searching" in private_placeholder.params["text"]
        assert fake_slack.calls_to("assistant.threads.setStatus")  # the panel was working

        second = await ServeProcess.start(env, log=tmp_path / "second.log")
        try:
            updates = await fake_slack.wait_for("chat.update", count=2, where=_answer, timeout=180)
            private = await fake_slack.wait_for(
                "hook", where=lambda c: c.path.endswith("/private") and "HRLinks" in str(c.params)
            )
            panel = await fake_slack.wait_for(
                "chat.postMessage", where=lambda c: c.params["channel"] == PANEL and _answer(c)
            )
            await second.wait_healthy(http)
            again = mention(QUESTION, ts="1700000701.000001", event_id="EvAgain")
            assert (await second.sender(http).event(again)).status == 200
            await fake_slack.wait_for("chat.update", count=3, where=_answer)
        finally:
            assert await second.stop() == 0, second.output()[-3000:]
    # The mention's and the /kb thread's placeholders, replaced by their answers.
    answered = {(c.params["channel"], c.params["ts"]) for c in updates}
    assert answered == {("C111", mention_placeholder), ("C222", kb_placeholder["ts"])}
    assert all("HRLinks" in json.dumps(c.params["blocks"]) for c in updates)
    # The private one, through its response_url, replacing the private placeholder.
    (private_answer,) = private
    assert private_answer.params["replace_original"] is True
    assert private_answer.params["response_type"] == "ephemeral"
    assert fake_slack.calls_to("chat.postEphemeral") == []
    # The panel's, in its thread.
    (panel_answer,) = panel
    assert panel_answer.params["thread_ts"] == PANEL_THREAD
    rows = await corpus.fetch(
        "SELECT kind, reply_channel, outcome, runs, response_url, question FROM slack_deliveries"
        " WHERE reply_channel IS NOT NULL"
    )
    assert sorted(tuple(r) for r in rows) == [
        ("command", "C222", "answered", 2, None, None),
        ("command", "C333", "answered", 2, None, None),
        ("message", "C111", "answered", 1, None, None),
        ("message", "C111", "answered", 2, None, None),
        ("message", PANEL, "answered", 2, None, None),
    ]
    # Answered once each, and nobody told to ask again; nothing posted in C333.
    assert _told(fake_slack, "chat.update") == _told(fake_slack, "chat.postMessage") == []
    assert [c.params["channel"] for c in fake_slack.calls_to("chat.postMessage")].count("C333") == 0
    assert len([c for c in fake_slack.calls_to("chat.postMessage") if _answer(c)]) == 1


def _answer(call: Call) -> bool:
    return (call.params.get("metadata") or {}).get("event_type") == "kb_answer"


async def test_a_slow_answer_outlives_its_lease_on_a_live_replica_and_no_other_replica_takes_it(
    corpus: asyncpg.Pool,
    database_url: str,
    fake_slack: FakeSlack,
    anthropic_api: FakeAnthropic,
    tmp_path: Path,
) -> None:
    # The live replica's warm-up asks first; then the question's first decision is held
    # open for several leases, while another replica sweeps five times a second.
    anthropic_api.script("route", Reply({"action": "search", "standalone_question": "x"}))
    anthropic_api.script("route", Reply(hang=True))
    env = serve_env(
        database_url=database_url, home=tmp_path / "home", slack_url=fake_slack.base_url,
        sources=None, KB_SLACK_LEASE="2", KB_SLACK_SWEEP_EVERY="0.2",
    )  # fmt: skip
    slow = {
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": anthropic_api.base_url,
        "KB_ANTHROPIC_TIMEOUT": "120",
    }
    async with aiohttp.ClientSession() as http:
        live = await ServeProcess.start(env | slow, log=tmp_path / "live.log")
        other = await ServeProcess.start(env, log=tmp_path / "other.log")
        try:
            await live.wait_healthy(http)
            await other.wait_healthy(http)
            asked = mention(QUESTION, ts="1700000800.000001", event_id="EvSlowLive")
            assert (await live.sender(http).event(asked)).status == 200
            await _wait_for_requests(anthropic_api, "route", 2)
            # Renewed past three of its 2 s leases while the other replica was sweeping.
            await _wait_for_row(
                corpus,
                "SELECT lease_until > received_at + interval '6 seconds' FROM slack_deliveries"
                " WHERE key = 'message:C111:1700000800.000001'",
            )
            anthropic_api.release()
            (answer,) = await fake_slack.wait_for("chat.update", where=_answer, timeout=180)
        finally:
            assert await other.stop() == 0, other.output()[-3000:]
            assert await live.stop() == 0, live.output()[-3000:]
    assert "HRLinks" in json.dumps(answer.params["blocks"])
    assert _told(fake_slack, "chat.update") == _told(fake_slack, "chat.postMessage") == []
    assert len(fake_slack.calls_to("chat.postMessage")) == 1  # its placeholder, once
    row = await corpus.fetchrow(
        "SELECT outcome, runs FROM slack_deliveries WHERE key = 'message:C111:1700000800.000001'"
    )
    assert tuple(row) == ("answered", 1)


async def _wait_for_row(pool: asyncpg.Pool, query: str, timeout: float = 120) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await pool.fetchval(query):
        assert asyncio.get_running_loop().time() < deadline, f"timed out on: {query}"
        await asyncio.sleep(0.1)  # the renewals are another process's
