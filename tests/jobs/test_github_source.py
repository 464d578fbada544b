"""The `github` source end to end: the real reindex job, githubkit, the strict fake of GitHub.

The promises of issue 21: a doc edited in a new commit re-embeds only that file's changed
chunks; an unchanged repository costs one (conditional, 304) request; a deleted file is
deleted; issues are documents with their comments; nothing needs the network.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import asyncpg
import pytest

from jobs.config import GitHubSettings, GitHubSourceConfig
from jobs.reindex import ReindexJob
from tests.jobs.fake_github import TOKEN, FakeGitHub, FakeIssue, running_fake_github

GUIDE = """# Deploy guide

## Before you start

Ask the on-call engineer for a deploy slot in the ops channel. Deploys are frozen on
Fridays after noon and during the last week of the quarter.

## Rolling out

Run the pipeline from the main branch. The canary takes fifteen minutes; watch the error
budget dashboard while it runs and roll back if the error rate doubles.

## After the deploy

Write a short note in the changelog with the version and anything that surprised you.
"""


@pytest.fixture
async def github() -> AsyncIterator[FakeGitHub]:
    async for fake in running_fake_github():
        fake.add_repo(
            "acme/handbook",
            {
                "README.md": "# Handbook\n\nThe team's handbook lives here.\n",
                "docs/deploy.md": GUIDE,
                "docs/setup.rst": "Setup\n=====\n\nInstall the CLI with pipx.\n",
                "src/app.py": "print('not a doc')\n",
            },
        )
        yield fake


@pytest.fixture
def job(reindex_job: Callable[[dict[str, str]], ReindexJob]) -> ReindexJob:
    return reindex_job({"GH_DOCS_TOKEN": TOKEN})


def config(fake: FakeGitHub, **settings: object) -> GitHubSourceConfig:
    values = {
        "base_url": fake.base_url,
        "token_env": "GH_DOCS_TOKEN",
        "repositories": ["acme/handbook"],
        **settings,
    }
    return GitHubSourceConfig(
        name="eng", collection="engineering", settings=GitHubSettings(**values)
    )


async def test_a_first_sync_indexes_the_doc_files_with_their_pages_on_the_default_branch(
    job: ReindexJob, github: FakeGitHub, pool: asyncpg.Pool
) -> None:
    outcome = await job.run([config(github)])
    assert not outcome.errors
    (report,) = outcome.reports
    assert report.documents_added == 3  # src/app.py is no doc
    rows = await pool.fetch("SELECT uri, url, title, source_updated_at FROM documents ORDER BY uri")
    assert [r["uri"] for r in rows] == [
        "acme/handbook/README.md",
        "acme/handbook/docs/deploy.md",
        "acme/handbook/docs/setup.rst",
    ]
    deploy = rows[1]
    assert deploy["url"] == "https://github.example.com/acme/handbook/blob/main/docs/deploy.md"
    assert deploy["title"] == "Deploy guide"
    assert deploy["source_updated_at"] == github.repos["acme/handbook"].head.date
    assert all(r.headers.get("X-GitHub-Api-Version") for r in github.requests)


async def test_an_unchanged_repository_costs_one_conditional_request(
    job: ReindexJob, github: FakeGitHub
) -> None:
    await job.run([config(github)])
    github.requests.clear()
    outcome = await job.run([config(github)])
    assert outcome.reports[0].documents_unchanged == 3
    assert not outcome.reports[0].changed
    (request,) = github.requests
    assert (request.path, request.status) == ("/repos/acme/handbook/commits/main", 304)
    assert request.headers["If-None-Match"]


async def test_a_doc_edited_in_a_new_commit_re_embeds_only_its_changed_chunks(
    job: ReindexJob, github: FakeGitHub
) -> None:
    first = (await job.run([config(github)])).reports[0]
    edited = GUIDE.replace("fifteen minutes", "twenty minutes")
    github.push("acme/handbook", {"docs/deploy.md": edited})
    github.requests.clear()
    report = (await job.run([config(github)])).reports[0]
    assert (report.documents_updated, report.documents_unchanged) == (1, 2)
    assert 1 <= report.chunks_embedded < first.chunks_embedded
    assert report.chunks_reused >= 1  # the guide's untouched sections
    fetched = [r.path for r in github.requests if "/git/blobs/" in r.path]
    assert len(fetched) == 1  # only the edited file's bytes


async def test_a_file_deleted_from_the_branch_is_deleted_from_the_index(
    job: ReindexJob, github: FakeGitHub, pool: asyncpg.Pool
) -> None:
    await job.run([config(github)])
    github.push("acme/handbook", {"docs/setup.rst": None})
    report = (await job.run([config(github)])).reports[0]
    assert report.documents_deleted == 1
    uris = {r["uri"] for r in await pool.fetch("SELECT uri FROM documents")}
    assert "acme/handbook/docs/setup.rst" not in uris and len(uris) == 2


async def test_a_refused_token_fails_the_run_in_one_line_and_deletes_nothing(
    job: ReindexJob, github: FakeGitHub, pool: asyncpg.Pool
) -> None:
    await job.run([config(github)])
    github.token = "ghp_rotated"
    outcome = await job.run([config(github)])
    assert "GH_DOCS_TOKEN" in outcome.errors["eng"] and "401" in outcome.errors["eng"]
    assert await pool.fetchval("SELECT count(*) FROM documents") == 3


async def test_answered_issues_are_documents_with_their_comments_and_follow_since(
    job: ReindexJob, github: FakeGitHub, pool: asyncpg.Pool
) -> None:
    repo = github.repos["acme/handbook"]
    repo.issues[7] = FakeIssue(
        7,
        "Deploy stuck on canary",
        "The canary never finishes.",
        state="closed",
        state_reason="completed",
        comments=[("dana", "Raise the canary timeout to thirty minutes."), ("eli", "Thanks!")],
    )
    repo.issues[8] = FakeIssue(8, "Open question", "Still open.")
    repo.issues[9] = FakeIssue(9, "A pull request", "diff", state="closed", pull_request=True)
    await job.run([config(github, issues="answered")])
    row = await pool.fetchrow(
        "SELECT url, title, text FROM documents WHERE uri = 'acme/handbook/issues/7'"
    )
    assert row["url"] == "https://github.example.com/acme/handbook/issues/7"
    assert row["title"] == "Deploy stuck on canary (#7)"
    assert row["text"].index("canary never") < row["text"].index("## Reply by dana")
    assert row["text"].index("Raise the canary") < row["text"].index("## Reply by eli")
    count = "SELECT count(*) FROM documents WHERE uri LIKE '%/issues/%'"
    assert await pool.fetchval(count) == 1
    # Reopened: the next run sees it by `since=` and removes it.
    repo.issues[7].state, repo.issues[7].state_reason = "open", "reopened"
    repo.issues[7].updated_at = repo.issues[7].updated_at.replace(day=20)
    github.requests.clear()
    await job.run([config(github, issues="answered")])
    (listing,) = [r for r in github.requests if r.path.endswith("/issues")]
    assert listing.query["since"].startswith("2026-11-01")
    assert await pool.fetchval(count) == 0
