"""Telling the askers of questions a dead process left, when they are not re-run
(bot/slack/delivery/recovery.py, through the sweep: bot/slack/delivery/sweep.py).

These rows keep no question (claimed as before questions were kept), so the sweep can
only tell their askers to ask again. Against the test's database and the fake Web API;
re-runs are in test_sweep.py, the killed-process scenario in test_killed_mid_answer.py.
"""

from __future__ import annotations

from datetime import timedelta

import asyncpg

from bot.slack.delivery.leases import Leases
from bot.slack.delivery.sweep import Sweep
from bot.slack.delivery.tasks import BackgroundTasks
from bot.slack.transport.web import build_web_client
from store.deliveries import DeliveryLog, Unfinished
from tests.bot.slack.rig import BOT_ID, BOT_TOKEN, BOT_USER, FakeSlack

# Claimed with a lease already run out: their process is dead.
EXPIRED = timedelta(seconds=-1)


async def _never_rerun(question: Unfinished) -> None:
    raise AssertionError("a row that kept no question cannot be re-run")


async def _recover(pool: asyncpg.Pool, fake: FakeSlack) -> int:
    sweep = Sweep(
        pool=pool,
        client=build_web_client(token=BOT_TOKEN, base_url=fake.base_url),
        deliveries=DeliveryLog(pool),
        leases=Leases(),
        rerun=_never_rerun,
        tasks=BackgroundTasks(),
    )
    return (await sweep.once()).told


async def test_a_placeholder_left_by_a_dead_process_is_replaced_and_one_never_posted_is_posted(
    pool: asyncpg.Pool, fake_slack: FakeSlack
) -> None:
    log = DeliveryLog(pool, lease=EXPIRED)
    await log.claim("message:C1:1.1", kind="message", reply_channel="C1", reply_thread_ts="1.1")
    await log.placeholder_posted("message:C1:1.1", ts="1.2")
    # The dead process's placeholder is in Slack (chat.update of an unknown ts fails).
    fake_slack.add_message("C1", {"type": "message", "ts": "1.2", "thread_ts": "1.1", "text": ""})
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


async def test_a_question_whose_lease_has_not_run_out_is_left_to_the_process_answering_it(
    pool: asyncpg.Pool, fake_slack: FakeSlack
) -> None:
    log = DeliveryLog(pool, lease=timedelta(seconds=300))
    await log.claim("message:C1:1.1", kind="message", reply_channel="C1", reply_thread_ts="1.1")
    assert await _recover(pool, fake_slack) == 0
    assert fake_slack.calls == []


async def test_when_slack_cannot_be_told_the_question_stays_for_the_next_sweep(
    pool: asyncpg.Pool, fake_slack: FakeSlack
) -> None:
    log = DeliveryLog(pool, lease=EXPIRED)
    await log.claim("message:C1:1.1", kind="message", reply_channel="C1", reply_thread_ts="1.1")
    fake_slack.script("chat.postMessage", status=200, body={"ok": False, "error": "not_in_channel"})
    assert await _recover(pool, fake_slack) == 0
    assert await pool.fetchval("SELECT finished_at FROM slack_deliveries") is None
    assert await _recover(pool, fake_slack) == 1


async def _claim_command(log: DeliveryLog, fake: FakeSlack, key: str, *, channel: str) -> None:
    await log.claim(
        key,
        kind="command",
        reply_channel=channel,
        asker_user_id="W222",
        response_url=fake.hook_url(key),
    )


async def _expire_response_urls(pool: asyncpg.Pool) -> None:
    """Age every question past the 30 minutes Slack honours a response_url for."""
    await pool.execute("UPDATE slack_deliveries SET received_at = now() - interval '31 minutes'")


async def test_a_private_kb_answer_is_told_through_its_response_url_replacing_the_placeholder(
    pool: asyncpg.Pool, fake_slack: FakeSlack
) -> None:
    log = DeliveryLog(pool, lease=EXPIRED)
    await _claim_command(log, fake_slack, "question:shown", channel="C1")
    await log.placeholder_shown_ephemerally("question:shown")
    await _claim_command(log, fake_slack, "question:early", channel="C1")  # died before it
    assert await _recover(pool, fake_slack) == 2
    by_hook = {call.path.rsplit("/", 1)[-1]: call.params for call in fake_slack.hooks}
    assert len(fake_slack.hooks) == 2
    assert by_hook["question:shown"]["replace_original"] is True  # the placeholder it showed
    assert by_hook["question:early"]["replace_original"] is False  # nothing shown to replace
    for params in by_hook.values():
        assert params["response_type"] == "ephemeral"
        assert "your /kb question" in params["text"] and "Please ask again" in params["text"]
    assert fake_slack.calls_to("chat.postEphemeral") == []
    assert (
        await pool.fetchval("SELECT count(*) FROM slack_deliveries WHERE response_url IS NOT NULL")
        == 0
    )  # used once, not kept


