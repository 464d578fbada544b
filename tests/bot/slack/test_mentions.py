"""@mentions: a placeholder at once in the thread, replaced by the grounded answer."""

from __future__ import annotations

import json

from tests.bot.slack.rig import BOT_USER, mention


async def test_a_mention_gets_a_placeholder_then_the_answer_in_its_thread(start_bot, fake_slack):
    bot = await start_bot()
    sent = await bot.sender.event(
        mention("How do I request annual leave?", ts="1595926230.009600", event_id="Ev1")
    )
    assert sent.status == 200
    (placeholder,) = await fake_slack.wait_for("chat.postMessage")
    assert placeholder.params["thread_ts"] == "1595926230.009600"
    assert "Searching" in placeholder.params["text"]
    (update,) = await fake_slack.wait_for("chat.update")
    await bot.idle()
    assert update.params["channel"] == "C111"
    assert "HRLinks" in json.dumps(update.params["blocks"])
    assert update.params["metadata"]["event_type"] == "kb_answer"
    assert BOT_USER


async def test_a_mention_nothing_answers_points_to_the_closest_page_and_offers_a_human(
    start_bot, fake_slack
):
    # The leave page reads close to the question without saying whether a text will do.
    bot = await start_bot()
    question = "woke up with a fever, can i just text my boss that im not coming in?"
    await bot.sender.event(mention(question, ts="1595926231.000100", event_id="Ev2"))
    (update,) = await fake_slack.wait_for("chat.update")
    await bot.idle()
    texts = [b["text"]["text"] for b in update.params["blocks"] if b["type"] == "section"]
    assert texts[0] == "I couldn't find this in the knowledge base."
    [closest] = [t for t in texts if t.startswith("*Pages that came closest*")]
    assert "Leave" in closest and "Requesting leave" in closest, closest
    assert not any(t.startswith("*Sources*") for t in texts)
    actions = [b for b in update.params["blocks"] if b["type"] == "actions"]
    assert "Escalate to a human" in json.dumps(actions)
