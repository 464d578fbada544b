"""The fake Web API refuses what Slack refuses beyond Block Kit: a post where the bot is not
a member (not_in_channel), a modal on a trigger Slack never issued (expired_trigger_id),
a call without a required argument (invalid_arguments), and on demand 429 + Retry-After.
Each is shown through slack_sdk, then through the bot, which must cope unscripted."""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.render import action_ids as ids
from bot.slack.render.notices import FEEDBACK_THANKS, NOT_IN_CHANNEL
from tests.bot.slack.rig import (
    FakeSlack,
    SlackSender,
    button_click,
    buttons,
    feedback_click,
    mention,
    slash_command,
)

QUESTION = "How do I request annual leave?"


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    fake = FakeSlack()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.close()


@pytest.fixture
def client(slack: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token="xoxb-test", base_url=slack.base_url)


async def refused(call) -> SlackApiError:  # type: ignore[no-untyped-def]
    with pytest.raises(SlackApiError) as caught:
        await call
    return caught.value


async def test_posts_where_the_bot_is_not_a_member_are_not_in_channel(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    slack.kinds["GSECRET"] = "private_channel"
    ephemeral = await refused(client.chat_postEphemeral(channel="CNEW", user="W222", text="x"))
    assert ephemeral.response["error"] == "not_in_channel"
    private = await refused(client.chat_postMessage(channel="GSECRET", text="x"))
    assert private.response["error"] == "not_in_channel"
    # A public channel needs only chat:write.public; a user id is the app's DM with them.
    assert (await client.chat_postMessage(channel="CNEW", text="x"))["ok"]
    assert (await client.chat_postMessage(channel="W222", text="x"))["ok"]
    slack.granted = slack.granted - {"chat:write.public"}
    public = await refused(client.chat_postMessage(channel="CNEW", text="x"))
    assert public.response["error"] == "not_in_channel"
    slack.joined.add("CNEW")
    assert (await client.chat_postEphemeral(channel="CNEW", user="W222", text="x"))["ok"]


async def test_a_modal_on_a_trigger_slack_never_issued_is_expired(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    view = {"type": "modal", "title": {"type": "plain_text", "text": "t"}, "blocks": []}
    error = await refused(client.views_open(trigger_id="111.222.forged", view=view))
    assert error.response["error"] == "expired_trigger_id"
    slack.triggers.add("111.222.issued")
    assert (await client.views_open(trigger_id="111.222.issued", view=view))["ok"]


async def test_a_call_without_a_required_argument_is_invalid_arguments(
    client: AsyncWebClient,
) -> None:
    for method, params in (
        ("users.info", {}),
        ("chat.postEphemeral", {"channel": "C111", "text": "x"}),
        ("views.publish", {"view": json.dumps({"type": "home", "blocks": []})}),
        ("conversations.replies", {"channel": "C111"}),
    ):
        error = await refused(client.api_call(method, params=params))
        assert error.response["error"] == "invalid_arguments", method
        (message,) = error.response["response_metadata"]["messages"]
        assert message.startswith("[ERROR] missing required field:")


async def test_the_rate_limit_switch_answers_429_with_retry_after(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    slack.rate_limit("chat.postMessage", times=2, retry_after=7)
    for _ in range(2):
        error = await refused(client.chat_postMessage(channel="C111", text="x"))
        assert error.response.status_code == 429
        assert error.response.headers["Retry-After"] == "7"
        assert error.response["error"] == "ratelimited"
    assert (await client.chat_postMessage(channel="C111", text="x"))["ok"]


async def _answered(bot, fake_slack, ts: str) -> dict:
    await bot.sender.event(mention(QUESTION, ts=ts, event_id=f"Ev{ts}"))
    await bot.idle()
    return copy.deepcopy(next(m for m in fake_slack.messages["C111"] if m.get("thread_ts") == ts))


async def test_why_clicked_where_the_bot_left_reaches_the_person_by_the_response_url(
    start_bot, fake_slack
):
    bot = await start_bot()
    reply = await _answered(bot, fake_slack, "1700000800.000001")
    fake_slack.joined.discard("C111")  # removed from the channel since it answered
    click = button_click(
        button=buttons(reply["blocks"])[ids.WHY],
        user="W222",
        channel="C111",
        message=reply,
        response_url=fake_slack.hook_url("why"),
    )
    await bot.sender.interaction(click)
    await bot.idle()
    (hook,) = fake_slack.hooks
    assert "HRLinks" in json.dumps(hook.params["blocks"])


async def test_kb_in_a_private_channel_without_the_bot_says_how_to_invite_it(start_bot, fake_slack):
    bot = await start_bot()
    fake_slack.kinds["GSECRET"] = "private_channel"
    form = slash_command(QUESTION, response_url=fake_slack.hook_url("kb"))
    form["channel_id"] = "GSECRET"
    await bot.sender.command(form)
    await bot.idle()
    (hook,) = await fake_slack.wait_for("hook")
    assert hook.params["text"] == NOT_IN_CHANNEL
    assert fake_slack.messages["GSECRET"] == []


async def test_a_thumbs_down_whose_trigger_expired_still_counts_and_thanks(
    start_bot, fake_slack, pool
):
    bot = await start_bot()
    reply = await _answered(bot, fake_slack, "1700000801.000001")
    click = feedback_click(
        message=reply, user="W222", positive=False, response_url=fake_slack.hook_url()
    )
    # Signed, but its trigger_id was never issued by this Slack (or is long past 3 s).
    late = SlackSender(bot.sender.http, bot.sender.url)
    await late.interaction(click)
    await bot.idle()
    (opened,) = fake_slack.calls_to("views.open")
    assert opened.params["trigger_id"] == click["trigger_id"]
    assert await pool.fetchval("SELECT vote FROM feedback") == -1
    (thanks,) = fake_slack.calls_to("chat.postEphemeral")
    assert thanks.params["text"] == FEEDBACK_THANKS
