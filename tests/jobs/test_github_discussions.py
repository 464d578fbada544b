"""GitHub discussions as documents, over GraphQL, through githubkit and the strict fake.

Issue 21 item 3: "optionally issues and discussions (title + body + comments,
closed-as-answered first)", synced by update time so a quiet repository costs little.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from jobs.config import GitHubSettings, GitHubSourceConfig
from jobs.reindex import ReindexJob
from tests.jobs.fake_github import TOKEN, FakeGitHub, running_fake_github
from tests.jobs.fake_github_graphql import FakeDiscussion, execute

T0 = datetime(2026, 11, 2, tzinfo=UTC)


@pytest.fixture
async def github() -> AsyncIterator[FakeGitHub]:
    async for fake in running_fake_github():
        repo = fake.add_repo("acme/platform", {"README.md": "# Platform\n\nOur platform.\n"})
        repo.discussions[1] = FakeDiscussion(
            1,
            "How do I rotate the staging database password?",
            "The old one leaked in a screenshot.",
            T0,
            comments=[
                ("eli", "Same question here."),
                ("dana", "Run `make rotate-staging` and paste the new secret into the vault."),
            ],
            answer=1,
        )
        repo.discussions[2] = FakeDiscussion(2, "Ideas for the offsite?", "Anything goes.", T0)
        yield fake


@pytest.fixture
def job(reindex_job: Callable[[dict[str, str]], ReindexJob]) -> ReindexJob:
    return reindex_job({"GH_TOKEN": TOKEN})


def config(fake: FakeGitHub, discussions: str = "answered") -> GitHubSourceConfig:
    settings = GitHubSettings(
        base_url=fake.base_url,
        token_env="GH_TOKEN",
        repositories=["acme/platform"],
        discussions=discussions,  # type: ignore[arg-type]
    )
    return GitHubSourceConfig(name="eng", collection="engineering", settings=settings)


def graphql_calls(fake: FakeGitHub) -> list[str]:
    return [r.path for r in fake.requests if r.path == "/api/graphql"]


async def test_an_answered_discussion_is_a_document_with_its_accepted_answer_first(
    job: ReindexJob, github: FakeGitHub, pool: asyncpg.Pool
) -> None:
    outcome = await job.run([config(github)])
    assert not outcome.errors
    row = await pool.fetchrow(
        "SELECT url, title, text FROM documents WHERE uri = 'acme/platform/discussions/1'"
    )
    assert row["url"] == "https://github.example.com/acme/platform/discussions/1"
    assert row["title"] == "How do I rotate the staging database password? (discussion #1)"
    text = row["text"]
    assert text.index("leaked") < text.index("## Answer by dana") < text.index("## Reply by eli")
    # Unanswered: not a document under `answered`, but one under `all`.
    count = "SELECT count(*) FROM documents WHERE uri LIKE '%/discussions/%'"
    assert await pool.fetchval(count) == 1
    await job.run([config(github, discussions="all")])
    assert await pool.fetchval(count) == 2


async def test_a_quiet_repository_reads_one_page_and_an_unmarked_answer_leaves(
    job: ReindexJob, github: FakeGitHub, pool: asyncpg.Pool
) -> None:
    repo = github.repos["acme/platform"]
    for n in range(3, 33):  # more than one page of 25
        repo.discussions[n] = FakeDiscussion(
            n,
            f"Old question {n}",
            "body",
            T0 - timedelta(days=n),
            comments=[("dana", "answer")],
            answer=0,
        )
    await job.run([config(github)])
    assert len(graphql_calls(github)) == 2
    github.requests.clear()
    await job.run([config(github)])
    assert len(graphql_calls(github)) == 1  # the newest page reaches back past `since`
    # The accepted answer is unmarked: the next run sees the update and removes it.
    repo.discussions[1].answer = None
    repo.discussions[1].updated_at = T0 + timedelta(days=1)
    github.requests.clear()
    report = (await job.run([config(github)])).reports[0]
    assert report.documents_deleted == 1
    assert len(graphql_calls(github)) == 1
    uris = {r["uri"] for r in await pool.fetch("SELECT uri FROM documents")}
    assert "acme/platform/discussions/1" not in uris and "acme/platform/discussions/3" in uris


async def test_the_fake_refuses_what_github_refuses() -> None:
    def repos(name: str) -> tuple[str, dict[int, FakeDiscussion]] | None:
        return ("https://github.example.com/" + name, {}) if name == "a/b" else None

    unknown_field = {
        "query": '{ repository(owner:"a", name:"b") { discussions(first: 1) { nodes { votes } } } }'
    }
    answer = await execute(repos, unknown_field)
    assert "votes" in answer["errors"][0]["message"] and "data" not in answer
    unpaged = {"query": '{ repository(owner:"a", name:"b") { discussions { totalCount } } }'}
    answer = await execute(repos, unpaged)
    assert "must provide a `first` or `last`" in answer["errors"][0]["message"]
    hidden = {"query": '{ repository(owner:"x", name:"y") { name } }'}
    answer = await execute(repos, hidden)
    assert answer["data"] == {"repository": None}
    assert answer["errors"][0]["type"] == "NOT_FOUND"
