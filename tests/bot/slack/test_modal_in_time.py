"""👎 opens its comment modal before anything else: Slack's trigger_id lasts 3 seconds."""

from __future__ import annotations

import copy

from tests.bot.slack.rig import feedback_click, mention


async def test_the_comment_modal_is_opened_before_the_vote_is_written(start_bot, fake_slack, pool):
    bot = await start_bot()
    ts = "1700000600.000001"
    await bot.sender.event(mention("How do I request annual leave?", ts=ts, event_id="EvModal"))
    await bot.idle()
    reply = copy.deepcopy(next(m for m in fake_slack.messages["C111"] if m.get("thread_ts") == ts))
    votes_when_opened: list[int] = []

    async def count_votes(call) -> None:
        votes_when_opened.append(await pool.fetchval("SELECT count(*) FROM feedback"))

    fake_slack.on_call["views.open"] = count_votes
    click = feedback_click(
        message=reply, user="W222", positive=False, response_url=fake_slack.hook_url()
    )
    await bot.sender.interaction(click)
    await bot.idle()
    assert votes_when_opened == [0]
    assert await pool.fetchval("SELECT vote FROM feedback") == -1


async def test_an_expired_trigger_still_records_the_vote_and_says_thanks(
    start_bot, fake_slack, pool
):
    bot = await start_bot()
    ts = "1700000700.000001"
    await bot.sender.event(mention("How do I request annual leave?", ts=ts, event_id="EvExpired"))
    await bot.idle()
    reply = copy.deepcopy(next(m for m in fake_slack.messages["C111"] if m.get("thread_ts") == ts))
    # https://docs.slack.dev/reference/methods/views.open (errors: expired_trigger_id)
    fake_slack.script("views.open", status=200, body={"ok": False, "error": "expired_trigger_id"})
    click = feedback_click(
        message=reply, user="W222", positive=False, response_url=fake_slack.hook_url()
    )
    await bot.sender.interaction(click)
    await bot.idle()
    assert await pool.fetchval("SELECT vote FROM feedback") == -1
    (thanks,) = fake_slack.calls_to("chat.postEphemeral")
    assert thanks.params["user"] == "W222"
