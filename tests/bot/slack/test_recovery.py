"""Start-up recovery of questions acked but never answered (bot/slack/recovery.py).

Against the test's database and the fake Web API; the killed-process scenario itself is
tests/bot/slack/test_killed_mid_answer.py.
"""

from __future__ import annotations

from datetime import timedelta

import asyncpg

from bot.slack.recovery import recover_unanswered
from bot.slack.web import build_web_client
from store.deliveries import DeliveryLog
from tests.bot.slack.rig import BOT_TOKEN, FakeSlack


async def _recover(pool: asyncpg.Pool, fake: FakeSlack, older_than: float = 0) -> int:
    return await recover_unanswered(
        pool=pool,
        client=build_web_client(token=BOT_TOKEN, base_url=fake.base_url),
        deliveries=DeliveryLog(pool),
        older_than=timedelta(seconds=older_than),
    )


async def test_a_placeholder_left_by_a_dead_process_is_replaced_and_one_never_posted_is_posted(
    pool: asyncpg.Pool, fake_slack: FakeSlack
) -> None:
    log = DeliveryLog(pool)
    await log.claim("message:C1:1.1", kind="message", reply_channel="C1", reply_thread_ts="1.1")
    await log.placeholder_posted("message:C1:1.1", ts="1.2")
    await log.claim("message:C2:2.1", kind="message", reply_channel="C2", reply_thread_ts="2.1")
    await log.claim("message:C3:3.1", kind="message", reply_channel="C3", reply_thread_ts="3.1")
    await log.finish("message:C3:3.1", outcome="answered")
    await log.claim("Ev1", kind="event")  # not a question: nothing to tell anyone
    assert await _recover(pool, fake_slack) == 2
    (update,) = fake_slack.calls_to("chat.update")
    assert (update.params["channel"], update.params["ts"]) == ("C1", "1.2")
    assert "Please ask again" in update.params["text"]
    (post,) = fake_slack.calls_to("chat.postMessage")
    assert (post.params["channel"], post.params["thread_ts"]) == ("C2", "2.1")
    assert "Please ask again" in post.params["text"]
    outcomes = dict(await pool.fetch("SELECT key, outcome FROM slack_deliveries"))
    assert outcomes == {
        "message:C1:1.1": "abandoned",
        "message:C2:2.1": "abandoned",
        "message:C3:3.1": "answered",
        "Ev1": None,
    }
    assert await _recover(pool, fake_slack) == 0  # told once


async def test_a_question_younger_than_the_threshold_is_left_to_the_process_answering_it(
    pool: asyncpg.Pool, fake_slack: FakeSlack
) -> None:
    log = DeliveryLog(pool)
    await log.claim("message:C1:1.1", kind="message", reply_channel="C1", reply_thread_ts="1.1")
    assert await _recover(pool, fake_slack, older_than=300) == 0
    assert fake_slack.calls == []


async def test_when_slack_cannot_be_told_the_question_stays_for_the_next_start_up(
    pool: asyncpg.Pool, fake_slack: FakeSlack
) -> None:
    log = DeliveryLog(pool)
    await log.claim("message:C1:1.1", kind="message", reply_channel="C1", reply_thread_ts="1.1")
    fake_slack.script("chat.postMessage", status=200, body={"ok": False, "error": "not_in_channel"})
    assert await _recover(pool, fake_slack) == 0
    assert await pool.fetchval("SELECT finished_at FROM slack_deliveries") is None
    assert await _recover(pool, fake_slack) == 1
