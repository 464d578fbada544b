"""/kb: a visible question answered in its thread, usage, private answers, duplicates."""

from __future__ import annotations

import asyncio
import json

from tests.bot.slack.rig import slash_command

QUESTION = "How do I request annual leave?"


async def test_kb_posts_the_question_visibly_and_answers_in_its_thread(start_bot, fake_slack):
    bot = await start_bot()
    sent = await bot.sender.command(slash_command(QUESTION, response_url=fake_slack.hook_url()))
    assert sent.status == 200 and sent.text == ""
    await bot.idle()
    question, placeholder = fake_slack.calls_to("chat.postMessage")
    assert question.params["text"] == f"<@W222> asked: {QUESTION}"
    assert question.params["metadata"]["event_type"] == "kb_question"
    asked_ts = fake_slack.messages["C111"][0]["ts"]
    assert placeholder.params["thread_ts"] == asked_ts
    (update,) = fake_slack.calls_to("chat.update")
    assert "HRLinks" in json.dumps(update.params["blocks"])


async def test_the_visible_question_cannot_ping_anyone(start_bot, fake_slack):
    bot = await start_bot()
    await bot.sender.command(
        slash_command(
            "<!channel> <@U999|bob> &lt;!here&gt; leave?", response_url=fake_slack.hook_url()
        )
    )
    await bot.idle()
    question = fake_slack.calls_to("chat.postMessage")[0]
    # Slack sends a real @channel as <!channel> and typed "<!here>" escaped: neither pings.
    assert question.params["text"] == "<@W222> asked: @channel @bob &lt;!here&gt; leave?"


async def test_kb_alone_and_kb_help_answer_with_usage_privately(start_bot, fake_slack):
    bot = await start_bot()
    for text in ("", "help"):
        sent = await bot.sender.command(slash_command(text, response_url=fake_slack.hook_url()))
        usage = json.loads(sent.text)
        assert usage["response_type"] == "ephemeral"
        assert "/kb" in usage["text"]
    await bot.idle()
    assert [c.method for c in fake_slack.calls if c.method != "auth.test"] == []


async def test_kb_private_answers_only_the_asker_through_the_response_url(start_bot, fake_slack):
    bot = await start_bot()
    await bot.sender.command(
        slash_command(f"private {QUESTION}", response_url=fake_slack.hook_url("private"))
    )
    await bot.idle()
    assert fake_slack.calls_to("chat.postMessage") == []
    placeholder, answer = fake_slack.hooks
    assert placeholder.params["response_type"] == "ephemeral"
    assert "Searching" in placeholder.params["text"]
    assert answer.params["replace_original"] is True
    assert "HRLinks" in json.dumps(answer.params["blocks"])


async def test_a_duplicate_command_delivery_to_two_instances_posts_one_question(
    start_bot, fake_slack
):
    first, second = await start_bot(), await start_bot()
    form = slash_command(QUESTION, response_url=fake_slack.hook_url())
    await asyncio.gather(first.sender.command(form), second.sender.command(form))
    await asyncio.gather(first.idle(), second.idle())
    assert len(fake_slack.calls_to("chat.postMessage")) == 2  # the question and one placeholder
    assert len(fake_slack.calls_to("chat.update")) == 1


async def test_a_channel_the_bot_cannot_post_in_gets_a_private_note(start_bot, fake_slack):
    bot = await start_bot()
    fake_slack.script("chat.postMessage", status=200, body={"ok": False, "error": "not_in_channel"})
    await bot.sender.command(slash_command(QUESTION, response_url=fake_slack.hook_url()))
    await bot.idle()
    (note,) = fake_slack.hooks
    assert "/invite" in note.params["text"]
