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
