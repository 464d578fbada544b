"""The fake Web API refuses what Slack refuses, through slack_sdk as the bot calls it: a
regression that makes the bot send an over-long section, too many blocks or a bad view
then fails the test that sent it, instead of passing against a fake that accepts all."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from tests.bot.slack.rig import FakeSlack


@pytest.fixture
async def client() -> AsyncIterator[AsyncWebClient]:
    slack = FakeSlack()
    await slack.start()
    try:
        yield AsyncWebClient(token="xoxb-test", base_url=slack.base_url)
    finally:
        await slack.close()


def section(text: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


async def refused(call) -> SlackApiError:  # type: ignore[no-untyped-def]
    with pytest.raises(SlackApiError) as caught:
        await call
    return caught.value


async def test_a_message_within_block_kit_limits_is_posted(client: AsyncWebClient) -> None:
    ok = await client.chat_postMessage(channel="C111", text="hi", blocks=[section("x" * 3000)])
    assert ok["ok"]


async def test_a_section_over_3000_characters_is_invalid_blocks(client: AsyncWebClient) -> None:
    error = await refused(
        client.chat_postMessage(channel="C111", text="hi", blocks=[section("x" * 3001)])
    )
    assert error.response["error"] == "invalid_blocks"
    assert error.response["response_metadata"]["messages"] == [
        "[ERROR] must be less than 3001 characters [json-pointer:/blocks/0/text/text]"
    ]


async def test_51_blocks_and_a_long_button_are_refused(client: AsyncWebClient) -> None:
    error = await refused(
        client.chat_postMessage(channel="C111", text="hi", blocks=[section("x")] * 51)
    )
    assert "must be less than 51 items [json-pointer:/blocks]" in str(
        error.response["response_metadata"]["messages"]
    )
    button = {"type": "button", "text": {"type": "plain_text", "text": "b" * 76}, "value": "v"}
    error = await refused(
        client.chat_postMessage(
            channel="C111", text="hi", blocks=[{"type": "actions", "elements": [button]}]
        )
    )
    assert error.response["error"] == "invalid_blocks"


async def test_a_message_without_text_or_blocks_and_an_over_long_text(
    client: AsyncWebClient,
) -> None:
    with pytest.warns(UserWarning, match="text"):  # slack_sdk warns first, as it should
        empty = await refused(client.chat_postMessage(channel="C111"))
    assert empty.response["error"] == "no_text"
    long = await refused(client.chat_postMessage(channel="C111", text="x" * 40001))
    assert long.response["error"] == "msg_too_long"


async def test_a_view_with_a_long_title_or_too_many_blocks_is_invalid_arguments(
    client: AsyncWebClient,
) -> None:
    title = {"type": "plain_text", "text": "t" * 25}
    error = await refused(
        client.views_open(trigger_id="1.2.x", view={"type": "modal", "title": title, "blocks": []})
    )
    assert error.response["error"] == "invalid_arguments"
    home = {"type": "home", "blocks": [section("x")] * 101}
    error = await refused(client.views_publish(user_id="U1", view=home))
    assert "must be less than 101 items [json-pointer:/view/blocks]" in str(
        error.response["response_metadata"]["messages"]
    )
