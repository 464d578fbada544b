"""Slack's assistant panel end to end: greeting and prompts, status, title, answers."""

from __future__ import annotations

import json

from tests.bot.slack.rig import RecordingAnswerer, SteppingAnswerer, mention, payload

THREAD = "1726133698.626339"


def _started() -> dict:
    body = payload("event_assistant_thread_started.json")
    body["event_id"] = "EvStarted"
    return body


def _user_message(text: str, *, ts: str) -> dict:
    body = payload("event_message_im_in_thread.json")
    body["event_id"] = f"Ev{ts}"
    body["event"] |= {"text": text, "ts": ts, "event_ts": ts}
    return body


async def test_a_new_assistant_thread_gets_a_greeting_and_prompts_from_the_collections(
    start_bot, fake_slack
):
    bot = await start_bot()
    await bot.sender.event(_started())
    await bot.idle()
    (greeting,) = fake_slack.calls_to("chat.postMessage")
    assert (greeting.params["channel"], greeting.params["thread_ts"]) == ("D111", THREAD)
    (prompts,) = fake_slack.calls_to("assistant.threads.setSuggestedPrompts")
    titles = [p["title"] for p in prompts.params["prompts"]]
    # Nothing asked yet: one document title per collection, never "Ask about hr".
    assert len(titles) == 2 and "Leave" in titles and not any("Ask about" in t for t in titles)
    assert all(
        p["message"] == f"What should I know about {p['title']}?" for p in prompts.params["prompts"]
    )


async def test_questions_in_the_panel_show_status_set_the_title_once_and_carry_history(
    start_bot, fake_slack
):
    answerers: list[RecordingAnswerer] = []

    def recording(runtime):
        answerers.append(RecordingAnswerer(runtime.answerer()))
        return answerers[-1]

    bot = await start_bot(answerer=recording)
    await bot.sender.event(_started())
    await bot.idle()
    await bot.sender.event(_user_message("How do I request annual leave?", ts="1726133700.1"))
    await bot.idle()
    await bot.sender.event(_user_message("And what about sick leave?", ts="1726133800.1"))
    await bot.idle()

    (title,) = fake_slack.calls_to("assistant.threads.setTitle")
    assert title.params["title"] == "How do I request annual leave?"
    statuses = fake_slack.calls_to("assistant.threads.setStatus")
    assert len(statuses) == 2 and all(s.params["thread_ts"] == THREAD for s in statuses)
    greeting, first, second = fake_slack.calls_to("chat.postMessage")
    assert {greeting.params["thread_ts"], first.params["thread_ts"]} == {THREAD}
    assert second.params["thread_ts"] == THREAD
    assert "HRLinks" in json.dumps(first.params["blocks"])
    assert first.params["metadata"]["event_type"] == "kb_answer"
    assert fake_slack.calls_to("chat.update") == []  # the status, not a placeholder
    history = answerers[0].calls[1]["history"]
    assert [t.role for t in history] == ["user", "bot"]


async def test_a_dm_thread_that_is_not_the_panels_is_answered_as_a_dm(start_bot, fake_slack):
    bot = await start_bot()
    await bot.sender.event(_user_message("How do I request annual leave?", ts="1726133700.2"))
    await bot.idle()
    assert fake_slack.calls_to("assistant.threads.setStatus") == []
    assert len(fake_slack.calls_to("chat.update")) == 1


async def test_the_panels_thread_context_is_kept_when_the_user_switches_channel(
    start_bot, fake_slack, pool
):
    bot = await start_bot()
    await bot.sender.event(_started())
    await bot.idle()
    changed = payload("event_assistant_thread_context_changed.json")
    changed["event_id"] = "EvChanged"
    await bot.sender.event(changed)
    await bot.idle()
    stored = await pool.fetchval(
        "SELECT context FROM assistant_threads WHERE channel_id = 'D111' AND thread_ts = $1",
        THREAD,
    )
    assert json.loads(stored)["channel_id"] == "C333"
    assert fake_slack.calls_to("chat.update") == []  # bolt's default store would rewrite a message


async def test_the_prompts_lead_with_the_documents_answers_cite_most(start_bot, fake_slack):
    bot = await start_bot()
    for n, question in enumerate(["How do I book work travel?", "Where do I book travel?"]):
        await bot.sender.event(mention(question, ts=f"1700000700.00000{n}", event_id=f"EvT{n}"))
        await bot.idle()
    await bot.sender.event(_started())
    await bot.idle()
    (prompts,) = fake_slack.calls_to("assistant.threads.setSuggestedPrompts")
    titles = [p["title"] for p in prompts.params["prompts"]]
    assert titles[0] == "Travel" and "Leave" in titles  # most asked about first, then the rest
    assert len(titles) == len(set(titles))


async def test_the_panel_rotates_loading_messages_from_the_steps_running(start_bot, fake_slack):
    agents: list[SteppingAnswerer] = []

    def stepping(runtime):
        agents.append(SteppingAnswerer(runtime.answerer(), "Reading: Leave types"))
        return agents[-1]

    bot = await start_bot(answerer=stepping)
    await bot.sender.event(_started())
    await bot.idle()
    await bot.sender.event(_user_message("How do I request annual leave?", ts="1726133700.3"))
    (status,) = await fake_slack.wait_for(
        "assistant.threads.setStatus", where=lambda c: "loading_messages" in c.params
    )
    assert status.params["loading_messages"] == ["Reading: Leave types"]
    agents[0].gate.set()
    await bot.idle()
    assert "HRLinks" in json.dumps(fake_slack.calls_to("chat.postMessage")[-1].params["blocks"])
