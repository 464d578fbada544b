"""A repository's wiki as documents: git over smart HTTP (dulwich) against dulwich's own
git server, beside the strict fake of GitHub's REST API.

Issue 21 item 3 asks for "the repository wiki"; GitHub serves it only as a git repository.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import asyncpg
import pytest

from jobs.config import GitHubSettings, GitHubSourceConfig
from jobs.reindex import ReindexJob
from tests.jobs.fake_github import TOKEN, FakeGitHub, running_fake_github
from tests.jobs.fake_github_wiki import FakeWikis, serving_wikis

ONCALL = "# On call\n\nPage the SRE lead first, then open an incident channel.\n"


@pytest.fixture
async def github() -> AsyncIterator[FakeGitHub]:
    async for fake in running_fake_github():
        yield fake


@pytest.fixture
def wikis(github: FakeGitHub) -> AsyncIterator[FakeWikis]:
    with serving_wikis(github.token_valid) as wikis:
        # Repository pages (and so wiki URLs) live on the git server's host, as on GitHub.
        github.html_host = wikis.url
        github.add_repo("acme/handbook", {"README.md": "# Handbook\n\nHello.\n"})
        github.add_repo("acme/nowiki", {"README.md": "# No wiki\n\nNothing.\n"})
        wikis.write(
            "acme/handbook",
            {
                "Home.md": "# Welcome\n\nStart with the on-call page.\n",
                "On-call.md": ONCALL,
                "Release-checklist.md": "Tag the release and write the changelog entry.\n",
                "_Sidebar.md": "* [Home](Home)\n",
            },
        )
        yield wikis


@pytest.fixture
def job(reindex_job: Callable[[dict[str, str]], ReindexJob]) -> ReindexJob:
    return reindex_job({"GH_TOKEN": TOKEN})


def config(fake: FakeGitHub) -> GitHubSourceConfig:
    settings = GitHubSettings(
        base_url=fake.base_url,
        token_env="GH_TOKEN",
        repositories=["acme/handbook", "acme/nowiki"],
        wiki=True,
    )
    return GitHubSourceConfig(name="eng", collection="engineering", settings=settings)


WIKI_ROWS = "SELECT uri, url, title FROM documents WHERE uri LIKE '%.wiki/%' ORDER BY uri"


async def test_a_wiki_s_pages_are_documents_linked_to_their_wiki_pages(
    job: ReindexJob, github: FakeGitHub, wikis: FakeWikis, pool: asyncpg.Pool
) -> None:
    outcome = await job.run([config(github)])
    assert not outcome.errors  # a repository without a wiki is no error
    rows = await pool.fetch(WIKI_ROWS)
    assert [(r["uri"], r["url"], r["title"]) for r in rows] == [
        ("acme/handbook.wiki/Home.md", f"{wikis.url}/acme/handbook/wiki/Home", "Welcome"),
        ("acme/handbook.wiki/On-call.md", f"{wikis.url}/acme/handbook/wiki/On-call", "On call"),
        (
            "acme/handbook.wiki/Release-checklist.md",
            f"{wikis.url}/acme/handbook/wiki/Release-checklist",
            "Release checklist",
        ),
    ]  # the sidebar is no page
    statuses = {(path.split(".wiki.git")[0], status) for _, path, status in wikis.requests}
    assert statuses == {("/acme/handbook", 200), ("/acme/nowiki", 404)}


async def test_an_unchanged_wiki_costs_one_request_and_an_edit_re_reads_only_its_page(
    job: ReindexJob, github: FakeGitHub, wikis: FakeWikis, pool: asyncpg.Pool
) -> None:
    await job.run([config(github)])
    wikis.requests.clear()
    report = (await job.run([config(github)])).reports[0]
    handbook = [r for r in wikis.requests if r[1].startswith("/acme/handbook.wiki.git")]
    assert [(m, p.split("/")[-1]) for m, p, _ in handbook] == [("GET", "refs")]
    assert report.documents_unchanged == 3 + 2  # the wiki's pages and the READMEs
    wikis.write(
        "acme/handbook",
        {"On-call.md": ONCALL.replace("SRE lead", "duty manager"), "Home.md": None},
    )
    report = (await job.run([config(github)])).reports[0]
    assert (report.documents_updated, report.documents_deleted) == (1, 1)
    text = await pool.fetchval(
        "SELECT text FROM documents WHERE uri = 'acme/handbook.wiki/On-call.md'"
    )
    assert "duty manager" in text


async def test_credentials_git_refuses_fail_the_run_in_one_line(
    job: ReindexJob, github: FakeGitHub, wikis: FakeWikis
) -> None:
    accepted = github.token_valid
    # The REST API takes the token; the git server does not (a token without contents:read).
    wikis._token_valid = lambda token: False
    outcome = await job.run([config(github)])
    error = outcome.errors["eng"]
    assert "GH_TOKEN" in error and "401" in error and "\n" not in error
    assert TOKEN not in error
    wikis._token_valid = accepted
