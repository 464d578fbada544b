"""A private channel's threads are quoted in that channel and nowhere else, with no
setting at all (issue 21: "a private channel's threads are only ever visible in that
channel by default").

The `slack` source syncs a private channel (against the strict fake of Slack's history
methods); the bot, with the default access (every channel may see everything), is then
asked through signed mentions in that channel and in another, and in a DM.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import asyncpg

from jobs.config import SlackSettings, SlackSourceConfig
from tests.bot.slack.conftest import runtime_on
from tests.bot.slack.rig import FakeSlack, mention, payload
from tests.jobs.fake_slack_history import TOKEN, running_fake_slack_history

PRIVATE = "G0SECRET1"  # a private channel the bot is in
QUESTION = "Where is the break-glass password for the production database kept?"
SECRET = "red vault"  # only in the private thread


async def sync_private_thread(pool: asyncpg.Pool, embedder: Any) -> None:
    async for history in running_fake_slack_history():
        history.add_user("U0ALICE01", "Alice")
        history.add_user("U0BOB0001", "Bob")
        history.add_channel(PRIVATE, "secret-ops", is_private=True)
        parent = history.post(PRIVATE, "U0ALICE01", QUESTION)
        history.post(
            PRIVATE,
            "U0BOB0001",
            f"The break-glass password is in the {SECRET}, shelf three.",
            thread_ts=parent,
        )
        settings = SlackSettings(
            base_url=history.base_url, token_env="SLACK_HISTORY", channels=["secret-ops"]
        )
        job = (await runtime_on(pool, embedder)).reindex_job(
            base_dir=Path("."), credentials={"SLACK_HISTORY": TOKEN}
        )
        outcome = await job.run([SlackSourceConfig(name="ops-threads", settings=settings)])
        assert not outcome.errors and outcome.reports[0].documents_added == 1


def answer_text(fake: FakeSlack, channel: str) -> str:
    updates = [c for c in fake.calls_to("chat.update") if c.params["channel"] == channel]
    return json.dumps([u.params.get("blocks") for u in updates]) + str(
        [u.params.get("text") for u in updates]
    )


async def test_a_private_channels_thread_is_quoted_there_and_nowhere_else(
    start_bot: Any, corpus: asyncpg.Pool, embedder: Any, fake_slack: FakeSlack
) -> None:
    await sync_private_thread(corpus, embedder)
    fake_slack.joined.add(PRIVATE)
    fake_slack.kinds[PRIVATE] = "private_channel"
    bot = await start_bot()  # the default access: every channel may see everything

    await bot.sender.event(
        mention(QUESTION, ts="1700000100.000100", event_id="EvPub", channel="C111")
    )
    await fake_slack.wait_for("chat.update", where=lambda c: c.params["channel"] == "C111")
    await bot.sender.event(
        mention(QUESTION, ts="1700000200.000100", event_id="EvPriv", channel=PRIVATE)
    )
    await fake_slack.wait_for("chat.update", where=lambda c: c.params["channel"] == PRIVATE)
    dm = payload("event_message_im_in_thread.json")
    dm["event_id"] = "EvDm"
    dm["event"] |= {"text": QUESTION, "ts": "1700000300.000100", "channel": "D111"}
    dm["event"].pop("thread_ts", None)
    await bot.sender.event(dm)
    await fake_slack.wait_for("chat.update", where=lambda c: c.params["channel"] == "D111")
    await bot.idle()

    # Cited (with its title, "#secret-ops: …") where it may be read; which sentence of a
    # two-line thread the extractive reasoner quotes is the reasoner's business.
    assert "#secret-ops" in answer_text(fake_slack, PRIVATE)
    for elsewhere in ("C111", "D111"):
        shown = answer_text(fake_slack, elsewhere)
        assert "#secret-ops" not in shown and SECRET not in shown


def test_a_hidden_collection_stays_hidden_through_every_narrowing() -> None:
    from bot.slack.access.config import Access

    everything = Access().hiding(frozenset({"secret-ops"}))
    assert not everything.allows("secret-ops") and everything.allows("handbook")
    assert everything.scope.excluded_collections == ("secret-ops",)
    assert everything.scope.collections is None
    listed = Access(("handbook", "secret-ops"))
    for narrowed in (listed.narrowed_to(everything), everything.narrowed_to(listed)):
        assert not narrowed.allows("secret-ops") and narrowed.allows("handbook")
    assert Access().scope.restricts is False  # nothing hidden: no filter at all
