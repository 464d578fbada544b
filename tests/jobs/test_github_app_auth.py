"""The `github` source as a GitHub App installation: githubkit signs the app's JWT, the strict
fake checks it and mints an installation token, and every other call carries that token.

Issue 21 item 3 asks for "a token or a GitHub App installation"; an organisation that does
not want a person's token behind its index installs an app instead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import asyncpg
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from pydantic import ValidationError

from jobs.config import GitHubSettings, GitHubSourceConfig, credential_envs
from jobs.reindex import ReindexJob
from tests.jobs.fake_github import FakeGitHub, running_fake_github
from tests.jobs.fake_github_wiki import serving_wikis

APP_ID, INSTALLATION = 31337, 4242
MakeJob = Callable[[dict[str, str]], ReindexJob]


def _key_pair() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


@pytest.fixture(scope="module")
def keys() -> tuple[str, str]:
    return _key_pair()


@pytest.fixture
async def github(keys: tuple[str, str]) -> AsyncIterator[FakeGitHub]:
    async for fake in running_fake_github():
        fake.register_app(APP_ID, keys[1], INSTALLATION)
        fake.token = "no personal token works on this fake"
        fake.add_repo("acme/runbooks", {"docs/oncall.md": "# On call\n\nPage the SRE lead.\n"})
        yield fake


def config(fake: FakeGitHub, installation: int = INSTALLATION) -> GitHubSourceConfig:
    settings = GitHubSettings(
        base_url=fake.base_url,
        app_id=APP_ID,
        installation_id=installation,
        private_key_env="GH_APP_KEY",
        repositories=["acme/runbooks"],
    )
    return GitHubSourceConfig(name="runbooks", collection="engineering", settings=settings)


async def test_an_app_installation_token_is_minted_once_and_used_for_every_call(
    reindex_job: MakeJob,
    github: FakeGitHub,
    keys: tuple[str, str],
) -> None:
    outcome = await reindex_job({"GH_APP_KEY": keys[0]}).run([config(github)])
    assert not outcome.errors
    assert outcome.reports[0].documents_added == 1
    mint, *calls = github.requests
    assert (mint.method, mint.path, mint.status) == (
        "POST",
        f"/app/installations/{INSTALLATION}/access_tokens",
        201,
    )
    assert mint.headers["Authorization"].startswith("Bearer ")
    (minted,) = github.apps[APP_ID].tokens
    assert calls and all(c.headers["Authorization"] == f"token {minted}" for c in calls)


async def test_a_key_the_app_does_not_have_fails_the_run_in_one_line_naming_the_app(
    reindex_job: MakeJob, github: FakeGitHub
) -> None:
    other_key, _ = _key_pair()
    outcome = await reindex_job({"GH_APP_KEY": other_key}).run([config(github)])
    error = outcome.errors["runbooks"]
    assert f"GitHub App {APP_ID}" in error and "GH_APP_KEY" in error and "401" in error
    assert "\n" not in error and "BEGIN" not in error  # one line, and never the key
    assert [r.status for r in github.requests] == [401]


async def test_a_wrong_installation_or_a_broken_key_says_what_to_fix(
    reindex_job: MakeJob,
    github: FakeGitHub,
    keys: tuple[str, str],
) -> None:
    outcome = await reindex_job({"GH_APP_KEY": keys[0]}).run([config(github, installation=9)])
    assert "no installation 9" in outcome.errors["runbooks"]
    truncated = keys[0][: len(keys[0]) // 2]
    outcome = await reindex_job({"GH_APP_KEY": truncated}).run([config(github)])
    error = outcome.errors["runbooks"]
    assert "GH_APP_KEY does not hold a GitHub App private key" in error
    assert truncated[40:80] not in error


def test_an_app_needs_both_ids_and_reads_only_its_key() -> None:
    with pytest.raises(ValidationError, match="both app_id and installation_id"):
        GitHubSettings(app_id=APP_ID, repositories=["acme/runbooks"])
    settings = GitHubSettings(
        app_id=APP_ID, installation_id=INSTALLATION, repositories=["acme/runbooks"]
    )
    source = GitHubSourceConfig(name="r", collection="c", settings=settings)
    assert credential_envs(source) == ["GITHUB_APP_PRIVATE_KEY"]
    token = GitHubSettings(repositories=["acme/runbooks"])
    assert credential_envs(GitHubSourceConfig(name="r", collection="c", settings=token)) == [
        "GITHUB_TOKEN"
    ]


async def test_an_app_reads_the_wiki_with_an_installation_token_as_git_s_password(
    pool: asyncpg.Pool,
    reindex_job: MakeJob,
    github: FakeGitHub,
    keys: tuple[str, str],
) -> None:
    with serving_wikis(github.token_valid) as wikis:
        github.html_host = wikis.url
        wikis.write("acme/runbooks", {"Escalation.md": "# Escalation\n\nCall the duty manager.\n"})
        source = config(github)
        settings = source.settings.model_copy(update={"wiki": True})
        outcome = await reindex_job({"GH_APP_KEY": keys[0]}).run(
            [source.model_copy(update={"settings": settings})]
        )
    assert not outcome.errors
    assert (
        await pool.fetchval(
            "SELECT count(*) FROM documents WHERE uri = 'acme/runbooks.wiki/Escalation.md'"
        )
        == 1
    )
    assert len(github.apps[APP_ID].tokens) == 2  # one for the REST calls, one for git
