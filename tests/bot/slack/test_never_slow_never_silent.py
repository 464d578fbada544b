"""Ack first, always; a placeholder at once; failures and rate limits never leave silence."""

from __future__ import annotations

import asyncio
import json

from bot.slack.access.config import BotOptions
from tests.bot.slack.rig import FailingAnswerer, GatedAnswerer, SteppingAnswerer, mention

QUESTION = "How do I request annual leave?"


async def test_the_ack_is_sent_before_a_slow_agent_finishes(start_bot, fake_slack):
    agents: list[GatedAnswerer] = []

    def slow(runtime):
        agents.append(GatedAnswerer(runtime.answerer()))
        return agents[-1]

    bot = await start_bot(answerer=slow)
    sent = await bot.sender.event(mention(QUESTION, ts="1700000010.000001", event_id="EvSlow"))
    assert sent.status == 200
    await agents[0].started.wait()
    (placeholder,) = await fake_slack.wait_for("chat.postMessage")
    assert "Searching" in placeholder.params["text"]
    assert fake_slack.calls_to("chat.update") == []  # acked and placeholder up; no answer yet
    agents[0].gate.set()
    (update,) = await fake_slack.wait_for("chat.update")
    await bot.idle()
    assert "HRLinks" in json.dumps(update.params["blocks"])


async def test_a_failure_after_the_ack_replaces_the_placeholder_with_one_line_and_the_run_id(
    start_bot, fake_slack, pool
):
    failing = FailingAnswerer(pool)
    bot = await start_bot(answerer=lambda runtime: failing)
    await bot.sender.event(mention(QUESTION, ts="1700000011.000001", event_id="EvFail"))
    await bot.idle()
    assert len(fake_slack.calls_to("chat.postMessage")) == 1
    (update,) = fake_slack.calls_to("chat.update")
    assert update.params["ts"] == fake_slack.messages["C111"][0]["ts"]  # the placeholder
    run_id = failing.run_ids[0]
    assert f"run {run_id}" in update.params["text"]
    shown = json.dumps(update.params)
    assert "Traceback" not in shown and "RuntimeError" not in shown and "fell over" not in shown
    status = await pool.fetchval("SELECT status FROM agent_runs WHERE id = $1", run_id)
    assert status == "failed"


class CancelledAnswerer(GatedAnswerer):
    """A gated answerer that notes when the run it is in was cancelled."""

    cancelled = False

    async def answer(self, question, **kwargs):
        try:
            return await super().answer(question, **kwargs)
        except asyncio.CancelledError:
            self.cancelled = True
            raise


async def test_a_placeholder_slack_refuses_stops_the_run_begun_beside_it_and_shows_one_line(
    start_bot, fake_slack, pool
):
    """The run starts while the placeholder is posted: when the post fails, the run is
    stopped before the failure is shown (no answer comes later) and one line says so."""
    gated: list[CancelledAnswerer] = []

    def gated_answerer(runtime):
        gated.append(CancelledAnswerer(runtime.answerer()))
        return gated[0]

    async def refuse_once_the_run_began(call):
        await gated[0].started.wait()

    fake_slack.on_call["chat.postMessage"] = refuse_once_the_run_began
    fake_slack.script("chat.postMessage", status=200, body={"ok": False, "error": "fatal_error"})
    bot = await start_bot(answerer=gated_answerer, options=BotOptions(stream_answers=False))
    await bot.sender.event(mention(QUESTION, ts="1700000012.000001", event_id="EvNoPlace"))
    await bot.idle()
    assert gated[0].cancelled
    posts = fake_slack.calls_to("chat.postMessage")
    assert len(posts) == 2  # the refused placeholder, then the one line
    assert "no run was recorded" in posts[1].params["text"]
    assert not fake_slack.calls_to("chat.update")
    assert await pool.fetchval("SELECT count(*) FROM agent_runs") == 0


async def test_a_429_on_chat_update_waits_out_retry_after_then_succeeds(start_bot, fake_slack):
    bot = await start_bot()
    fake_slack.script(
        "chat.update",
        status=429,
        body={"ok": False, "error": "ratelimited"},
        **{"Retry-After": "1"},
    )
    await bot.sender.event(mention(QUESTION, ts="1700000012.000001", event_id="Ev429"))
    limited, succeeded = await fake_slack.wait_for("chat.update", count=2)
    await bot.idle()
    assert succeeded.at - limited.at >= 1.0
    assert succeeded.params["blocks"] == limited.params["blocks"]
    assert fake_slack.messages["C111"][0]["blocks"] == succeeded.params["blocks"]


async def test_a_5xx_from_slack_is_retried(start_bot, fake_slack):
    bot = await start_bot()
    fake_slack.script("chat.postMessage", status=503, body={"ok": False, "error": "unavailable"})
    await bot.sender.event(mention(QUESTION, ts="1700000013.000001", event_id="Ev503"))
    await bot.idle()
    assert len(fake_slack.calls_to("chat.postMessage")) == 2
    assert len(fake_slack.calls_to("chat.update")) == 1


async def test_a_long_run_shows_the_step_it_is_on_in_the_placeholder(start_bot, fake_slack):
    agents: list[SteppingAnswerer] = []

    def stepping(runtime):
        agents.append(SteppingAnswerer(runtime.answerer(), "Searching: annual leave request"))
        return agents[-1]

    bot = await start_bot(answerer=stepping)
    await bot.sender.event(mention(QUESTION, ts="1700000014.000001", event_id="EvStep"))
    (step,) = await fake_slack.wait_for(
        "chat.update",
        where=lambda c: "annual leave request" in json.dumps(c.params["blocks"]),
        progress=True,
    )
    assert "Searching" in step.params["text"]
    agents[0].gate.set()
    await bot.idle()
    final = fake_slack.calls_to("chat.update")[-1]
    assert final.params["metadata"]["event_type"] == "kb_answer"
    assert "annual leave request" not in json.dumps(final.params["blocks"])
