"""Escalation end to end: the button, the post, the expert's answer, and the bot learning it."""

from __future__ import annotations

import copy
import json

from bot.slack.access.config import BotOptions
from bot.slack.render import action_ids as ids
from tests.bot.slack.rig import (
    button_click,
    buttons,
    mention,
    payload,
    slash_command,
    user_message,
    view_submission,
)

QUESTION = "How do I get a parking permit for the office garage?"
EXPERT_ANSWER = (
    "Parking permits for the office garage are issued by the facilities desk on the ground "
    "floor. Bring your badge and your licence plate number."
)
OPTIONS = BotOptions(escalation_channel="CESC", escalation_usergroup="S0EXPERTS")


async def _ask(bot, fake_slack, *, ts: str, event_id: str) -> dict:
    """Ask in C111; the bot's reply as the asker's Slack client shows it now."""
    body = mention(QUESTION, ts=ts, event_id=event_id)
    fake_slack.add_message("C111", user_message(body))
    await bot.sender.event(body)
    await bot.idle()
    return copy.deepcopy(next(m for m in fake_slack.messages["C111"] if m.get("thread_ts") == ts))


async def _escalate(bot, fake_slack, reply: dict) -> dict:
    await _escalate_click(bot, fake_slack, reply)
    return copy.deepcopy(fake_slack.messages["CESC"][0])


async def _escalate_click(bot, fake_slack, reply: dict) -> None:
    click = button_click(
        button=buttons(reply["blocks"])[ids.ESCALATE],
        user="W222",
        channel="C111",
        message=reply,
        response_url=fake_slack.hook_url(),
    )
    assert (await bot.sender.interaction(click)).status == 200
    await bot.idle()


async def _answer_as_expert(bot, fake_slack, post: dict, channel: str = "CESC") -> None:
    click = button_click(
        button=buttons(post["blocks"])[ids.ESCALATION_ANSWER],
        user="W333",
        channel=channel,  # the click is on the escalation's own post
        message=post,
        response_url=fake_slack.hook_url(),
    )
    await bot.sender.interaction(click)
    await bot.idle()
    (opened,) = fake_slack.calls_to("views.open")
    modal = opened.params["view"]
    submitted = view_submission(
        callback_id=modal["callback_id"],
        private_metadata=modal["private_metadata"],
        user="W333",
        values={ids.EXPERT_ANSWER_BLOCK: (ids.EXPERT_ANSWER_INPUT, EXPERT_ANSWER)},
    )
    sent = await bot.sender.interaction(submitted)
    assert sent.status == 200
    await bot.idle()


async def test_escalating_posts_the_question_to_the_escalation_channel_and_marks_the_reply(
    start_bot, fake_slack, pool
):
    bot = await start_bot(options=OPTIONS)
    reply = await _ask(bot, fake_slack, ts="1700000300.000001", event_id="EvAsk")
    post = await _escalate(bot, fake_slack, reply)

    assert "<!subteam^S0EXPERTS>" in post["text"] and "<@W222>" in post["text"]
    assert "parking permit" in post["text"]
    thread_link = "https://fake.slack.test/archives/C111/p1700000300000001"
    assert thread_link in json.dumps(post["blocks"])
    assert set(buttons(post["blocks"])) == {ids.ESCALATION_RESOLVE, ids.ESCALATION_ANSWER}
    marked = fake_slack.calls_to("chat.update")[-1]
    assert marked.params["ts"] == reply["ts"]
    assert "Escalated by <@W222>" in json.dumps(marked.params["blocks"])
    assert ids.ESCALATE not in buttons(marked.params["blocks"])
    row = await pool.fetchrow("SELECT * FROM escalations")
    assert (row["status"], row["escalated_by"], row["thread_ts"]) == (
        "open",
        "W222",
        "1700000300.000001",
    )


async def test_escalating_the_same_answer_twice_posts_once(start_bot, fake_slack, pool):
    bot = await start_bot(options=OPTIONS)
    reply = await _ask(bot, fake_slack, ts="1700000301.000001", event_id="EvAsk")
    await _escalate(bot, fake_slack, reply)
    await _escalate(bot, fake_slack, reply)
    assert len(fake_slack.messages["CESC"]) == 1
    note = fake_slack.calls_to("chat.postEphemeral")[-1]
    assert "already escalated" in note.params["text"]


async def test_mark_resolved_records_who_resolved_it(start_bot, fake_slack, pool):
    bot = await start_bot(options=OPTIONS)
    reply = await _ask(bot, fake_slack, ts="1700000302.000001", event_id="EvAsk")
    post = await _escalate(bot, fake_slack, reply)
    click = button_click(
        button=buttons(post["blocks"])[ids.ESCALATION_RESOLVE],
        user="W333",
        channel="CESC",
        message=post,
        response_url=fake_slack.hook_url(),
    )
    await bot.sender.interaction(click)
    await bot.idle()
    row = await pool.fetchrow("SELECT status, resolved_by FROM escalations")
    assert dict(row) == {"status": "resolved", "resolved_by": "W333"}
    assert "Resolved by <@W333>" in json.dumps(fake_slack.messages["CESC"][0]["blocks"])


