"""A local fake of GitHub's REST API (the calls the `github` source makes), for githubkit.

It serves under `/api/v3`, the path of a GitHub Enterprise Server, so a test also shows
the base URL setting works. Wire format from the REST reference:
- repositories: https://docs.github.com/en/rest/repos/repos (get, list for an org)
- commits: https://docs.github.com/en/rest/commits/commits (get a commit; the
  `application/vnd.github.sha` media type answers with the bare SHA; list commits by path)
- trees / blobs: https://docs.github.com/en/rest/git/trees, https://docs.github.com/en/rest/git/blobs
  (a tree is asked for by tree, commit SHA or branch; blobs come base64 with line breaks)
- issues and comments: https://docs.github.com/en/rest/issues/issues#list-repository-issues,
  https://docs.github.com/en/rest/issues/comments (pull requests are issues with a
  `pull_request` key; `since` keeps those updated at or after it)
- pagination: https://docs.github.com/en/rest/using-the-rest-api/using-pagination-in-the-rest-api
  (`Link: <…>; rel="next"`, per_page at most 100)
- conditional requests and limits:
  https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api
  (every answer carries `x-ratelimit-*`; a 304 does not count; a secondary limit is a 403
  with `retry-after`; no credential or a bad one is a 401 "Bad credentials").
- GitHub Apps: https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app
  and https://docs.github.com/en/rest/apps/apps#create-an-installation-access-token-for-an-app
  (a JWT signed RS256 with the app's key, `iss` the app id, `exp` at most 10 minutes
  ahead; it is accepted only on `/app/...` routes; the installation token it buys, an
  hour long, is what every other route takes; a JWT's errors are GitHub's own words).

Strict: an unknown token is a 401, an unknown repository, ref or blob a 404, a page past
the end an empty list. Every request is recorded (method, path, query, headers, status).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import jwt
from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.jobs.fake_github_graphql import FakeDiscussion, execute

PREFIX = "/api/v3"
TOKEN = "ghp_fake_token_for_tests"
_DOCS = "https://docs.github.com/rest"


def git_blob_sha(data: bytes) -> str:
    """The SHA git gives a blob: sha1 over 'blob <size>\\0' and the bytes."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


@dataclass(slots=True)
class Commit:
    sha: str
    tree_sha: str
    files: dict[str, bytes]  # path → content, the whole tree at this commit
    date: datetime
    changed: frozenset[str]


@dataclass(slots=True)
class FakeIssue:
    number: int
    title: str
    body: str
    state: str = "open"
    state_reason: str | None = None
    updated_at: datetime = field(default_factory=lambda: datetime(2026, 11, 1, tzinfo=UTC))
    author: str = "octocat"
    pull_request: bool = False
    comments: list[tuple[str, str]] = field(default_factory=list)  # (login, body)


@dataclass(slots=True)
class FakeRepo:
    owner: str
    name: str
    default_branch: str = "main"
    private: bool = False
    archived: bool = False
    commits: list[Commit] = field(default_factory=list)
    issues: dict[int, FakeIssue] = field(default_factory=dict)
    discussions: dict[int, FakeDiscussion] = field(default_factory=dict)

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def head(self) -> Commit:
        return self.commits[-1]


@dataclass(slots=True)
class FakeApp:
    """A GitHub App registered with the fake: its id, public key and installations."""

    app_id: int
    public_key_pem: str
    installations: set[int]
    # Installation tokens minted so far, and when each expires (epoch seconds).
    tokens: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    status: int


