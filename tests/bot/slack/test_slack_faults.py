"""Slack's Web API failing while an answer is shown: retried, never lost, never doubled.

Complements tests/bot/slack/test_never_slow_never_silent.py (a 429 on chat.update, a 503
on the placeholder's chat.postMessage): here a 429 on chat.postMessage and 5xx on
chat.update. Each fault is one scripted answer of the fake Web API; the bot's client
retries (slack_sdk's handlers: Retry-After for 429, backoff for 5xx) and the thread ends
with one placeholder replaced by one answer.

A 5xx after Slack has in fact posted the message is a different case: the client cannot
tell it from a 5xx before, so the retry posts a second placeholder. See the README's
"Faults": Slack documents no idempotency key for chat.postMessage.
"""

from __future__ import annotations

import pytest

from tests.bot.slack.rig import FakeSlack, mention

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