async def test_the_experts_answer_reaches_the_asker_and_the_bot_cites_it_next_time(
    start_bot, fake_slack, pool
):
    bot = await start_bot(options=OPTIONS)
    reply = await _ask(bot, fake_slack, ts="1700000303.000001", event_id="EvAsk")
    assert "HRLinks" not in json.dumps(reply["blocks"])
    post = await _escalate(bot, fake_slack, reply)
    await _answer_as_expert(bot, fake_slack, post)

    in_thread = [
        m for m in fake_slack.messages["C111"] if m.get("thread_ts") == "1700000303.000001"
    ]
    shown = [json.dumps(m["blocks"]) for m in in_thread]
    assert any("facilities desk" in b and "<@W333>" in b for b in shown)
    row = await pool.fetchrow("SELECT status, resolved_by, answer FROM escalations")
    assert (row["status"], row["resolved_by"], row["answer"]) == ("resolved", "W333", EXPERT_ANSWER)
    thanks = fake_slack.calls_to("chat.postEphemeral")[-1]
    assert thanks.params["user"] == "W333" and "knowledge base" in thanks.params["text"]

    again = await _ask(bot, fake_slack, ts="1700000399.000001", event_id="EvAgain")
    shown = json.dumps(again["blocks"])
    assert "facilities desk" in shown
    escalation_link = fake_slack.calls_to("chat.getPermalink")[1].params
    assert f"archives/CESC/p{escalation_link['message_ts'].replace('.', '')}" in shown


async def test_a_private_answer_escalates_and_the_expert_answers_the_asker_directly(
    start_bot, fake_slack, pool
):
    bot = await start_bot(options=OPTIONS)
    hook = fake_slack.hook_url("private")
    await bot.sender.command(slash_command(f"private {QUESTION}", response_url=hook))
    await bot.idle()
    answer = fake_slack.hooks[-1].params
    click = button_click(
        button=buttons(answer["blocks"])[ids.ESCALATE],
        user="W222",
        channel="C111",
        message=None,
        response_url=hook,
        is_ephemeral=True,
    )
    await bot.sender.interaction(click)
    await bot.idle()
    (post,) = fake_slack.messages["CESC"]
    assert "parking permit" in json.dumps(post["blocks"])
    marked = fake_slack.hooks[-1].params
    assert marked["replace_original"] is True
    assert "Escalated by <@W222>" in json.dumps(marked["blocks"])
    assert "HRLinks" not in json.dumps(post["blocks"])
    await _answer_as_expert(bot, fake_slack, copy.deepcopy(post))
    (direct,) = fake_slack.messages["D222"]  # no thread to answer in: the asker's DM
    assert "facilities desk" in json.dumps(direct["blocks"])
    assert await pool.fetchval("SELECT thread_ts FROM escalations") is None


async def test_an_escalation_that_cannot_be_posted_says_so_and_can_be_pressed_again(
    start_bot, fake_slack, pool
):
    bot = await start_bot(options=OPTIONS)
    reply = await _ask(bot, fake_slack, ts="1700000304.000001", event_id="EvAsk")
    fake_slack.script("chat.postMessage", status=200, body={"ok": False, "error": "not_in_channel"})
    await _escalate_click(bot, fake_slack, reply)
    note = fake_slack.calls_to("chat.postEphemeral")[-1]
    assert "couldn't post to the escalation channel" in note.params["text"]
    assert await pool.fetchval("SELECT count(*) FROM escalations") == 0
    await _escalate_click(bot, fake_slack, reply)
    assert len(fake_slack.messages["CESC"]) == 1