class FakeGitHub:
    def __init__(self, *, html_host: str = "https://github.example.com") -> None:
        self.html_host = html_host
        self.repos: dict[str, FakeRepo] = {}
        self.requests: list[Recorded] = []
        self.server: TestServer | None = None
        self.token = TOKEN
        self.rate_remaining = 5000
        # The next N requests are refused by a secondary rate limit (403 + retry-after).
        self.secondary_limited = 0
        # The primary limit is spent: every request is a 403 until the reset (an hour).
        self.exhausted = False
        # Items per page at most (GitHub's is 100; tests lower it to see several pages).
        self.page_cap = 100
        self._clock = itertools.count(1)
        self.apps: dict[int, FakeApp] = {}

    def register_app(self, app_id: int, public_key_pem: str, installation_id: int) -> FakeApp:
        app = FakeApp(app_id, public_key_pem, {installation_id})
        self.apps[app_id] = app
        return app

    # -- what a test sets up ------------------------------------------------------------

    def add_repo(self, full_name: str, files: dict[str, str | bytes], **kwargs: Any) -> FakeRepo:
        owner, name = full_name.split("/")
        repo = FakeRepo(owner=owner, name=name, **kwargs)
        self.repos[full_name] = repo
        self.push(full_name, files)
        return repo

    def push(self, full_name: str, changes: dict[str, str | bytes | None]) -> str:
        """A new commit on the default branch: files set (or deleted when None)."""
        repo = self.repos[full_name]
        files = dict(repo.head.files) if repo.commits else {}
        for path, content in changes.items():
            if content is None:
                files.pop(path, None)
            else:
                files[path] = content.encode() if isinstance(content, str) else content
        tick = next(self._clock)
        tree_sha = hashlib.sha1(
            "".join(f"{p}:{git_blob_sha(c)}" for p, c in sorted(files.items())).encode()
        ).hexdigest()
        sha = hashlib.sha1(f"commit {tree_sha} {tick}".encode()).hexdigest()
        date = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(hours=tick)
        repo.commits.append(Commit(sha, tree_sha, files, date, frozenset(changes)))
        return sha

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return str(self.server.make_url(PREFIX))

    def api_requests(self) -> list[Recorded]:
        return list(self.requests)

    # -- the app ------------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._middleware])
        r = app.router
        r.add_post(
            PREFIX + "/app/installations/{installation}/access_tokens", self._installation_token
        )
        # GitHub Enterprise Server's GraphQL endpoint sits beside /api/v3.
        r.add_post("/api/graphql", self._graphql)
        r.add_get(PREFIX + "/repos/{owner}/{repo}", self._repo)
        r.add_get(PREFIX + "/orgs/{org}/repos", self._org_repos)
        r.add_get(PREFIX + "/repos/{owner}/{repo}/commits", self._list_commits)
        r.add_get(PREFIX + "/repos/{owner}/{repo}/commits/{ref}", self._commit)
        r.add_get(PREFIX + "/repos/{owner}/{repo}/git/trees/{sha}", self._tree)
        r.add_get(PREFIX + "/repos/{owner}/{repo}/git/blobs/{sha}", self._blob)
        r.add_get(PREFIX + "/repos/{owner}/{repo}/issues", self._issues)
        r.add_get(PREFIX + "/repos/{owner}/{repo}/issues/{number}/comments", self._comments)
        return app

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        response = await self._answer(request, handler)
        if response.status != 304:
            self.rate_remaining = max(0, self.rate_remaining - 1)
        response.headers.update(self._rate_headers())
        self.requests.append(
            Recorded(
                request.method,
                request.path.removeprefix(PREFIX),
                dict(request.query),
                dict(request.headers),
                response.status,
            )
        )
        return response

    async def _answer(self, request: web.Request, handler: Any) -> web.StreamResponse:
        auth = request.headers.get("Authorization", "")
        scheme, _, token = auth.partition(" ")
        on_app_route = request.path.startswith(PREFIX + "/app/")
        if on_app_route:
            if scheme.lower() != "bearer":
                return _error(401, "A JSON web token could not be decoded")
        elif scheme.lower() not in ("token", "bearer") or not self.token_valid(token):
            return _error(401, "Bad credentials")
        if self.exhausted:
            return _error(403, "API rate limit exceeded for user ID 1.")
        if self.secondary_limited > 0:
            self.secondary_limited -= 1
            return _error(
                403,
                "You have exceeded a secondary rate limit. Please wait a few minutes before "
                "you try again.",
                headers={"retry-after": "1"},
            )
        try:
            response: web.StreamResponse = await handler(request)
        except web.HTTPNotFound:
            return _error(404, "Not Found")
        return response

    def token_valid(self, token: str) -> bool:
        if token == self.token:
            return True
        now = time.time()
        return any(app.tokens.get(token, 0.0) > now for app in self.apps.values())

    async def _installation_token(self, request: web.Request) -> web.Response:
        _, _, token = request.headers.get("Authorization", "").partition(" ")
        try:
            claims = jwt.decode(token, options={"verify_signature": False})
            app = self.apps.get(int(claims["iss"]))
        except (jwt.InvalidTokenError, KeyError, TypeError, ValueError):
            return _error(401, "A JSON web token could not be decoded")
        if app is None:
            return _error(401, "Integration not found")
        try:
            jwt.decode(token, app.public_key_pem, algorithms=["RS256"], leeway=60)
        except jwt.ExpiredSignatureError:
            return _error(
                401,
                "'Expiration time' claim ('exp') must be a numeric value representing the "
                "future time at which the assertion expires",
            )
        except jwt.InvalidTokenError:
            return _error(401, "A JSON web token could not be decoded")
        now = time.time()
        if claims.get("exp", 0) - now > 600 + 30:
            return _error(401, "'Expiration time' claim ('exp') is too far in the future")
        if claims.get("iat", now) > now + 60:
            return _error(
                401,
                "'Issued at' claim ('iat') must be an Integer representing the "
                "time that the assertion was issued",
            )
        if int(request.match_info["installation"]) not in app.installations:
            return _error(404, "Not Found")
        minted = "ghs_" + secrets.token_hex(18)
        expires = now + 3600
        app.tokens[minted] = expires
        body = {
            "token": minted,
            "expires_at": _iso(datetime.fromtimestamp(expires, UTC)),
            "permissions": {"contents": "read", "issues": "read", "metadata": "read"},
            "repository_selection": "all",
        }
        return web.json_response(body, status=201)

    async def _graphql(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "Problems parsing JSON")

        def visible(full_name: str) -> tuple[str, dict[int, FakeDiscussion]] | None:
            repo = self.repos.get(full_name)
            if repo is None:
                return None
            return f"{self.html_host}/{full_name}", repo.discussions

        return web.json_response(await execute(visible, body))

    def _rate_headers(self) -> dict[str, str]:
        reset = int((datetime.now(UTC) + timedelta(hours=1)).timestamp())
        return {
            "x-ratelimit-limit": "5000",
            "x-ratelimit-remaining": str(self.rate_remaining),
            "x-ratelimit-used": str(5000 - self.rate_remaining),
            "x-ratelimit-reset": str(reset),
            "x-ratelimit-resource": "core",
            "x-github-api-version-selected": "2022-11-28",
        }

    def _find(self, request: web.Request) -> FakeRepo:
        full = f"{request.match_info['owner']}/{request.match_info['repo']}"
        repo = self.repos.get(full)
        if repo is None:
            raise web.HTTPNotFound()
        return repo

    def _repo_json(self, repo: FakeRepo) -> dict[str, Any]:
        api = self.base_url
        return {
            "id": abs(hash(repo.full_name)) % 10**8,
            "node_id": "R_kgDO" + repo.name,
            "name": repo.name,
            "full_name": repo.full_name,
            "owner": {"login": repo.owner, "type": "Organization"},
            "private": repo.private,
            "archived": repo.archived,
            "html_url": f"{self.html_host}/{repo.full_name}",
            "url": f"{api}/repos/{repo.full_name}",
            "default_branch": repo.default_branch,
            "visibility": "private" if repo.private else "public",
        }

    async def _repo(self, request: web.Request) -> web.Response:
        return web.json_response(self._repo_json(self._find(request)))

    async def _org_repos(self, request: web.Request) -> web.Response:
        org = request.match_info["org"]
        repos = [self._repo_json(r) for r in self.repos.values() if r.owner == org]
        if not repos:
            raise web.HTTPNotFound()
        return self._paged(request, repos)

    def _resolve(self, repo: FakeRepo, ref: str) -> Commit:
        if ref == repo.default_branch:
            return repo.head
        for commit in repo.commits:
            if ref in (commit.sha, commit.tree_sha):
                return commit
        raise web.HTTPNotFound()

    async def _commit(self, request: web.Request) -> web.Response:
        repo = self._find(request)
        commit = self._resolve(repo, request.match_info["ref"])
        accept = request.headers.get("Accept", "")
        etag = f'"{hashlib.sha1(f"{commit.sha}|{accept}".encode()).hexdigest()}"'
        if etag in _etags(request.headers.get("If-None-Match", "")):
            return web.Response(status=304, headers={"ETag": etag})
        if accept == "application/vnd.github.sha":
            return web.Response(
                text=commit.sha, content_type="application/vnd.github.sha", headers={"ETag": etag}
            )
        body = {
            "sha": commit.sha,
            "commit": {
                "tree": {"sha": commit.tree_sha},
                "committer": {"date": _iso(commit.date)},
                "message": "change",
            },
            "html_url": f"{self.html_host}/{repo.full_name}/commit/{commit.sha}",
            "parents": [],
            "files": [{"filename": p} for p in sorted(commit.changed)],
        }
        return web.json_response(body, headers={"ETag": etag})

    async def _list_commits(self, request: web.Request) -> web.Response:
        repo = self._find(request)
        start = self._resolve(repo, request.query.get("sha", repo.default_branch))
        path = request.query.get("path")
        found = []
        for commit in reversed(repo.commits[: repo.commits.index(start) + 1]):
            if path is None or path in commit.changed:
                found.append(
                    {
                        "sha": commit.sha,
                        "commit": {"committer": {"date": _iso(commit.date)}, "message": "c"},
                    }
                )
        return self._paged(request, found)

    async def _tree(self, request: web.Request) -> web.Response:
        repo = self._find(request)
        commit = self._resolve(repo, request.match_info["sha"])
        if "recursive" not in request.query:
            # The source always asks for the whole tree; the top level alone is not served.
            return _error(422, "the fake serves recursive trees only")
        entries = [
            {
                "path": path,
                "mode": "100644",
                "type": "blob",
                "sha": git_blob_sha(content),
                "size": len(content),
                "url": f"{self.base_url}/repos/{repo.full_name}/git/blobs/{git_blob_sha(content)}",
            }
            for path, content in sorted(commit.files.items())
        ]
        folders = sorted({p.rsplit("/", 1)[0] for p in commit.files if "/" in p})
        entries += [{"path": f, "mode": "040000", "type": "tree", "sha": "0" * 40} for f in folders]
        return web.json_response({"sha": commit.tree_sha, "tree": entries, "truncated": False})

    async def _blob(self, request: web.Request) -> web.Response:
        repo = self._find(request)
        sha = request.match_info["sha"]
        for commit in repo.commits:
            for content in commit.files.values():
                if git_blob_sha(content) == sha:
                    return web.json_response(
                        {
                            "sha": sha,
                            "node_id": "B_" + sha[:8],
                            "size": len(content),
                            "url": f"{self.base_url}/repos/{repo.full_name}/git/blobs/{sha}",
                            # GitHub wraps the base64 at 60 characters, like `base64`.
                            "content": base64.encodebytes(content).decode(),
                            "encoding": "base64",
                        }
                    )
        raise web.HTTPNotFound()

    async def _issues(self, request: web.Request) -> web.Response:
        repo = self._find(request)
        state = request.query.get("state", "open")
        if state not in ("open", "closed", "all"):
            return _error(422, "Validation Failed")
        since = request.query.get("since")
        chosen = [
            issue
            for issue in repo.issues.values()
            if (state == "all" or issue.state == state)
            and (since is None or issue.updated_at >= _parse(since))
        ]
        reverse = request.query.get("direction", "desc") == "desc"
        if request.query.get("sort", "created") == "updated":
            chosen.sort(key=lambda i: i.updated_at, reverse=reverse)
        else:
            chosen.sort(key=lambda i: i.number, reverse=reverse)
        return self._paged(request, [self._issue_json(repo, i) for i in chosen])

    def _issue_json(self, repo: FakeRepo, issue: FakeIssue) -> dict[str, Any]:
        kind = "pull" if issue.pull_request else "issues"
        data: dict[str, Any] = {
            "number": issue.number,
            "title": issue.title,
            "body": issue.body,
            "state": issue.state,
            "state_reason": issue.state_reason,
            "html_url": f"{self.html_host}/{repo.full_name}/{kind}/{issue.number}",
            "user": {"login": issue.author},
            "comments": len(issue.comments),
            "updated_at": _iso(issue.updated_at),
            "created_at": _iso(issue.updated_at - timedelta(days=1)),
        }
        if issue.pull_request:
            data["pull_request"] = {"url": "..."}
        return data

    async def _comments(self, request: web.Request) -> web.Response:
        repo = self._find(request)
        issue = repo.issues.get(int(request.match_info["number"]))
        if issue is None:
            raise web.HTTPNotFound()
        comments = [
            {
                "id": index,
                "user": {"login": login},
                "body": body,
                "created_at": _iso(issue.updated_at - timedelta(hours=len(issue.comments) - index)),
            }
            for index, (login, body) in enumerate(issue.comments)
        ]
        return self._paged(request, comments)

    def _paged(self, request: web.Request, items: list[dict[str, Any]]) -> web.Response:
        per_page = min(int(request.query.get("per_page", "30")), self.page_cap)
        page = int(request.query.get("page", "1"))
        chunk = items[(page - 1) * per_page : page * per_page]
        headers = {}
        if page * per_page < len(items):
            last = (len(items) + per_page - 1) // per_page
            url = request.url.with_query({**request.query, "page": str(page + 1)})
            last_url = request.url.with_query({**request.query, "page": str(last)})
            headers["Link"] = f'<{url}>; rel="next", <{last_url}>; rel="last"'
        return web.json_response(chunk, headers=headers)


def _error(status: int, message: str, *, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response(
        {"message": message, "documentation_url": _DOCS, "status": str(status)},
        status=status,
        headers=headers or {},
    )


def _etags(header: str) -> set[str]:
    return {part.strip().removeprefix("W/") for part in header.split(",") if part.strip()}


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


async def running_fake_github() -> AsyncIterator[FakeGitHub]:
    fake = FakeGitHub()
    server = TestServer(fake.app(), port=0)
    await server.start_server()
    fake.server = server
    try:
        yield fake
    finally:
        await server.close()
