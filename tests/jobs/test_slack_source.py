"""The `slack` source end to end: threads synced by the real reindex, then asked about.

Through the app's own wiring (bot/wiring.py: the reindex job and the answer loop the CLI's
`kb ask` calls), slack_sdk, and the strict fake of Slack's history methods. The promises
of issue 21: a thread answered in #help is quoted with its permalink; an edited reply
changes the quote; a deleted thread disappears; a private channel's thread (in the
collection its channel alone may see) is not quoted elsewhere; bots, the bot's own answers
and joins are left out; `kb stats` counts the answers that came from Slack threads.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.settings import Settings
from bot.wiring import Runtime, open_runtime
from jobs.config import SlackSettings, SlackSourceConfig
from store.stats import StatsReader
from tests.jobs.fake_slack_history import (
    BOT_ID,
    BOT_USER,
    TOKEN,
    WORKSPACE,
    FakeSlackHistory,
    running_fake_slack_history,
)

HELP, PRIVATE = "C0HELP001", "G0SECRET1"
_DAY = 86_400


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlackHistory]:
    async for fake in running_fake_slack_history():
        fake.add_user("U0ALICE01", "Alice")
        fake.add_user("U0BOB0001", "Bob Builder")
        fake.add_channel(HELP, "help")
        fake.add_channel(PRIVATE, "secret-ops", is_private=True)
        yield fake


@pytest.fixture
async def runtime(database_url: str, tmp_path: Path) -> AsyncIterator[Runtime]:
    settings = Settings(DATABASE_URL=database_url, KB_HOME=tmp_path, KB_SOURCES=tmp_path / "none")
    async with open_runtime(settings) as runtime:
        yield runtime


def config(fake: FakeSlackHistory, *channels: str, **settings: Any) -> SlackSourceConfig:
    return SlackSourceConfig(
        name="slack",
        settings=SlackSettings(
            base_url=fake.base_url,
            token_env="SLACK_HISTORY_TOKEN",
            channels=list(channels or ["help"]),
            **settings,
        ),
    )


async def sync(runtime: Runtime, fake: FakeSlackHistory, cfg: SlackSourceConfig) -> Any:
    job = runtime.reindex_job(base_dir=Path("."), credentials={"SLACK_HISTORY_TOKEN": TOKEN})
    outcome = await job.run([cfg])
    assert not outcome.errors, outcome.errors
    return outcome.reports[0]


def ask_vpn_thread(fake: FakeSlackHistory) -> str:
    parent = fake.post(HELP, "U0ALICE01", "How do I reset my VPN token?", at=fake.now() - 2 * _DAY)
    fake.post(HELP, BOT_USER, "Searching…", thread_ts=parent, bot_id=BOT_ID)
    fake.post(
        HELP, "U0BOB0001", "<@U0BOB0001> has joined", thread_ts=parent, subtype="channel_join"
    )
    fake.post(
        HELP,
        "U0BOB0001",
        "Open the self-service portal at <https://vpn.example.com|vpn.example.com> and press "
        "Reset token; the new token works after five minutes.",
        thread_ts=parent,
        at=fake.now() - _DAY,
    )
    return parent


async def test_a_thread_answered_in_help_is_quoted_with_its_permalink_and_follows_edits(
    runtime: Runtime, slack: FakeSlackHistory, pool: asyncpg.Pool
) -> None:
    parent = ask_vpn_thread(slack)
    slack.post(HELP, "U0ALICE01", "Lunch anyone?")  # no replies: not a thread
    report = await sync(runtime, slack, config(slack))
    assert report.documents_added == 1
    row = await pool.fetchrow("SELECT uri, url, title, text FROM documents")
    permalink = f"{WORKSPACE}/archives/{HELP}/p{parent.replace('.', '')}"
    assert row["url"] == permalink
    assert row["title"] == "#help: How do I reset my VPN token?"
    assert "Searching" not in row["text"] and "joined" not in row["text"]
    assert row["text"].startswith("Alice asked:")

    answer = await runtime.answerer().answer("How do I reset my VPN token?")
    assert answer.covered
    assert any(c.url == permalink for c in answer.citations)
    assert any("five minutes" in c.quote for c in answer.claims)

    reply = next(m for m in slack.channels[HELP].messages if "portal" in m["text"])
    slack.edit(HELP, reply["ts"], reply["text"].replace("five minutes", "ten minutes"))
    report = await sync(runtime, slack, config(slack))
    assert report.documents_updated == 1
    answer = await runtime.answerer().answer("How do I reset my VPN token?")
    assert any("ten minutes" in c.quote for c in answer.claims)
    assert not any("five minutes" in c.quote for c in answer.claims)
    by_kind = await StatsReader(pool).answers_by_kind(since=datetime.now(UTC) - timedelta(days=1))
    assert [(k.kind, k.answers) for k in by_kind] == [("slack", 2)]


async def test_a_thread_deleted_in_slack_disappears_and_an_unchanged_one_is_not_rewritten(
    runtime: Runtime, slack: FakeSlackHistory, pool: asyncpg.Pool
) -> None:
    parent = ask_vpn_thread(slack)
    await sync(runtime, slack, config(slack))
    again = await sync(runtime, slack, config(slack))
    assert (again.documents_unchanged, again.chunks_embedded) == (1, 0)
    slack.delete_thread(HELP, parent)
    report = await sync(runtime, slack, config(slack))
    assert report.documents_deleted == 1
    assert await pool.fetchval("SELECT count(*) FROM documents") == 0
    answer = await runtime.answerer().answer("How do I reset my VPN token?")
    assert not any(WORKSPACE in (c.url or "") for c in answer.citations)


async def test_a_private_channels_thread_is_quoted_in_that_channel_and_nowhere_else(
    runtime: Runtime, slack: FakeSlackHistory
) -> None:
    from bot.slack.access.config import AccessPolicy

    parent = slack.post(PRIVATE, "U0ALICE01", "Where is the break-glass password kept?")
    slack.post(PRIVATE, "U0BOB0001", "In the red vault, shelf three.", thread_ts=parent)
    ask_vpn_thread(slack)
    cfg = config(slack, "help", "secret-ops", collections={"secret-ops": "secret-ops-only"})
    assert (await sync(runtime, slack, cfg)).documents_added == 2
    policy = AccessPolicy.from_toml(
        f'[access]\ndefault = ["help"]\n[access.channels]\n{PRIVATE} = ["secret-ops-only"]\n',
        where="slack.toml",
    )
    question = "Where is the break-glass password kept?"
    inside = await runtime.answerer().answer(question, scope=policy.for_channel(PRIVATE).scope)
    # Found and cited where it may be seen (which sentence the extractive reasoner quotes
    # from a two-line thread is the reasoner's business, not the source's).
    assert [c.collection for c in inside.citations] == ["secret-ops-only"]
    outside = await runtime.answerer().answer(question, scope=policy.for_channel(HELP).scope)
    assert not any("red vault" in c.quote or "break-glass" in c.quote for c in outside.claims)
    assert all(c.collection == "help" for c in outside.citations)


async def test_a_refresh_reads_only_the_touched_thread_and_leaves_the_cursor(
    runtime: Runtime, slack: FakeSlackHistory, pool: asyncpg.Pool
) -> None:
    parent = ask_vpn_thread(slack)
    other = slack.post(HELP, "U0ALICE01", "Where is the style guide?", at=slack.now() - 3 * _DAY)
    slack.post(HELP, "U0BOB0001", "On the wiki, under Writing.", thread_ts=other)
    await sync(runtime, slack, config(slack))
    cursor = await pool.fetchval("SELECT cursor FROM source_cursors WHERE source = 'slack'")
    reply = next(m for m in slack.channels[HELP].messages if "portal" in m["text"])
    slack.edit(HELP, reply["ts"], reply["text"].replace("five minutes", "ten minutes"))
    slack.calls.clear()
    job = runtime.reindex_job(base_dir=Path("."), credentials={"SLACK_HISTORY_TOKEN": TOKEN})
    outcome = await job.refresh(config(slack), [f"{HELP}/{parent}", "C0ELSEWHERE/1.000100"])
    assert not outcome.errors
    (report,) = outcome.reports
    assert (report.documents_updated, report.documents_unchanged) == (1, 1)
    assert not slack.calls_to("conversations.history")
    assert [c.params["ts"] for c in slack.calls_to("conversations.replies")] == [parent]
    text = await pool.fetchval("SELECT text FROM documents WHERE uri = $1", f"{HELP}/{parent}")
    assert "ten minutes" in text
    after = await pool.fetchval("SELECT cursor FROM source_cursors WHERE source = 'slack'")
    assert after == cursor
    # Deleted in Slack: the refresh deletes it, and only it.
    slack.delete_thread(HELP, parent)
    (report,) = (await job.refresh(config(slack), [f"{HELP}/{parent}"])).reports
    assert (report.documents_deleted, report.documents_unchanged) == (1, 1)


async def test_a_private_channels_threads_are_hidden_outside_it_without_any_setting(
    runtime: Runtime, slack: FakeSlackHistory, pool: asyncpg.Pool
) -> None:
    from store.filters import ChunkFilter
    from store.private_collections import PrivateCollections

    parent = slack.post(PRIVATE, "U0ALICE01", "Where is the break-glass password kept?")
    slack.post(PRIVATE, "U0BOB0001", "In the red vault, shelf three.", thread_ts=parent)
    ask_vpn_thread(slack)
    # No collection named, no slack.toml: the private channel is read all the same.
    assert (await sync(runtime, slack, config(slack, "help", "secret-ops"))).documents_added == 2
    private = PrivateCollections(pool)
    assert await private.owners() == {"secret-ops": frozenset({PRIVATE})}
    assert await private.hidden_from(HELP) == {"secret-ops"}
    assert await private.hidden_from(None) == {"secret-ops"}  # DMs, the panel, App Home
    assert await private.hidden_from(PRIVATE) == set()
    question = "Where is the break-glass password kept?"
    outside = ChunkFilter(excluded_collections=tuple(await private.hidden_from(HELP)))
    answer = await runtime.answerer().answer(question, scope=outside)
    assert all(c.collection != "secret-ops" for c in answer.citations)
    inside = ChunkFilter(excluded_collections=tuple(await private.hidden_from(PRIVATE)))
    answer = await runtime.answerer().answer(question, scope=inside)
    assert [c.collection for c in answer.citations] == ["secret-ops"]


async def test_the_first_sync_reads_only_the_look_back_window(
    runtime: Runtime, slack: FakeSlackHistory
) -> None:
    old = slack.post(HELP, "U0ALICE01", "Ancient question?", at=slack.now() - 400 * _DAY)
    slack.post(HELP, "U0BOB0001", "Ancient answer.", thread_ts=old, at=slack.now() - 399 * _DAY)
    ask_vpn_thread(slack)
    report = await sync(runtime, slack, config(slack, lookback_days=30))
    assert report.documents_added == 1
    (history,) = slack.calls_to("conversations.history")
    assert float(history.params["oldest"]) == pytest.approx(slack.now() - 30 * _DAY, abs=120)