async def test_without_an_escalation_channel_the_asker_thread_gets_the_note_and_a_member_teaches_the_bot(  # noqa: E501
    start_bot, fake_slack, pool
):
    bot = await start_bot(options=BotOptions())  # no KB_SLACK_ESCALATION_CHANNEL
    thread = "1700000310.000001"
    reply = await _ask(bot, fake_slack, ts=thread, event_id="EvAsk")
    assert ids.ESCALATE in buttons(reply["blocks"])
    await _escalate_click(bot, fake_slack, reply)

    notes = [
        m
        for m in fake_slack.messages["C111"]
        if m.get("thread_ts") == thread and ids.ESCALATION_ANSWER in buttons(m["blocks"])
    ]
    (note,) = notes  # in the asker's thread: what was asked, by whom, what is missing
    assert "parking permit" in note["text"] and "<@W222>" in note["text"]
    assert "Escalated by <@W222>" in json.dumps(fake_slack.calls_to("chat.update")[-1].params)

    # Someone who can see the channel but is not in it cannot answer for the knowledge base.
    fake_slack.members["C111"] = ["W222", *(f"W9{n:03}" for n in range(1500)), "W333"]
    outsider = button_click(
        button=buttons(note["blocks"])[ids.ESCALATION_ANSWER],
        user="W444",
        channel="C111",
        message=copy.deepcopy(note),
        response_url=fake_slack.hook_url(),
    )
    await bot.sender.interaction(outsider)
    await bot.idle()
    assert fake_slack.calls_to("views.open") == []
    assert "Only members" in fake_slack.calls_to("chat.postEphemeral")[-1].params["text"]
    forged = view_submission(
        callback_id=ids.EXPERT_ANSWER_MODAL,
        private_metadata=buttons(note["blocks"])[ids.ESCALATION_ANSWER]["value"],
        user="W444",
        values={ids.EXPERT_ANSWER_BLOCK: (ids.EXPERT_ANSWER_INPUT, "Ask the janitor.")},
    )
    await bot.sender.interaction(forged)
    await bot.idle()
    assert await pool.fetchval("SELECT answer FROM escalations") is None

    # A member (on the second page of members) answers; the next asker gets it, cited.
    await _answer_as_expert(bot, fake_slack, copy.deepcopy(note), channel="C111")
    row = await pool.fetchrow("SELECT resolved_by, answer, post_channel_id FROM escalations")
    assert tuple(row) == ("W333", EXPERT_ANSWER, "C111")
    again = await _ask(bot, fake_slack, ts="1700000399.000002", event_id="EvAgain")
    shown = json.dumps(again["blocks"])
    assert "facilities desk" in shown
    assert f"archives/C111/p{note['ts'].replace('.', '')}" in shown  # cites the thread note


async def test_without_an_escalation_channel_a_dm_asker_is_told_where_to_go(start_bot, fake_slack):
    line = "Ask in #help-desk with @kb and press Escalate there."
    bot = await start_bot(options=BotOptions(escalation_elsewhere=line))
    body = payload("event_message_im_in_thread.json")
    body["event"]["text"] = QUESTION
    await bot.sender.event(body)
    await bot.idle()
    reply = copy.deepcopy(fake_slack.messages["D111"][-1])
    click = button_click(
        button=buttons(reply["blocks"])[ids.ESCALATE],
        user="W222",
        channel="D111",
        message=reply,
        response_url=fake_slack.hook_url(),
    )
    await bot.sender.interaction(click)
    await bot.idle()
    assert fake_slack.calls_to("chat.postEphemeral")[-1].params["text"] == line
    assert [m for m in fake_slack.messages["D111"] if ids.ESCALATION_ANSWER in json.dumps(m)] == []


async def test_an_escalation_and_the_expert_s_answer_are_posted_once_when_slack_fails_after_posting(
    start_bot, fake_slack, pool
):
    # Slack posts each message, then answers 500: a blind retry would post it again.
    bot = await start_bot(options=OPTIONS)
    reply = await _ask(bot, fake_slack, ts="1700000310.000001", event_id="EvAsk")
    fake_slack.script_after("chat.postMessage", status=500, body={"ok": False, "error": "fatal"})
    post = await _escalate(bot, fake_slack, reply)
    assert len(fake_slack.messages["CESC"]) == 1
    row = await pool.fetchrow("SELECT post_ts FROM escalations")
    assert row["post_ts"] == post["ts"]  # the post Slack made is the one recorded

    fake_slack.script_after("chat.postMessage", status=500, body={"ok": False, "error": "fatal"})
    await _answer_as_expert(bot, fake_slack, post)
    in_thread = [
        m
        for m in fake_slack.messages["C111"]
        if m.get("thread_ts") == "1700000310.000001" and "facilities desk" in json.dumps(m)
    ]
    assert len(in_thread) == 1


async def test_an_expert_s_answer_to_the_asker_s_dm_is_posted_once_when_slack_fails_after_posting(
    start_bot, fake_slack, pool
):
    # A private answer has no thread, so the expert's answer is posted to the asker's user
    # id and lands in the app's DM (D…); the look-up after the 500 must read that DM.
    bot = await start_bot(options=OPTIONS)
    hook = fake_slack.hook_url("private")
    await bot.sender.command(slash_command(f"private {QUESTION}", response_url=hook))
    await bot.idle()
    click = button_click(
        button=buttons(fake_slack.hooks[-1].params["blocks"])[ids.ESCALATE],
        user="W222",
        channel="C111",
        message=None,
        response_url=hook,
        is_ephemeral=True,
    )
    await bot.sender.interaction(click)
    await bot.idle()
    (post,) = fake_slack.messages["CESC"]
    fake_slack.script_after("chat.postMessage", status=500, body={"ok": False, "error": "fatal"})
    await _answer_as_expert(bot, fake_slack, copy.deepcopy(post))
    (direct,) = fake_slack.messages["D222"]
    assert "facilities desk" in json.dumps(direct["blocks"])
    linked = fake_slack.calls_to("chat.getPermalink")[-1].params  # the answer's, for the post
    assert (linked["channel"], linked["message_ts"]) == ("D222", direct["ts"])
