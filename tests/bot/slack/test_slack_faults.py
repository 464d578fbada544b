"""Slack's Web API failing while an answer is shown: retried, never lost, never doubled.

Complements tests/bot/slack/test_never_slow_never_silent.py (a 429 on chat.update, a 503
on the placeholder's chat.postMessage): here a 429 on chat.postMessage and 5xx on
chat.update. Each fault is one scripted answer of the fake Web API; the bot's client
retries (slack_sdk's handlers: Retry-After for 429, backoff for 5xx) and the thread ends
with one placeholder replaced by one answer.

A 5xx after Slack has in fact posted the message looks the same to the client as one
before; the fake carries the post out and then answers 500. The bot's posts carry a post
key in their metadata, and before a retry it reads the thread (or, for the `/kb`
question, the channel) for that key: the message is posted once, and the answer
replaces that one placeholder.
"""

from __future__ import annotations

import pytest

from tests.bot.slack.rig import FakeSlack, mention, slash_command

QUESTION = "How do I request annual leave?"


def _answers(fake: FakeSlack) -> list:
    return [
        c
        for c in fake.calls_to("chat.update")
        if (c.params.get("metadata") or {}).get("event_type") == "kb_answer"
    ]


async def test_a_429_on_the_placeholder_post_waits_out_retry_after_and_posts_it_once(
    start_bot, fake_slack: FakeSlack
) -> None:
    bot = await start_bot()
    fake_slack.script(
        "chat.postMessage", status=429, body={"ok": False, "error": "ratelimited"},
        **{"Retry-After": "1"},
    )  # fmt: skip
    await bot.sender.event(mention(QUESTION, ts="1700001000.000001", event_id="EvPost429"))
    limited, posted = await fake_slack.wait_for("chat.postMessage", count=2)
    await fake_slack.wait_for("chat.update")
    await bot.idle()
    assert posted.at - limited.at >= 1.0
    (placeholder,) = fake_slack.messages["C111"]  # one message in the thread
    (answer,) = _answers(fake_slack)
    assert answer.params["ts"] == placeholder["ts"]


@pytest.mark.parametrize("status", [500, 503])
async def test_a_5xx_on_the_answer_update_is_retried_and_the_answer_shown_once(
    status: int, start_bot, fake_slack: FakeSlack
) -> None:
    bot = await start_bot()
    fake_slack.script("chat.update", status=status, body={"ok": False, "error": "fatal_error"})
    await bot.sender.event(mention(QUESTION, ts="1700001001.000001", event_id=f"EvUp{status}"))
    failed, shown = await fake_slack.wait_for("chat.update", count=2)
    await bot.idle()
    assert failed.params["blocks"] == shown.params["blocks"]
    assert len(fake_slack.calls_to("chat.update")) == 2
    (placeholder,) = fake_slack.messages["C111"]
    assert placeholder["metadata"]["event_type"] == "kb_answer"
    assert len(fake_slack.calls_to("chat.postMessage")) == 1


def _posted_with_metadata(fake: FakeSlack, method: str) -> list:
    return [
        c
        for c in fake.calls_to(method)
        if str(c.params.get("include_all_metadata")) in ("1", "true", "True")
    ]


async def test_a_5xx_after_slack_posted_the_placeholder_keeps_that_one_and_answers_once(
    start_bot, fake_slack: FakeSlack
) -> None:
    bot = await start_bot()
    fake_slack.script_after("chat.postMessage", status=500, body={"ok": False, "error": "fatal"})
    await bot.sender.event(mention(QUESTION, ts="1700001002.000001", event_id="EvPostedThen500"))
    await fake_slack.wait_for("chat.update")
    await bot.idle()
    (placeholder,) = fake_slack.messages["C111"]  # no second "Searching…"
    (answer,) = _answers(fake_slack)
    assert answer.params["ts"] == placeholder["ts"]
    assert "HRLinks" in str(placeholder["blocks"])
    assert len(fake_slack.calls_to("chat.postMessage")) == 1  # found, not posted again
    (looked,) = _posted_with_metadata(fake_slack, "conversations.replies")
    assert looked.params["ts"] == "1700001002.000001"


async def test_a_5xx_after_slack_posted_the_kb_question_posts_it_and_its_answer_once(
    start_bot, fake_slack: FakeSlack
) -> None:
    bot = await start_bot()
    fake_slack.script_after("chat.postMessage", status=503, body={"ok": False, "error": "down"})
    await bot.sender.command(slash_command(QUESTION, response_url=fake_slack.hook_url()))
    await fake_slack.wait_for("chat.update")
    await bot.idle()
    top = [m for m in fake_slack.messages["C111"] if "thread_ts" not in m]
    (question,) = top  # the visible question, once
    assert question["text"] == f"<@W222> asked: {QUESTION}"
    (placeholder,) = [m for m in fake_slack.messages["C111"] if "thread_ts" in m]
    assert placeholder["thread_ts"] == question["ts"]
    (answer,) = _answers(fake_slack)
    assert answer.params["ts"] == placeholder["ts"]
    assert _posted_with_metadata(fake_slack, "conversations.history")
    assert fake_slack.hooks == []  # no "something went wrong" to the asker
