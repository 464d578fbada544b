"""Thread follow-ups with the thread's earlier turns, DMs, and help channels."""

from __future__ import annotations

import json

from bot.slack.access.config import BotOptions
from tests.bot.slack.rig import RecordingAnswerer, channel_message, mention, payload, user_message

FIRST = "How do I request annual leave?"
FOLLOW_UP = "And can sick leave be requested after the fact?"


def recording(store: list[RecordingAnswerer]):
    def make(runtime):
        store.append(RecordingAnswerer(runtime.answerer()))
        return store[-1]

    return make


async def _ask_first(bot, fake_slack, ts: str) -> None:
    first = mention(FIRST, ts=ts, event_id="EvFirst")
    fake_slack.add_message("C111", user_message(first))
    await bot.sender.event(first)
    await bot.idle()


def _follow_up(ts: str, thread_ts: str, text: str = FOLLOW_UP) -> dict:
    body = payload("event_message_channel_in_thread.json")
    body["event_id"] = f"Ev{ts}"
    body["event"] |= {"text": text, "ts": ts, "event_ts": ts, "thread_ts": thread_ts}
    body["event"]["channel"] = "C111"
    return body


async def test_a_reply_in_a_thread_the_bot_answered_is_a_follow_up_with_the_earlier_turns(
    start_bot, fake_slack
):
    answerers: list[RecordingAnswerer] = []
    first_bot = await start_bot(answerer=recording(answerers))
    await _ask_first(first_bot, fake_slack, ts="1700000100.000001")
    # The follow-up reaches another instance, which has cached nothing: it reads the thread.
    second_bot = await start_bot(answerer=recording(answerers))
    follow_up = _follow_up("1700000100.000900", "1700000100.000001")
    fake_slack.add_message("C111", user_message(follow_up))
    await second_bot.sender.event(follow_up)
    await second_bot.idle()
    history = answerers[1].calls[0]["history"]
    assert [turn.role for turn in history] == ["user", "bot"]
    assert history[0].text == FIRST
    assert history[1].claims and any("HRLinks" in c.quote for c in history[1].claims)
    assert len(fake_slack.calls_to("conversations.replies")) == 1
    update = fake_slack.calls_to("chat.update")[-1]
    assert update.params["ts"] != fake_slack.calls_to("chat.update")[0].params["ts"]


async def test_the_same_instance_answers_a_follow_up_from_its_cache(start_bot, fake_slack):
    answerers: list[RecordingAnswerer] = []
    bot = await start_bot(answerer=recording(answerers))
    await _ask_first(bot, fake_slack, ts="1700000101.000001")
    await bot.sender.event(_follow_up("1700000101.000900", "1700000101.000001"))
    await bot.idle()
    history = answerers[0].calls[1]["history"]
    assert [turn.role for turn in history] == ["user", "bot"]
    assert fake_slack.calls_to("conversations.replies") == []


async def test_a_reply_in_a_thread_the_bot_never_answered_is_left_alone(start_bot, fake_slack):
    bot = await start_bot()
    await bot.sender.event(_follow_up("1700000102.000900", "1700000102.000001"))
    await bot.idle()
    assert fake_slack.calls_to("chat.postMessage") == []


async def test_with_the_setting_a_follow_up_needs_a_mention(start_bot, fake_slack):
    options = BotOptions(thread_needs_mention=True)
    bot = await start_bot(options=options)
    await _ask_first(bot, fake_slack, ts="1700000103.000001")
    await bot.sender.event(_follow_up("1700000103.000900", "1700000103.000001"))
    await bot.idle()
    assert len(fake_slack.calls_to("chat.postMessage")) == 1  # only the first placeholder
    await bot.sender.event(
        _follow_up("1700000103.000950", "1700000103.000001", text=f"<@W111> {FOLLOW_UP}")
    )
    await bot.idle()
    assert len(fake_slack.calls_to("chat.postMessage")) == 2


async def test_a_dm_in_a_thread_is_answered_in_that_thread(start_bot, fake_slack):
    bot = await start_bot()
    body = payload("event_message_im_in_thread.json")
    body["event"]["text"] = FIRST
    await bot.sender.event(body)
    (placeholder,) = await fake_slack.wait_for("chat.postMessage")
    (update,) = await fake_slack.wait_for("chat.update")
    await bot.idle()
    assert placeholder.params["channel"] == "D111"
    assert placeholder.params["thread_ts"] == body["event"]["thread_ts"]
    assert "HRLinks" in json.dumps(update.params["blocks"])


async def test_a_top_level_dm_is_answered_in_the_dm(start_bot, fake_slack):
    bot = await start_bot()
    body = payload("event_message_im_in_thread.json")
    body["event"]["text"] = FIRST
    del body["event"]["thread_ts"], body["event"]["parent_user_id"]
    await bot.sender.event(body)
    await bot.idle()
    (placeholder,) = fake_slack.calls_to("chat.postMessage")
    assert placeholder.params["channel"] == "D111"
    assert "thread_ts" not in placeholder.params


async def test_a_help_channel_question_gets_a_grounded_answer_without_a_mention(
    start_bot, fake_slack
):
    bot = await start_bot(options=BotOptions(help_channels=frozenset({"CHELP"})))
    ts = "1700000104.000001"
    await bot.sender.event(channel_message(FIRST, ts=ts, event_id="EvHelp", channel="CHELP"))
    await bot.idle()
    (posted,) = fake_slack.calls_to("chat.postMessage")
    assert posted.params["thread_ts"] == ts
    assert "HRLinks" in json.dumps(posted.params["blocks"])  # the answer, no placeholder first
    assert fake_slack.calls_to("chat.update") == []


async def test_a_help_channel_question_the_documents_do_not_answer_gets_nothing(
    start_bot, fake_slack
):
    bot = await start_bot(options=BotOptions(help_channels=frozenset({"CHELP"})))
    question = "What is the boiling point of liquid nitrogen?"
    await bot.sender.event(
        channel_message(question, ts="1700000105.000001", event_id="EvNoise", channel="CHELP")
    )
    await bot.idle()
    # auth.test at start-up, then who may read and who asks (bot/slack/access/gate.py); no post.
    assert [c.method for c in fake_slack.calls] == [
        "auth.test",
        "conversations.info",
        "users.info",
    ]
