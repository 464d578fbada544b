"""The continuous question sweep (bot/slack/delivery/sweep.py): leases, renewals and one re-run.

Replicas are bots on ports sharing the test's database. A process "dies" mid-answer by
having its background work cancelled (nothing finishes its row, nothing renews its
lease); the lease "runs out" by moving it into the past, as the lease's length passing
would. The same scenario with real `kb serve` processes and SIGKILL is
test_killed_mid_answer.py.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import asyncpg
import pytest

from bot.server import build_sweep
from bot.slack.delivery.posting import with_post_key
from bot.slack.delivery.sweep import Swept
from store.deliveries import Question
from tests.bot.slack.rig import BOT_ID, BOT_USER, FakeSlack, GatedAnswerer, mention

QUESTION = "How do I request annual leave?"
STREAMED_OR_NOT = pytest.mark.parametrize("streamed", [False, True], ids=["placeholder", "stream"])


def _gated() -> tuple[list[GatedAnswerer], Any]:
    """An answerer factory for start_bot, and the gated answerers it made."""
    made: list[GatedAnswerer] = []

    def factory(runtime: Any) -> GatedAnswerer:
        made.append(GatedAnswerer(runtime.answerer()))
        return made[-1]

    return made, factory


async def _lease_runs_out(pool: asyncpg.Pool) -> None:
    await pool.execute(
        "UPDATE slack_deliveries SET lease_until = now() - interval '1 second'"
        " WHERE finished_at IS NULL"
    )


async def _dies_mid_answer(
    bot: Any, gated: GatedAnswerer, pool: asyncpg.Pool, fake: FakeSlack, *, rerun: bool = False
) -> None:
    """The process dies with the placeholder up and the answer under way. The run starts
    beside the placeholder (bot/slack/delivery/conversation.py), so both are waited for:
    the first run's placeholder recorded, a re-run's taken over (its progress shown)."""
    await gated.started.wait()
    if rerun:
        await fake.wait_for("chat.update", progress=True)
    else:
        while await pool.fetchval("SELECT count(placeholder_ts) FROM slack_deliveries") == 0:
            await asyncio.sleep(0.01)
    await bot.services.tasks.close(timeout=0)


def _answers(fake: FakeSlack) -> list[Any]:
    return [
        c
        for c in fake.calls_to("chat.update")
        if (c.params.get("metadata") or {}).get("event_type") == "kb_answer"
    ]


def _told(fake: FakeSlack) -> list[Any]:
    calls = fake.calls_to("chat.update") + fake.calls_to("chat.postMessage")
    return [c for c in calls if "Please ask again" in str(c.params.get("text"))]


async def _question_row(pool: asyncpg.Pool) -> tuple[Any, ...]:
    row = await pool.fetchrow(
        "SELECT outcome, runs, question IS NULL AS forgotten FROM slack_deliveries"
        " WHERE reply_channel IS NOT NULL"
    )
    return tuple(row)


async def test_a_live_replicas_question_is_renewed_and_another_replicas_sweep_leaves_it(
    start_bot, fake_slack: FakeSlack, corpus: asyncpg.Pool
) -> None:
    gated, factory = _gated()
    live = await start_bot(answerer=factory)
    other = await start_bot()
    await live.sender.event(mention(QUESTION, ts="1700000900.000001", event_id="EvSlow"))
    await gated[0].started.wait()
    await _lease_runs_out(corpus)  # a slow answer: longer than one lease
    assert await build_sweep(live.runtime, live.services).once() == Swept()  # its heartbeat
    assert await build_sweep(other.runtime, other.services).once() == Swept()
    gated[0].gate.set()
    await live.idle()
    await other.idle()
    (answer,) = _answers(fake_slack)
    assert "HRLinks" in json.dumps(answer.params["blocks"])
    assert _told(fake_slack) == []
    assert await _question_row(corpus) == ("answered", 1, True)


@STREAMED_OR_NOT
async def test_a_question_left_by_a_dead_process_is_rerun_once_on_a_running_replica_and_answered(
    start_bot, fake_slack: FakeSlack, corpus: asyncpg.Pool, streamed: bool
) -> None:
    # Streamed, the dead run leaves its placeholder an open stream, which Slack refuses
    # to edit (streaming_state_conflict) until it is stopped.
    fake_slack.streaming = streamed
    gated, factory = _gated()
    dead = await start_bot(answerer=factory)
    running = await start_bot()
    await dead.sender.event(mention(QUESTION, ts="1700000901.000001", event_id="EvDead"))
    await _dies_mid_answer(dead, gated[0], corpus, fake_slack)
    (placeholder,) = fake_slack.messages["C111"]
    await _lease_runs_out(corpus)
    sweep = build_sweep(running.runtime, running.services)
    assert await sweep.once() == Swept(rerun=1)
    await running.idle()
    (answer,) = _answers(fake_slack)
    # The dead run's placeholder is replaced by the answer: nothing else in the thread.
    assert answer.params["ts"] == placeholder["ts"]
    assert "HRLinks" in json.dumps(answer.params["blocks"])
    assert len(fake_slack.messages["C111"]) == 1  # no second placeholder or stream
    assert _told(fake_slack) == []
    assert await _question_row(corpus) == ("answered", 2, True)
    assert await sweep.once() == Swept()  # once


@STREAMED_OR_NOT
async def test_a_question_whose_rerun_dies_too_is_told_to_ask_again_in_one_line(
    start_bot, fake_slack: FakeSlack, corpus: asyncpg.Pool, streamed: bool
) -> None:
    # Streamed, the dead run leaves its placeholder an open stream, which Slack refuses
    # to edit (streaming_state_conflict) until it is stopped.
    fake_slack.streaming = streamed
    first, first_factory = _gated()
    second, second_factory = _gated()
    dead = await start_bot(answerer=first_factory)
    rerun = await start_bot(answerer=second_factory)
    last = await start_bot()
    await dead.sender.event(mention(QUESTION, ts="1700000902.000001", event_id="EvTwice"))
    await _dies_mid_answer(dead, first[0], corpus, fake_slack)
    (placeholder,) = fake_slack.messages["C111"]
    await _lease_runs_out(corpus)
    assert await build_sweep(rerun.runtime, rerun.services).once() == Swept(rerun=1)
    await _dies_mid_answer(rerun, second[0], corpus, fake_slack, rerun=True)
    await _lease_runs_out(corpus)
    sweep = build_sweep(last.runtime, last.services)
    assert await sweep.once() == Swept(told=1)
    await last.idle()
    (told,) = _told(fake_slack)
    assert told.params["ts"] == placeholder["ts"]  # the placeholder, replaced
    assert _answers(fake_slack) == []
    assert await _question_row(corpus) == ("abandoned", 2, True)
    assert await sweep.once() == Swept()


async def test_a_question_whose_process_died_while_its_placeholder_was_on_its_way_is_rerun_into_it(
    start_bot, fake_slack: FakeSlack, corpus: asyncpg.Pool
) -> None:
    # The run starts beside the placeholder: the process can die with the run under way
    # and the placeholder's post not yet answered. Slack posts it after the death, so its
    # ts is never recorded; the re-run finds it by its post key and answers in it.
    fake_slack.streaming = False
    gated, factory = _gated()
    dead = await start_bot(answerer=factory)
    running = await start_bot()
    held: list[Any] = []

    async def on_its_way(call: Any) -> None:
        held.append(call)
        await asyncio.Event().wait()  # never answered: the process dies first

    fake_slack.on_call["chat.postMessage"] = on_its_way
    await dead.sender.event(mention(QUESTION, ts="1700000903.000001", event_id="EvLate"))
    await asyncio.wait_for(gated[0].started.wait(), 10)  # begun beside its placeholder,
    while not held:  # which reached Slack and waits for its answer
        await asyncio.sleep(0.01)
    await dead.services.tasks.close(timeout=0)
    del fake_slack.on_call["chat.postMessage"]
    (post,) = held
    metadata = post.params["metadata"]
    late = {
        "type": "message", "ts": "1700000903.000500", "user": BOT_USER, "bot_id": BOT_ID,
        "thread_ts": "1700000903.000001", "text": post.params["text"],
        "metadata": json.loads(metadata) if isinstance(metadata, str) else metadata,
    }  # fmt: skip
    fake_slack.add_message("C111", late)  # Slack posted it after the process died
    await _lease_runs_out(corpus)
    assert await corpus.fetchval("SELECT placeholder_ts FROM slack_deliveries") is None
    sweep = build_sweep(running.runtime, running.services)
    assert await sweep.once() == Swept(rerun=1)
    await running.idle()
    (answer,) = _answers(fake_slack)
    assert answer.params["ts"] == late["ts"]  # the late placeholder, answered in place
    assert "HRLinks" in json.dumps(answer.params["blocks"])
    assert len(fake_slack.messages["C111"]) == 1  # no second placeholder
    assert _told(fake_slack) == []
    assert await _question_row(corpus) == ("answered", 2, True)


async def _kb_question_left_before_its_post(bot: Any, fake: FakeSlack, key: str) -> None:
    """The row a `/kb` question leaves when its process dies right after the claim
    (slash.py claims before it posts the question): no thread recorded."""
    claimed = await bot.services.deliveries.claim(
        key,
        kind="command",
        reply_channel="C111",
        asker_user_id="W222",
        response_url=fake.hook_url(),
        question=Question(team_id="T111", user_id="W222", text=QUESTION, surface="command"),
    )
    assert claimed


async def test_a_kb_question_killed_before_it_was_posted_is_posted_and_answered_by_the_rerun(
    start_bot, fake_slack: FakeSlack, corpus: asyncpg.Pool
) -> None:
    running = await start_bot()
    await _kb_question_left_before_its_post(running, fake_slack, "command:killed-early")
    await _lease_runs_out(corpus)
    assert await build_sweep(running.runtime, running.services).once() == Swept(rerun=1)
    await running.idle()
    question, placeholder = fake_slack.calls_to("chat.postMessage")
    assert "thread_ts" not in question.params and QUESTION in question.params["text"]
    (asked,) = fake_slack.messages["C111"][:1]
    assert placeholder.params["thread_ts"] == asked["ts"]  # answered in the question's thread
    (answer,) = _answers(fake_slack)
    assert "HRLinks" in json.dumps(answer.params["blocks"])
    assert _told(fake_slack) == []
    assert await _question_row(corpus) == ("answered", 2, True)


async def test_a_kb_question_posted_but_not_recorded_is_found_not_posted_twice(
    start_bot, fake_slack: FakeSlack, corpus: asyncpg.Pool
) -> None:
    running = await start_bot()
    key = "command:killed-after-post"
    await _kb_question_left_before_its_post(running, fake_slack, key)
    metadata = with_post_key({"event_type": "kb_question", "event_payload": {}}, f"{key}/question")
    posted = {
        "type": "message", "ts": "1700000950.000100", "user": BOT_USER, "bot_id": BOT_ID,
        "text": f"<@W222> asked: {QUESTION}", "metadata": metadata,
    }  # fmt: skip
    fake_slack.add_message("C111", posted)  # the first run posted it, then died
    await _lease_runs_out(corpus)
    assert await build_sweep(running.runtime, running.services).once() == Swept(rerun=1)
    await running.idle()
    (placeholder,) = fake_slack.calls_to("chat.postMessage")  # the question is not posted again
    assert placeholder.params["thread_ts"] == posted["ts"]
    (answer,) = _answers(fake_slack)
    assert "HRLinks" in json.dumps(answer.params["blocks"])
