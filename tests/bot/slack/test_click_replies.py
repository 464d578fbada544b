"""A click's reply reaches the person who clicked, even where the bot is not a member.

chat.postEphemeral answers `not_in_channel` where the bot was never added (a DM between two
people, a private channel where `/kb private` was used); the reply then goes through the
click's response_url, and when that has expired too, to the person's DM with the app
(bot/slack/surfaces/responder.py).
"""

from __future__ import annotations

import copy
import json

from bot.slack.render import action_ids as ids
from tests.bot.slack.rig import button_click, buttons, mention

NOT_IN_CHANNEL = {"ok": False, "error": "not_in_channel"}  # chat.postEphemeral's error


async def _why(bot, fake_slack, *, ts: str, hook: str) -> None:
    await bot.sender.event(mention("How do I request annual leave?", ts=ts, event_id=f"Ev{ts}"))
    await bot.idle()
    reply = copy.deepcopy(next(m for m in fake_slack.messages["C111"] if m.get("thread_ts") == ts))
    click = button_click(
        button=buttons(reply["blocks"])[ids.WHY],
        user="W222",
        channel="C111",
        message=reply,
        response_url=fake_slack.hook_url(hook),
    )
    assert (await bot.sender.interaction(click)).status == 200
    await bot.idle()


async def test_where_the_bot_may_not_post_ephemerally_the_reply_goes_through_the_response_url(
    start_bot, fake_slack
):
    bot = await start_bot()
    fake_slack.script("chat.postEphemeral", status=200, body=NOT_IN_CHANNEL)
    await _why(bot, fake_slack, ts="1700000500.000001", hook="why")
    (hook,) = fake_slack.hooks
    assert hook.path.endswith("/why")
    assert hook.params["response_type"] == "ephemeral" and not hook.params["replace_original"]
    assert "HRLinks" in json.dumps(hook.params["blocks"])  # the trace itself, not an error


async def test_with_the_response_url_expired_too_the_reply_arrives_in_the_app_s_dm(
    start_bot, fake_slack
):
    bot = await start_bot()
    fake_slack.script("chat.postEphemeral", status=200, body=NOT_IN_CHANNEL)
    fake_slack.expired_hooks.add("old")
    await _why(bot, fake_slack, ts="1700000501.000001", hook="old")
    assert fake_slack.hooks == []
    (dm,) = [c for c in fake_slack.calls_to("chat.postMessage") if c.params["channel"] == "W222"]
    assert "HRLinks" in json.dumps(dm.params["blocks"])
