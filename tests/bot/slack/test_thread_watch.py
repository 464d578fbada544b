"""Indexed Slack threads follow edits and deletions as Slack reports them (issue 21:
"`message_changed` / `message_deleted` events applied at once when the bot is running").

Signed event payloads (Slack's own shapes, tests/fixtures/slack/) go to the running bot;
its ThreadWatch reads the touched thread again through the real reindex job and the
`slack` source, against the strict fake of Slack's history methods.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.slack.transport.thread_watch import ThreadWatch, thread_of
from jobs.config import SlackSettings, SlackSourceConfig
from store.source_cursors import SourceCursorRepository
from tests.bot.slack.conftest import RunningBot, runtime_on
from tests.bot.slack.rig import payload
from tests.jobs.fake_slack_history import TOKEN, FakeSlackHistory, running_fake_slack_history

HELP = "C0HELP001"
DAY = 86_400


@pytest.fixture
async def history() -> AsyncIterator[FakeSlackHistory]:
    async for fake in running_fake_slack_history():
        fake.add_user("U0ALICE01", "Alice")
        fake.add_user("U0BOB0001", "Bob")
        fake.add_channel(HELP, "help")
        yield fake


def source(fake: FakeSlackHistory) -> SlackSourceConfig:
    settings = SlackSettings(base_url=fake.base_url, token_env="SLACK_HISTORY", channels=["help"])
    return SlackSourceConfig(name="help-threads", settings=settings)


def edited(channel: str, ts: str, thread_ts: str, text: str) -> dict[str, Any]:
    body = copy.deepcopy(payload("event_message_changed_channel.json"))
    body["event_id"] = f"Ev-edit-{ts}"
    body["event"] |= {"channel": channel}
    body["event"]["message"] |= {"ts": ts, "thread_ts": thread_ts, "text": text}
    return body


def deleted(channel: str, ts: str, thread_ts: str) -> dict[str, Any]:
    body = copy.deepcopy(payload("event_message_deleted.json"))
    body["event_id"] = f"Ev-delete-{ts}"
    body["event"] |= {"channel": channel, "deleted_ts": ts}
    body["event"]["previous_message"] |= {"ts": ts, "thread_ts": thread_ts}
    return body


async def until(condition: Callable[[], bool], timeout: float = 30) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.05)

    await asyncio.wait_for(poll(), timeout)


async def test_an_edit_and_a_deletion_reach_the_index_without_waiting_for_a_run(
    start_bot: Any, corpus: asyncpg.Pool, embedder: Any, history: FakeSlackHistory
) -> None:
    parent = history.post(HELP, "U0ALICE01", "How do I reset my VPN token?", at=history.now() - DAY)
    reply = history.post(
        HELP, "U0BOB0001", "Use the portal; it takes five minutes.", thread_ts=parent
    )
    job = (await runtime_on(corpus, embedder)).reindex_job(
        base_dir=Path("."), credentials={"SLACK_HISTORY": TOKEN}
    )
    config = source(history)
    assert not (await job.run([config])).errors
    watch = ThreadWatch(
        sources=[config],
        refresh=job.refresh,
        cursors=SourceCursorRepository(corpus),
        delay_seconds=0.05,
    )
    bot: RunningBot = await start_bot(thread_watch=watch)
    uri = f"{HELP}/{parent}"

    history.edit(HELP, reply, "Use the portal; it takes ten minutes.")
    history.calls.clear()
    sent = await bot.sender.event(
        edited(HELP, reply, parent, "Use the portal; it takes ten minutes.")
    )
    assert sent.status == 200
    await until(lambda: watch.refreshed == 1)
    text = await corpus.fetchval("SELECT text FROM documents WHERE uri = $1", uri)
    assert "ten minutes" in text
    assert not history.calls_to("conversations.history")  # one thread, not the channel

    history.delete_thread(HELP, parent)
    await bot.sender.event(deleted(HELP, parent, parent))
    await until(lambda: watch.refreshed == 2)
    assert await corpus.fetchval("SELECT count(*) FROM documents WHERE uri = $1", uri) == 0

    # A channel no slack source has synced costs nothing.
    history.calls.clear()
    await bot.sender.event(edited("C0ELSEWHERE", "1.000200", "1.000100", "whatever"))
    await bot.idle()
    await asyncio.sleep(0.3)
    assert watch.refreshed == 2 and not history.calls
    await watch.close()


def test_the_thread_of_each_kind_of_event() -> None:
    changed = payload("event_message_changed_channel.json")["event"]
    assert thread_of(changed) == "C111/1726133698.626339"
    removed = payload("event_message_deleted.json")["event"]
    assert thread_of(removed) == "C111/1665368619.804829"
    reply = payload("event_message_channel_in_thread.json")["event"]
    assert thread_of(reply) == "C111/1726133698.626339"
    assert thread_of(payload("event_app_mention.json")["event"]) is None
    bot_edit = copy.deepcopy(changed)
    bot_edit["message"]["bot_id"] = "B0BOT"
    assert thread_of(bot_edit) is None  # the bot's own answers are no part of a thread
    top_level = {k: v for k, v in reply.items() if k != "thread_ts"}
    assert thread_of(top_level) is None  # a new post is no thread yet


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(
    st.dictionaries(
        st.sampled_from(
            [
                "type",
                "subtype",
                "channel",
                "message",
                "previous_message",
                "ts",
                "thread_ts",
                "deleted_ts",
                "bot_id",
            ]
        ),
        _json,
    )
)
def test_any_payload_gives_a_thread_or_none_never_an_error(event: dict[str, Any]) -> None:
    found = thread_of(event)
    assert found is None or (found.count("/") >= 1 and found.split("/", 1)[1])
