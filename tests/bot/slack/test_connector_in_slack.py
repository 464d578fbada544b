"""A Confluence page in Slack, end to end (issue 23's Tests: "sync, ask a question ...
through a signed Slack mention, get the page quoted with its real URL; restrict the page,
sync, the channel no longer sees it").

The real reindex job syncs the strict Confluence fake (atlassian-python-api against it)
into the bot's database; the questions are signed `app_mention` events to the running
bot, the answers read off the fake Slack Web API.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg

from jobs.config import load_sources
from tests.bot.slack.conftest import runtime_on
from tests.bot.slack.rig import FakeSlack, mention
from tests.jobs.connectors.fake_confluence import FakeConfluence, Page, running_confluence

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
QUESTION = "When are production deploys frozen?"


async def test_a_confluence_page_is_quoted_in_slack_until_it_is_restricted(
    start_bot: Any, corpus: asyncpg.Pool, embedder: Any, fake_slack: FakeSlack, tmp_path: Path
) -> None:
    wiki = FakeConfluence()
    wiki.add(
        Page(
            "4242",
            "ENG",
            "Deploy freeze",
            "<h1>Deploy freeze</h1><p>Production deploys are frozen from Friday 15:00 "
            "until Monday 09:00.</p>",
            T0,
        )
    )
    wiki.add(Page("500", "ENG", "Parking", "<p>Permits are renewed every January.</p>", T0))
    async with running_confluence(wiki):
        sources = tmp_path / "sources.toml"
        sources.write_text(
            '[[source]]\nname = "wiki"\nkind = "confluence"\n[source.settings]\n'
            f'url = "{wiki.base_url}"\ncloud = true\nuser_env = "WIKI_USER"\n'
            'token_env = "WIKI_TOKEN"\nspaces = ["ENG"]\n'
        )
        (config,) = load_sources(sources)
        job = (await runtime_on(corpus, embedder)).reindex_job(
            base_dir=tmp_path, credentials={"WIKI_USER": "bot@acme.test", "WIKI_TOKEN": "api-token"}
        )
        assert not (await job.run([config])).errors
        bot = await start_bot()
        page_url = f"{wiki.base_url}/spaces/ENG/pages/4242/Deploy+freeze"

        await bot.sender.event(mention(QUESTION, ts="1700000001.000100", event_id="Ev1"))
        (first,) = await fake_slack.wait_for("chat.update")
        await bot.idle()
        shown = json.dumps(first.params["blocks"])
        assert "frozen from Friday 15:00" in shown and page_url in shown

        wiki.pages["4242"].restricted_to = ["release-managers"]  # no new version
        outcome = await job.run([config])
        assert outcome.reports[0].documents_deleted == 1
        await bot.sender.event(mention(QUESTION, ts="1700000002.000100", event_id="Ev2"))
        updates = await fake_slack.wait_for("chat.update", count=2)
        await bot.idle()
        shown = json.dumps(updates[-1].params["blocks"])
        assert "frozen from Friday" not in shown and page_url not in shown
