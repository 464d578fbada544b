"""What the bot never answers: itself, edits, deletions, joins, and (by setting) other bots."""

from __future__ import annotations

import pytest

from bot.slack.access.config import BotOptions
from tests.bot.slack.rig import BOT_ID, BOT_USER, channel_message, payload


def _own_message() -> dict:
    body = channel_message(f"<@{BOT_USER}> I answered this", ts="1700000200.000001", event_id="Ev1")
    body["event"] |= {"user": BOT_USER, "bot_id": BOT_ID}
    return body


def _mentioning(name: str) -> dict:
    body = payload(name)
    for key in ("message", "previous_message"):
        if key in body["event"]:
            body["event"][key]["text"] = f"<@{BOT_USER}> How do I request annual leave?"
    body["event"]["text"] = f"<@{BOT_USER}> How do I request annual leave?"
    return body


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(_own_message(), id="own message"),
        pytest.param(_mentioning("event_message_changed_channel.json"), id="edit"),
        pytest.param(_mentioning("event_message_deleted.json"), id="deletion"),
        pytest.param(_mentioning("event_message_channel_join.json"), id="join"),
        pytest.param(_mentioning("event_message_bot.json"), id="another bot"),
    ],
)
async def test_the_bot_ignores(start_bot, fake_slack, body):
    bot = await start_bot()
    sent = await bot.sender.event(body)
    await bot.idle()
    assert sent.status == 200
    assert [c.method for c in fake_slack.calls if c.method != "auth.test"] == []


async def test_other_bots_are_answered_when_the_setting_allows(start_bot, fake_slack):
    bot = await start_bot(options=BotOptions(ignore_bots=False))
    await bot.sender.event(_mentioning("event_message_bot.json"))
    await bot.idle()
    assert len(fake_slack.calls_to("chat.postMessage")) == 1


async def test_channel_chatter_writes_nothing(start_bot, fake_slack, pool):
    bot = await start_bot()
    await bot.sender.event(
        channel_message("lunch at noon?", ts="1700000700.000001", event_id="Ev7")
    )
    await bot.idle()
    assert await pool.fetchval("SELECT count(*) FROM slack_deliveries") == 0
    assert [c.method for c in fake_slack.calls if c.method != "auth.test"] == []
