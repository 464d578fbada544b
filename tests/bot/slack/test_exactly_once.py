"""Exactly once: retries, duplicate deliveries to two instances, and mention + message."""

from __future__ import annotations

import asyncio

from tests.bot.slack.rig import channel_message, mention, payload

QUESTION = "How do I request annual leave?"


async def test_a_retry_with_the_same_event_id_produces_one_answer(start_bot, fake_slack):
    bot = await start_bot()
    event = mention(QUESTION, ts="1700000001.000001", event_id="EvRetry")
    first = await bot.sender.event(event)
    retry = await bot.sender.event(event, retry_num=1)
    await bot.idle()
    assert (first.status, retry.status) == (200, 200)
    assert len(fake_slack.calls_to("chat.postMessage")) == 1
    assert len(fake_slack.calls_to("chat.update")) == 1


async def test_two_instances_sharing_a_database_answer_a_duplicate_delivery_once(
    start_bot, fake_slack
):
    first, second = await start_bot(), await start_bot()
    event = mention(QUESTION, ts="1700000002.000001", event_id="EvTwice")
    sent = await asyncio.gather(first.sender.event(event), second.sender.event(event))
    await asyncio.gather(first.idle(), second.idle())
    assert [s.status for s in sent] == [200, 200]
    assert len(fake_slack.calls_to("chat.postMessage")) == 1
    assert len(fake_slack.calls_to("chat.update")) == 1


async def test_a_message_that_is_both_a_mention_and_a_message_event_is_answered_once(
    start_bot, fake_slack
):
    bot = await start_bot()
    ts = "1700000003.000001"
    as_mention = mention(QUESTION, ts=ts, event_id="EvMention")
    as_message = channel_message(f"<@W111> {QUESTION}", ts=ts, event_id="EvMessage")
    await asyncio.gather(bot.sender.event(as_message), bot.sender.event(as_mention))
    await bot.idle()
    assert len(fake_slack.calls_to("chat.postMessage")) == 1
    assert len(fake_slack.calls_to("chat.update")) == 1


async def test_a_retried_event_that_is_not_a_message_is_handled_once(start_bot, fake_slack):
    bot = await start_bot()
    opened = payload("event_app_home_opened_home.json")
    await bot.sender.event(opened)
    await bot.sender.event(opened, retry_num=1)
    await bot.sender.event(opened, retry_num=2)
    await bot.idle()
    assert len(fake_slack.calls_to("views.publish")) == 1
