"""Payloads as Slack sends them, each copied from the docs page its `_source` names
(tests/fixtures/slack/), sent signed through the running app's /slack/events: an escaped
mention, a mention from a partner workspace in a shared channel, a guest's mention, a
group DM question, and a "Why this answer?" click with its response_url."""

from __future__ import annotations

import copy
import json

from bot.slack.render import action_ids as ids
from bot.slack.render.notices import OUTSIDER
from tests.bot.slack.rig import RecordingAnswerer, buttons, mention, payload


def _recording(answerers: list[RecordingAnswerer]):
    def wrap(runtime):
        answerers.append(RecordingAnswerer(runtime.answerer()))
        return answerers[-1]

    return wrap


def _reply(fake_slack, channel: str, ts: str) -> dict:
    return next(m for m in fake_slack.messages[channel] if m.get("thread_ts") == ts)


async def test_an_escaped_mention_reaches_the_agent_decoded_once(start_bot, fake_slack):
    answerers: list[RecordingAnswerer] = []
    bot = await start_bot(answerer=_recording(answerers))
    body = payload("event_app_mention_escaped.json")
    assert (await bot.sender.event(body)).status == 200
    await bot.idle()
    (call,) = answerers[0].calls
    assert call["question"] == "Does the R&D team get <more> annual leave?"
    assert _reply(fake_slack, "C111", body["event"]["ts"])["blocks"]


async def test_a_mention_from_a_partner_workspace_in_a_shared_channel_gets_one_line(
    start_bot, fake_slack
):
    answerers: list[RecordingAnswerer] = []
    bot = await start_bot(answerer=_recording(answerers))
    fake_slack.joined.add("C0SHARED")  # the bot was invited to the shared channel
    body = payload("event_app_mention_slack_connect.json")
    await bot.sender.event(body)
    await bot.idle()
    assert answerers[0].calls == []
    assert _reply(fake_slack, "C0SHARED", body["event"]["ts"])["text"] == OUTSIDER


async def test_a_guests_mention_gets_one_line(start_bot, fake_slack):
    answerers: list[RecordingAnswerer] = []
    bot = await start_bot(answerer=_recording(answerers))
    guest = payload("web_users.info_guest.json")["user"]
    fake_slack.users[guest["id"]] = guest
    body = payload("event_app_mention_guest.json")
    await bot.sender.event(body)
    await bot.idle()
    assert answerers[0].calls == []
    assert _reply(fake_slack, "C111", body["event"]["ts"])["text"] == OUTSIDER


async def test_a_question_in_a_group_dm_is_answered_in_its_thread(start_bot, fake_slack):
    bot = await start_bot()
    body = payload("event_message_mpim.json")
    channel = body["event"]["channel"]
    fake_slack.kinds[channel] = "mpim"
    await bot.sender.event(body)
    await bot.idle()
    reply = _reply(fake_slack, channel, body["event"]["ts"])
    assert "HRLinks" in json.dumps(reply["blocks"])


async def test_why_this_answer_from_a_real_click_payload_shows_the_trace_to_the_clicker(
    start_bot, fake_slack
):
    bot = await start_bot()
    ts = "1700000900.000001"
    await bot.sender.event(mention("How do I request annual leave?", ts=ts, event_id="EvWhyFile"))
    await bot.idle()
    answer = copy.deepcopy(_reply(fake_slack, "C111", ts))
    click = payload("interactive_block_actions_why.json")
    click["message"] = answer
    click["container"]["message_ts"] = answer["ts"]
    click["actions"][0]["value"] = buttons(answer["blocks"])[ids.WHY]["value"]
    click["response_url"] = fake_slack.hook_url("why")
    await bot.sender.interaction(click)
    await bot.idle()
    (trace,) = fake_slack.calls_to("chat.postEphemeral")
    assert trace.params["user"] == "W222" and trace.params["channel"] == "C111"
    assert "HRLinks" in json.dumps(trace.params["blocks"])
