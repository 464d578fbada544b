"""`kb sources --check --online` for the github and slack kinds: authenticate, count, name a few."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from jobs.config import GitHubSettings, GitHubSourceConfig, SlackSettings, SlackSourceConfig
from jobs.connectors.base import OnlineCheck
from jobs.connectors.errors import MissingCredentialError
from jobs.github.client import GitHubError
from jobs.sources import build_source
from tests.jobs import fake_github, fake_slack_history
from tests.jobs.fake_github import FakeGitHub, running_fake_github
from tests.jobs.fake_slack_history import FakeSlackHistory, running_fake_slack_history


@pytest.fixture
async def github() -> AsyncIterator[FakeGitHub]:
    async for fake in running_fake_github():
        fake.add_repo("acme/handbook", {"README.md": "# Hi\n", "docs/a.md": "# A\n", "x.py": ""})
        yield fake


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlackHistory]:
    async for fake in running_fake_slack_history():
        fake.add_user("U1", "Alice")
        fake.add_channel("C0HELP001", "help")
        parent = fake.post("C0HELP001", "U1", "how?")
        fake.post("C0HELP001", "U1", "like so", thread_ts=parent)
        yield fake


def github_config(fake: FakeGitHub) -> GitHubSourceConfig:
    settings = GitHubSettings(base_url=fake.base_url, repositories=["acme/handbook"])
    return GitHubSourceConfig(name="gh", settings=settings)


async def test_a_github_check_counts_the_doc_files_it_can_read(github: FakeGitHub) -> None:
    source = build_source(
        github_config(github),
        base_dir=Path("."),
        credentials={"GITHUB_TOKEN": fake_github.TOKEN},
    )
    assert isinstance(source, OnlineCheck)
    seen = await source.check()
    assert seen.visible == 2
    assert seen.describe() == (
        "2 document(s) visible, e.g. 'acme/handbook/README.md', 'acme/handbook/docs/a.md'"
    )


async def test_a_check_without_the_variable_or_with_a_bad_token_is_one_line(
    github: FakeGitHub,
) -> None:
    with pytest.raises(MissingCredentialError, match="GITHUB_TOKEN is not set"):
        build_source(github_config(github), base_dir=Path("."), credentials={})
    source = build_source(
        github_config(github), base_dir=Path("."), credentials={"GITHUB_TOKEN": "ghp_old"}
    )
    assert isinstance(source, OnlineCheck)
    with pytest.raises(GitHubError, match="refused the token in GITHUB_TOKEN"):
        await source.check()


async def test_a_slack_check_counts_the_threads_of_its_channels(slack: FakeSlackHistory) -> None:
    settings = SlackSettings(base_url=slack.base_url, channels=["help"])
    source = build_source(
        SlackSourceConfig(name="threads", settings=settings),
        base_dir=Path("."),
        credentials={"SLACK_BOT_TOKEN": fake_slack_history.TOKEN},
    )
    assert isinstance(source, OnlineCheck)
    seen = await source.check()
    assert (seen.visible, seen.titles) == (1, ("#help",))


async def test_a_private_channel_is_read_and_marked_visible_only_in_itself(
    slack: FakeSlackHistory,
) -> None:
    from jobs.connectors.base import ConnectorContext
    from jobs.documents import SourceDocument
    from jobs.slack_threads.builder import build_slack_source

    slack.add_channel("G0SECRET1", "secret-ops", is_private=True)
    parent = slack.post("G0SECRET1", "U1", "Where is the break-glass password?")
    slack.post("G0SECRET1", "U1", "In the red vault.", thread_ts=parent)
    credentials = {"SLACK_BOT_TOKEN": fake_slack_history.TOKEN}

    async def items(**settings: object) -> list[object]:
        config = SlackSourceConfig(
            name="threads",
            settings=SlackSettings(base_url=slack.base_url, channels=["secret-ops"], **settings),
        )
        source = build_slack_source(config, ConnectorContext(credentials=credentials))
        return [item async for item in source.documents()]

    # By default its threads are searched in that channel only (store/private_collections.py).
    (document,) = await items()
    assert isinstance(document, SourceDocument) and document.collection == "secret-ops"
    assert document.metadata["slack"]["visible_only_in"] == "G0SECRET1"
    # A collection the admin named hands the decision to slack.toml: no mark.
    (document,) = await items(collections={"secret-ops": "secret-ops-only"})
    assert isinstance(document, SourceDocument) and document.collection == "secret-ops-only"
    assert document.metadata["slack"]["private"] is True
    assert "visible_only_in" not in document.metadata["slack"]
