"""The Web API client: the base URL it is given, and who the bot is, read once."""

from __future__ import annotations

import pytest

from bot.slack.errors import SlackBotError
from bot.slack.transport.web import bot_identity, build_web_client
from tests.bot.slack.rig import BOT_USER


async def test_the_identity_comes_from_auth_test_on_the_configured_base_url(fake_slack):
    client = build_web_client(token="xoxb-test", base_url=fake_slack.base_url.rstrip("/"))
    identity = await bot_identity(client)
    assert (identity.bot_user_id, identity.bot_token) == (BOT_USER, "xoxb-test")
    (call,) = fake_slack.calls_to("auth.test")
    assert call.headers["Authorization"] == "Bearer xoxb-test"


async def test_a_refused_token_is_one_line_that_names_the_variable_not_the_token(fake_slack):
    fake_slack.script("auth.test", status=200, body={"ok": False, "error": "invalid_auth"})
    client = build_web_client(token="xoxb-wrong-secret", base_url=fake_slack.base_url)
    with pytest.raises(SlackBotError) as error:
        await bot_identity(client)
    assert str(error.value) == "Slack refused the bot token (invalid_auth); check SLACK_BOT_TOKEN"
