"""The GitHub calls through githubkit against the local fake: ETags, trees, blobs, limits, auth."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from jobs.github.client import GitHubApi, GitHubError, NotFound, Token
from tests.jobs.fake_github import TOKEN, FakeGitHub, FakeIssue, running_fake_github


@pytest.fixture
async def github() -> AsyncIterator[FakeGitHub]:
    async for fake in running_fake_github():
        yield fake


def api(fake: FakeGitHub, *, token: str = TOKEN) -> GitHubApi:
    return GitHubApi(Token(token, "GITHUB_TOKEN"), base_url=fake.base_url)


async def test_the_head_is_asked_for_with_its_etag_and_a_304_says_it_has_not_moved(
    github: FakeGitHub,
) -> None:
    github.add_repo("acme/handbook", {"README.md": "# Hi\n"})
    async with api(github) as client:
        repository = await client.repository("acme/handbook")
        first = await client.head(repository, etag=None)
        again = await client.head(repository, etag=first.etag)
        github.push("acme/handbook", {"README.md": "# Hello\n"})
        moved = await client.head(repository, etag=first.etag)
    assert first.sha == github.repos["acme/handbook"].commits[0].sha and first.etag
    assert again.sha is None
    assert moved.sha == github.repos["acme/handbook"].head.sha
    statuses = [(r.path, r.status) for r in github.requests]
    assert statuses[1:] == [("/repos/acme/handbook/commits/main", s) for s in (200, 304, 200)]
    assert github.requests[2].headers["If-None-Match"] == first.etag
    assert github.requests[1].headers["Accept"] == "application/vnd.github.sha"


async def test_a_tree_lists_files_with_their_blob_shas_and_a_blob_is_its_bytes(
    github: FakeGitHub,
) -> None:
    github.add_repo("acme/handbook", {"README.md": "# Hi\n", "docs/a.rst": "A\n=\n\ntext\n"})
    async with api(github) as client:
        repository = await client.repository("acme/handbook")
        head = await client.head(repository, etag=None)
        assert head.sha is not None
        tree = await client.tree(repository, head.sha)
        by_path = {f.path: f for f in tree.files}
        assert sorted(by_path) == ["README.md", "docs/a.rst"]  # folders are not files
        assert await client.blob(repository, by_path["docs/a.rst"].sha) == b"A\n=\n\ntext\n"
    assert github.requests[-2].query == {"recursive": "1"}


async def test_a_bad_token_is_one_line_naming_the_variable_never_the_token(
    github: FakeGitHub,
) -> None:
    github.add_repo("acme/handbook", {"README.md": "# Hi\n"})
    with pytest.raises(GitHubError) as caught:
        async with api(github, token="ghp_revoked_secret") as client:
            await client.repository("acme/handbook")
    message = str(caught.value)
    assert "GITHUB_TOKEN" in message and "401" in message and "\n" not in message
    assert "ghp_revoked_secret" not in message
    assert github.requests[0].status == 401


async def test_an_unknown_repository_is_not_found(github: FakeGitHub) -> None:
    async with api(github) as client:
        with pytest.raises(NotFound, match="acme/nothing: not found"):
            await client.repository("acme/nothing")


async def test_a_secondary_rate_limit_is_waited_out_as_retry_after_asks(
    github: FakeGitHub,
) -> None:
    github.add_repo("acme/handbook", {"README.md": "# Hi\n"})
    github.secondary_limited = 1
    async with api(github) as client:
        repository = await client.repository("acme/handbook")
    assert repository.default_branch == "main"
    assert [r.status for r in github.requests] == [403, 200]


async def test_a_rate_limit_longer_than_the_cap_ends_the_call_with_when_to_retry(
    github: FakeGitHub,
) -> None:
    github.add_repo("acme/handbook", {"README.md": "# Hi\n"})
    github.rate_remaining = 0
    github.exhausted = True
    async with api(github) as client:
        with pytest.raises(GitHubError, match="rate limit is spent"):
            await client.repository("acme/handbook")
    assert len(github.requests) == 1  # no hour-long sleep, no hammering


async def test_issues_follow_the_link_header_across_pages(github: FakeGitHub) -> None:
    repo = github.add_repo("acme/handbook", {"README.md": "# Hi\n"})
    for number in range(1, 6):
        repo.issues[number] = FakeIssue(number, f"Issue {number}", "body")
    github.page_cap = 2  # GitHub's cap is 100; a small one makes three pages of five
    async with api(github) as client:
        repository = await client.repository("acme/handbook")
        numbers = [i.number async for i in client.issues(repository, since=None)]
    assert sorted(numbers) == [1, 2, 3, 4, 5]
    pages = [r.query.get("page", "1") for r in github.requests if r.path.endswith("/issues")]
    assert pages == ["1", "2", "3"]