async def test_a_kb_asker_whose_response_url_expired_gets_an_ephemeral_or_else_a_dm(
    pool: asyncpg.Pool, fake_slack: FakeSlack
) -> None:
    log = DeliveryLog(pool, lease=EXPIRED)
    await _claim_command(log, fake_slack, "question:stale", channel="C1")
    await _claim_command(log, fake_slack, "question:gone", channel="C2")
    await _expire_response_urls(pool)
    fake_slack.script("chat.postEphemeral", status=200, body={"ok": True, "message_ts": "9.1"})
    fake_slack.script(
        "chat.postEphemeral", status=200, body={"ok": False, "error": "not_in_channel"}
    )
    assert await _recover(pool, fake_slack) == 2
    assert fake_slack.hooks == []  # Slack no longer honours those response_urls
    first, second = fake_slack.calls_to("chat.postEphemeral")
    assert (first.params["channel"], first.params["user"]) == ("C1", "W222")
    assert "Please ask again" in first.params["text"]
    assert second.params["channel"] == "C2"
    (dm,) = fake_slack.calls_to("chat.postMessage")
    assert dm.params["channel"] == "W222"  # the app's DM with the asker
    assert "Please ask again" in dm.params["text"]


async def test_a_placeholder_whose_ts_was_never_recorded_is_found_by_its_post_key(
    pool: asyncpg.Pool, fake_slack: FakeSlack
) -> None:
    log = DeliveryLog(pool, lease=EXPIRED)
    for key, thread in (("message:C1:1.1", "1.1"), ("message:C1:2.1", "2.1")):
        await log.claim(key, kind="message", reply_channel="C1", reply_thread_ts=thread)
    bot = {"user": BOT_USER, "bot_id": BOT_ID, "type": "message"}
    fake_slack.add_message(
        "C1",
        {
            **bot,
            "ts": "1.2",
            "thread_ts": "1.1",
            "text": "Searching…",
            "metadata": {"event_type": "kb_post", "event_payload": {"post": "message:C1:1.1/0"}},
        },
    )
    # An answer under the first post key (the assistant panel posts no placeholder), the
    # process killed before marking it answered: never overwritten.
    answer = {"event_type": "kb_answer", "event_payload": {"run_id": 7, "post": "message:C1:2.1/0"}}
    fake_slack.add_message("C1", {**bot, "ts": "2.2", "thread_ts": "2.1", "text": "an answer",
        "metadata": answer})  # fmt: skip
    assert await _recover(pool, fake_slack) == 2
    (update,) = fake_slack.calls_to("chat.update")
    assert update.params["ts"] == "1.2"
    (post,) = fake_slack.calls_to("chat.postMessage")
    assert post.params["thread_ts"] == "2.1"


async def test_a_public_kb_question_already_posted_is_told_in_its_thread(
    pool: asyncpg.Pool, fake_slack: FakeSlack
) -> None:
    log = DeliveryLog(pool, lease=EXPIRED)
    await _claim_command(log, fake_slack, "question:posted", channel="C1")
    await log.replying_in("question:posted", thread_ts="5.1")
    assert await _recover(pool, fake_slack) == 1
    (post,) = fake_slack.calls_to("chat.postMessage")
    assert (post.params["channel"], post.params["thread_ts"]) == ("C1", "5.1")
    assert fake_slack.hooks == [] and fake_slack.calls_to("chat.postEphemeral") == []


async def test_a_kb_asker_whose_ephemeral_is_refused_for_any_reason_is_told_in_the_app_s_dm(
    pool: asyncpg.Pool, fake_slack: FakeSlack
) -> None:
    log = DeliveryLog(pool, lease=EXPIRED)
    await _claim_command(log, fake_slack, "question:restricted", channel="C1")
    await _expire_response_urls(pool)
    # A workspace preference forbids the post there; the DM is still the asker's.
    fake_slack.script(
        "chat.postEphemeral", status=200, body={"ok": False, "error": "restricted_action"}
    )
    assert await _recover(pool, fake_slack) == 1
    (dm,) = fake_slack.calls_to("chat.postMessage")
    assert dm.params["channel"] == "W222"
    assert "Please ask again" in dm.params["text"]


async def test_a_kb_asker_no_way_reaches_is_told_by_the_next_sweep(
    pool: asyncpg.Pool, fake_slack: FakeSlack
) -> None:
    log = DeliveryLog(pool, lease=EXPIRED)
    await _claim_command(log, fake_slack, "question:unreachable", channel="C1")
    await _expire_response_urls(pool)
    fake_slack.script(
        "chat.postEphemeral", status=200, body={"ok": False, "error": "not_in_channel"}
    )
    fake_slack.script(
        "chat.postMessage", status=200, body={"ok": False, "error": "restricted_action"}
    )
    assert await _recover(pool, fake_slack) == 0
    assert await pool.fetchval("SELECT finished_at FROM slack_deliveries") is None
    assert await _recover(pool, fake_slack) == 1
    refused, told = fake_slack.calls_to("chat.postMessage")
    assert refused.params["channel"] == told.params["channel"] == "W222"  # the app's DM
    assert "Please ask again" in told.params["text"]
