"""The fake Web API's message streams answer as Slack's do (docs.slack.dev/reference/methods/
chat.startStream, chat.appendStream, chat.stopStream): what the streaming tests lean on.

Driven through slack_sdk's own client, including its `chat_stream` helper."""

from __future__ import annotations

from typing import Any

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from tests.bot.slack.rig import BOT_TOKEN, FakeSlack

THREAD = "1700000000.000100"
RECIPIENT = {"recipient_team_id": "T111", "recipient_user_id": "W222"}


def client_of(fake: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token=BOT_TOKEN, base_url=fake.base_url)


async def error_of(call: Any) -> str:
    with pytest.raises(SlackApiError) as refused:
        await call
    return str(refused.value.response["error"])


async def test_a_stream_grows_with_each_append_and_ends_with_its_blocks_below(fake_slack):
    fake_slack.streaming = True
    stream = await client_of(fake_slack).chat_stream(
        channel="C111", thread_ts=THREAD, buffer_size=1, **RECIPIENT
    )
    await stream.append(markdown_text="Searching… ")
    await stream.append(markdown_text="- “a quote” [1]")
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "Sources"}}]
    stopped = await stream.stop(blocks=blocks, metadata={"event_type": "e", "event_payload": {}})
    (message,) = fake_slack.messages["C111"]
    assert message["ts"] == stopped["ts"] and message["thread_ts"] == THREAD
    assert message["blocks"] == [
        {"type": "markdown", "text": "Searching… - “a quote” [1]"},
        *blocks,
    ]
    assert message["streaming_state"] == "completed" and message["metadata"]["event_type"] == "e"


async def test_stream_calls_are_refused_as_slack_refuses_them(fake_slack):
    fake_slack.streaming = True
    client = client_of(fake_slack)
    start = client.chat_startStream
    assert await error_of(start(channel="C111", thread_ts="", **RECIPIENT)) == "invalid_arguments"
    no_team = start(channel="C111", thread_ts=THREAD, recipient_user_id="W222")
    assert await error_of(no_team) == "missing_recipient_team_id"
    no_user = start(channel="C111", thread_ts=THREAD, recipient_team_id="T111")
    assert await error_of(no_user) == "missing_recipient_user_id"
    started = await start(channel="D111", thread_ts=THREAD)  # a DM needs no recipient
    ts = str(started["ts"])
    unknown = client.chat_appendStream(channel="D111", ts="1.2", markdown_text="x")
    assert await error_of(unknown) == "message_not_found"
    assert await error_of(client.chat_appendStream(channel="D111", ts=ts)) == "invalid_arguments"
    too_long = client.chat_appendStream(channel="D111", ts=ts, markdown_text="x" * 12_001)
    assert await error_of(too_long) == "msg_too_long"
    bad_chunk = client.chat_appendStream(channel="D111", ts=ts, chunks=[{"text": "x"}])
    assert await error_of(bad_chunk) == "invalid_chunks"
    await client.chat_stopStream(channel="D111", ts=ts)
    after = client.chat_appendStream(channel="D111", ts=ts, markdown_text="late")
    assert await error_of(after) == "message_not_in_streaming_state"
    again = client.chat_stopStream(channel="D111", ts=ts)
    assert await error_of(again) == "message_not_in_streaming_state"


async def test_a_slack_without_streams_does_not_know_the_methods(fake_slack):
    start = client_of(fake_slack).chat_startStream(channel="C111", thread_ts=THREAD, **RECIPIENT)
    assert await error_of(start) == "unknown_method"
