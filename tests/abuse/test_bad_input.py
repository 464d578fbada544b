"""Bad input through the real Slack path: each question gets one polite, bounded reply.

Oversized (40,000 characters), an empty mention, only emoji, other languages, mrkdwn and
HTML tricks: one placeholder and one final message in the asker's thread, within Block
Kit's limits, no traceback, no live mention, within a time bound.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any

import pytest

from bot.slack.access.config import BotOptions
from bot.slack.render.limits import violations
from tests.bot.slack.rig import BOT_USER, mention, user_message

BOUND_SECONDS = 60  # per question, on a loaded 2-core machine; an answer takes ~1 s
OPTIONS = BotOptions(escalation_channel="CESC", max_question_chars=4000)

QUESTIONS = {
    "only emoji": "🏖️🏖️🏖️ 🤔❓",
    "German": "Wie beantrage ich Jahresurlaub? Muss mein Vorgesetzter zustimmen?",
    "Japanese": "年次休暇はどのように申請しますか？",
    "mrkdwn and HTML": (
        "<!here> <!channel> <@U123> <#C999|general> &lt;b&gt; <script>alert(1)</script> "
        "`rm -rf /` ```code``` *bold* _it_ ~gone~ > quote <https://evil.example|leave> "
        "How do I request annual leave?"
    ),
    "control characters": "annual\u202e leave\x00\x07 request\ud800?",
}


async def put(bot, fake_slack, text: str, *, ts: str, raw: bool = False) -> list[Any]:
    """Send a mention with `text` (raw: the whole message text) and wait for the bot."""
    body = mention("", ts=ts, event_id=f"Ev{ts}")
    body["event"]["text"] = text if raw else f"<@{BOT_USER}> {text}"
    fake_slack.add_message("C111", user_message(body))
    started = time.monotonic()
    sent = await bot.sender.event(body)
    assert sent.status == 200
    await asyncio.wait_for(bot.idle(), BOUND_SECONDS)
    assert time.monotonic() - started < BOUND_SECONDS
    return [m for m in fake_slack.messages["C111"] if m.get("thread_ts") == ts]


def assert_one_polite_reply(fake_slack, replies: list[Any], *, ts: str) -> dict[str, Any]:
    (reply,) = replies  # one message: the placeholder replaced, nothing posted beside it
    assert violations(text=reply["text"], blocks=reply["blocks"]) == []
    shown = json.dumps(reply)
    assert "Traceback" not in shown and "Error" not in shown and "went wrong" not in shown
    assert not re.search(r"<[!@#][^<>]*>", reply["text"] + json.dumps(reply["blocks"]))
    channels = {c.params["channel"] for c in fake_slack.calls if c.method.startswith("chat.")}
    assert channels <= {"C111"}
    return reply


@pytest.mark.parametrize("kind", sorted(QUESTIONS))
async def test_odd_questions_get_one_bounded_reply_in_the_thread(start_bot, fake_slack, kind):
    bot = await start_bot(options=OPTIONS)
    ts = "1700000600.000001"
    replies = await put(bot, fake_slack, QUESTIONS[kind], ts=ts)
    reply = assert_one_polite_reply(fake_slack, replies, ts=ts)
    assert (reply.get("metadata") or {}).get("event_type") == "kb_answer"  # a real answer


async def test_a_40000_character_question_is_declined_politely_with_the_limit(
    start_bot, fake_slack
):
    bot = await start_bot(options=OPTIONS)
    ts = "1700000601.000001"
    huge = ("How do I request annual leave? " * 1300)[:40_000]
    replies = await put(bot, fake_slack, huge, ts=ts)
    reply = assert_one_polite_reply(fake_slack, replies, ts=ts)
    assert "40,000 characters" in reply["text"] and "4,000" in reply["text"]
    assert await bot.runtime.pool.fetchval("SELECT count(*) FROM agent_runs") == 0


async def test_a_question_at_the_limit_is_answered(start_bot, fake_slack):
    bot = await start_bot(options=BotOptions(max_question_chars=200))
    ts = "1700000602.000001"
    question = "How do I request annual leave? ".ljust(200, "?")
    replies = await put(bot, fake_slack, question, ts=ts)
    reply = assert_one_polite_reply(fake_slack, replies, ts=ts)
    assert "HRLinks" in json.dumps(reply["blocks"])


async def test_an_empty_mention_gets_the_usage_once(start_bot, fake_slack):
    bot = await start_bot(options=OPTIONS)
    ts = "1700000603.000001"
    replies = await put(bot, fake_slack, f"<@{BOT_USER}>  ", ts=ts, raw=True)
    reply = assert_one_polite_reply(fake_slack, replies, ts=ts)
    assert "How to ask slack-kb" in reply["text"]
    # Slack delivering it again (a retry) gets nothing more.
    body = mention("", ts=ts, event_id=f"Ev{ts}")
    body["event"]["text"] = f"<@{BOT_USER}>"
    await bot.sender.event(body, retry_num=1)
    await bot.idle()
    assert len([m for m in fake_slack.messages["C111"] if m.get("thread_ts") == ts]) == 1
