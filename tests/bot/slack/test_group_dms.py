"""Group DMs (mpim): the bot, added to one and @mentioned, answers like in a channel, and a
follow-up in its thread there is read with the thread's history, as in a channel.

Slack sends a group DM's messages as `message.mpim` (channel_type "mpim") and reads its
threads only with `mpim:history`; the fake Slack answers `missing_scope` to a history read
the manifest's scopes don't cover, as Slack does, so a manifest without it fails here
(tests/bot/slack/test_manifest.py checks the `message.mpim` subscription).
"""

from __future__ import annotations

import json

from tests.bot.slack.rig import RecordingAnswerer, mention, payload, user_message
from tests.bot.slack.test_conversations import FIRST, FOLLOW_UP, recording

GROUP_DM = "G0MPIM4KB"  # a group DM's id may start with G or C; its events say "mpim"


def _in_group_dm(body: dict) -> dict:
    body["event"]["channel"] = GROUP_DM
    return body


async def test_a_follow_up_in_the_bot_s_thread_in_a_group_dm_is_answered_with_its_history(
    start_bot, fake_slack
):
    fake_slack.kinds[GROUP_DM] = "mpim"
    answerers: list[RecordingAnswerer] = []
    # Two instances: the second has cached nothing, so it must read the thread.
    first_bot = await start_bot(answerer=recording(answerers))
    first = _in_group_dm(mention(FIRST, ts="1700000200.000001", event_id="EvMpim1"))
    fake_slack.add_message(GROUP_DM, user_message(first))
    await first_bot.sender.event(first)
    await first_bot.idle()
    second_bot = await start_bot(answerer=recording(answerers))
    follow_up = payload("event_message_channel_in_thread.json")
    follow_up["event_id"] = "EvMpim2"
    follow_up["event"] |= {
        "text": FOLLOW_UP,
        "ts": "1700000200.000900",
        "event_ts": "1700000200.000900",
        "thread_ts": "1700000200.000001",
        "channel": GROUP_DM,
        "channel_type": "mpim",
    }
    fake_slack.add_message(GROUP_DM, user_message(follow_up))
    await second_bot.sender.event(follow_up)
    await second_bot.idle()
    (read,) = fake_slack.calls_to("conversations.replies")
    assert read.params["channel"] == GROUP_DM
    history = answerers[1].calls[0]["history"]
    assert [turn.role for turn in history] == ["user", "bot"]
    replies = fake_slack.calls_to("chat.update")
    assert len(replies) == 2 and all(r.params["channel"] == GROUP_DM for r in replies)
    assert "couldn't" not in json.dumps(replies[-1].params["blocks"]).casefold()


async def test_a_thread_whose_history_can_t_be_read_is_still_answered(start_bot, fake_slack):
    # An app installed before a scope was added has a token without it: Slack refuses the
    # history read. The follow-up is answered as a question of its own, not failed.
    fake_slack.kinds[GROUP_DM] = "mpim"
    fake_slack.granted = fake_slack.granted - {"mpim:history"}
    answerers: list[RecordingAnswerer] = []
    bot = await start_bot(answerer=recording(answerers))
    follow_up = payload("event_message_channel_in_thread.json")
    follow_up["event_id"] = "EvMpim3"
    follow_up["event"] |= {
        "text": f"<@W111> {FIRST}",
        "ts": "1700000300.000900",
        "event_ts": "1700000300.000900",
        "thread_ts": "1700000300.000001",
        "channel": GROUP_DM,
        "channel_type": "mpim",
    }
    await bot.sender.event(follow_up)
    await bot.idle()
    assert fake_slack.calls_to("conversations.replies")  # tried, and refused
    assert answerers[0].calls[0]["history"] == []
    (reply,) = fake_slack.calls_to("chat.update")
    assert "HRLinks" in json.dumps(reply.params["blocks"])
