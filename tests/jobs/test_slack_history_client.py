"""The Slack calls of the `slack` source through slack_sdk against the strict local fake."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from jobs.slack_threads.client import (
    ChannelUnreadable,
    SlackHistoryApi,
    SlackSourceError,
    ThreadGone,
)
from tests.jobs.fake_slack_history import TOKEN, FakeSlackHistory, running_fake_slack_history


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlackHistory]:
    async for fake in running_fake_slack_history():
        fake.add_user("U1", "Alice")
        fake.add_user("U2", "Bob")
        yield fake


def api(fake: FakeSlackHistory, token: str = TOKEN) -> SlackHistoryApi:
    return SlackHistoryApi(token=token, token_env="SLACK_BOT_TOKEN", base_url=fake.base_url)


async def test_history_follows_cursors_and_a_429_is_waited_out(slack: FakeSlackHistory) -> None:
    slack.add_channel("C0HELP001", "help")
    for n in range(5):
        slack.post("C0HELP001", "U1", f"question {n}", at=slack.now() + n)
    slack.page_cap = 2
    slack.rate_limited["conversations.history"] = 1
    client = api(slack)
    channel = await client.channel("C0HELP001")
    texts = [m["text"] async for m in client.history(channel, oldest=0)]
    assert texts == [f"question {n}" for n in (4, 3, 2, 1, 0)]  # newest first
    calls = slack.calls_to("conversations.history")
    assert len(calls) == 1 + 3  # the 429, then three pages
    assert [("cursor" in c.params) for c in calls] == [False, False, True, True]


async def test_replies_names_and_permalinks(slack: FakeSlackHistory) -> None:
    slack.add_channel("C0HELP001", "help")
    parent = slack.post("C0HELP001", "U1", "how?")
    slack.post("C0HELP001", "U2", "like this", thread_ts=parent)
    client = api(slack)
    channel = await client.channel("C0HELP001")
    replies = await client.replies(channel, parent)
    assert [m["text"] for m in replies] == ["how?", "like this"]
    assert await client.display_name("U2") == "Bob"
    assert await client.display_name("U2") == "Bob"
    assert len(slack.calls_to("users.info")) == 1  # cached for the run
    assert (await client.permalink(channel, parent)).endswith(parent.replace(".", ""))
    with pytest.raises(ThreadGone):
        await client.replies(channel, "1.000001")


async def test_a_bad_token_names_its_variable_and_a_channel_without_the_bot_says_so(
    slack: FakeSlackHistory,
) -> None:
    slack.add_channel("C0OUT0001", "random", is_member=False)
    with pytest.raises(SlackSourceError, match="SLACK_BOT_TOKEN \\(invalid_auth\\)"):
        await api(slack, token="xoxb-wrong").bot_user()
    client = api(slack)
    channel = await client.channel("C0OUT0001")
    with pytest.raises(ChannelUnreadable, match="not_in_channel; invite the bot"):
        [m async for m in client.history(channel, oldest=0)]
    with pytest.raises(SlackSourceError, match="channel_not_found"):
        await client.channel("C0NOPE001")
