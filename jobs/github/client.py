"""The few GitHub REST calls the source makes, through githubkit, as small typed records.

githubkit brings the base URL (GitHub.com or an Enterprise Server's `/api/v3`), token
auth, Link-header pagination and the rate-limit handling: a 403/429 with `retry-after`
(secondary limit) or with `x-ratelimit-remaining: 0` (primary limit, wait until
`x-ratelimit-reset`) is retried after the wait GitHub asks for. A wait longer than
`max_wait_seconds` is not slept through: the run stops with one line saying when to
retry, rather than holding the reindex lock for an hour.

Only the fields the source uses are read from the JSON (`response.json()`), not
githubkit's full pydantic models: those require every field of the current API
version, and an older Enterprise Server leaves some out.

REST reference: https://docs.github.com/en/rest (repos, commits, git/trees, git/blobs,
issues, issue comments); conditional requests:
https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#use-conditional-requests-if-appropriate
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import TracebackType
from typing import Any

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from githubkit import (
    AppAuthStrategy,
    AppInstallationAuthStrategy,
    GitHub,
    Response,
    TokenAuthStrategy,
)
from githubkit.cache import MemCacheStrategy
from githubkit.exception import (
    GitHubException,
    GraphQLFailed,
    RateLimitExceeded,
    RequestError,
    RequestFailed,
)
from githubkit.retry import RetryChainDecision, RetryOption, RetryServerError
from githubkit.utils import UNSET

from jobs.errors import DocumentError, DocumentGone, JobsError
from jobs.github.discussions import QUERY as DISCUSSIONS_QUERY
from jobs.github.discussions import Discussion, parse_page

DEFAULT_BASE_URL = "https://api.github.com"


class GitHubError(JobsError):
    """GitHub refused or failed a call the whole source needs (auth, a repository, limits)."""


class NotFound(GitHubError):
    """A repository or branch GitHub does not show this token (404, or 422 for a ref)."""


@dataclass(frozen=True, slots=True)
class Token:
    """A personal access token, and the environment variable it came from."""

    value: str
    env: str


@dataclass(frozen=True, slots=True)
class AppInstallation:
    """A GitHub App installation: githubkit signs a JWT (RS256) with the app's private key,
    trades it for an installation token at POST /app/installations/{id}/access_tokens, and
    mints a new one before its hour is up.
    https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/authenticating-as-a-github-app-installation
    """

    app_id: int
    installation_id: int
    private_key: str  # PEM
    key_env: str


Credentials = Token | AppInstallation


@dataclass(frozen=True, slots=True)
class Repository:
    owner: str
    name: str
    default_branch: str
    html_url: str
    private: bool = False
    archived: bool = False

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


@dataclass(frozen=True, slots=True)
class Head:
    """The default branch's head: `sha` is None when GitHub said 304 Not Modified."""

    sha: str | None
    etag: str | None


@dataclass(frozen=True, slots=True)
class TreeFile:
    path: str
    sha: str
    size: int


@dataclass(frozen=True, slots=True)
class Tree:
    files: tuple[TreeFile, ...]
    truncated: bool


@dataclass(frozen=True, slots=True)
class Issue:
    number: int
    title: str
    body: str
    html_url: str
    state: str
    state_reason: str | None
    updated_at: datetime
    author: str
    comments: int
    is_pull_request: bool


@dataclass(frozen=True, slots=True)
class Comment:
    author: str
    body: str
    created_at: datetime


class _CappedRateLimit:
    """githubkit's rate-limit retry, but never a wait longer than `max_wait` (see module doc)."""

    def __init__(self, *, max_retry: int, max_wait: timedelta) -> None:
        self.max_retry = max_retry
        self.max_wait = max_wait

    def __call__(self, exc: GitHubException, retry_count: int) -> RetryOption:
        if not isinstance(exc, RateLimitExceeded) or retry_count >= self.max_retry:
            return RetryOption(False)
        if exc.retry_after > self.max_wait:
            return RetryOption(False)
        return RetryOption(True, max(exc.retry_after, timedelta(0)))


class GitHubApi:
    """One authenticated GitHub client; use as `async with GitHubApi(...) as api:`."""

    def __init__(
        self,
        credentials: Credentials,
        *,
        base_url: str = DEFAULT_BASE_URL,
        timeout_seconds: float = 30.0,
        max_wait_seconds: float = 120.0,
    ) -> None:
        self._credentials = credentials
        self._base_url = base_url
        self._timeout = timeout_seconds
        retry = RetryChainDecision(
            _CappedRateLimit(max_retry=3, max_wait=timedelta(seconds=max_wait_seconds)),
            RetryServerError(max_retry=3),
        )
        self._github = GitHub(
            _strategy(credentials),
            base_url=base_url,
            timeout=timeout_seconds,
            # The ETag of each branch head is kept in the store between runs; an
            # in-memory HTTP cache would only hold bodies this run never re-reads.
            http_cache=False,
            # Installation tokens are kept by this client only: githubkit's default cache
            # is one per process, shared by every source and test server.
            cache_strategy=MemCacheStrategy(),
            auto_retry=retry,
        )

    async def __aenter__(self) -> GitHubApi:
        await self._github.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._github.__aexit__(exc_type, exc, tb)

    @property
    def credential_env(self) -> str:
        c = self._credentials
        return c.env if isinstance(c, Token) else c.key_env

    async def git_password(self) -> str:
        """What git over HTTPS takes as the password (user `x-access-token`): the token, or
        for an App a fresh installation token (one request)."""
        if isinstance(self._credentials, Token):
            return self._credentials.value
        app = self._credentials
        _strategy(app)  # a broken key is one plain line, as for the REST calls
        minting = GitHub(
            AppAuthStrategy(str(app.app_id), app.private_key),
            base_url=self._base_url,
            timeout=self._timeout,
            http_cache=False,
            cache_strategy=MemCacheStrategy(),
        )
        async with minting:
            try:
                response = await minting.rest.apps.async_create_installation_access_token(
                    app.installation_id
                )
            except GitHubException as error:
                raise self._source_error(error, "the App's installation token") from error
        return str(response.json()["token"])

    async def repository(self, full_name: str) -> Repository:
        owner, name = full_name.split("/", 1)
        response = await self._call(self._github.rest.repos.async_get, owner, name)
        return _repository(response.json())

    async def organization_repositories(self, org: str) -> AsyncIterator[Repository]:
        pages = self._github.rest.paginate(
            self._github.rest.repos.async_list_for_org,
            map_func=lambda response: list(response.json()),
            org=org,
            type="all",
            per_page=100,
        )
        try:
            async for item in pages:
                yield _repository(item)
        except GitHubException as error:
            raise self._source_error(error, f"the repositories of {org}") from error

    async def head(self, repository: Repository, *, etag: str | None) -> Head:
        """The default branch's head commit SHA, conditionally: 304 when it has not moved."""
        # The `sha` media type answers with the bare SHA: the cheapest "did it move?".
        headers = {"Accept": "application/vnd.github.sha"}
        if etag:
            headers["If-None-Match"] = etag
        response = await self._call(
            self._github.rest.repos.async_get_commit,
            repository.owner,
            repository.name,
            repository.default_branch,
            headers=headers,
        )
        if response.status_code == 304:
            return Head(sha=None, etag=etag)
        return Head(sha=response.text.strip(), etag=response.headers.get("etag"))

    async def tree(self, repository: Repository, commit_sha: str) -> Tree:
        response = await self._call(
            self._github.rest.git.async_get_tree,
            repository.owner,
            repository.name,
            commit_sha,
            recursive="1",
        )
        data = response.json()
        files = tuple(
            TreeFile(path=entry["path"], sha=entry["sha"], size=int(entry.get("size") or 0))
            for entry in data.get("tree", [])
            if entry.get("type") == "blob"
        )
        return Tree(files=files, truncated=bool(data.get("truncated")))

    async def blob(self, repository: Repository, sha: str) -> bytes:
        """A file's bytes; DocumentError (that file only) when GitHub cannot give them."""
        try:
            response = await self._github.rest.git.async_get_blob(
                repository.owner, repository.name, sha
            )
        except RequestFailed as error:
            if error.response.status_code in (404, 410):
                raise DocumentGone(f"GitHub no longer has blob {sha[:12]}") from error
            if error.response.status_code in (401, 403) and not isinstance(
                error, RateLimitExceeded
            ):
                raise self._source_error(error, repository.full_name) from error
            raise DocumentError(f"GitHub answered {error.response.status_code}") from error
        except GitHubException as error:
            raise self._source_error(error, repository.full_name) from error
        data = response.json()
        if data.get("encoding") != "base64":
            raise DocumentError(f"unexpected blob encoding {data.get('encoding')!r}")
        try:
            return base64.b64decode(data.get("content") or "")
        except (binascii.Error, ValueError) as error:
            raise DocumentError("the blob's base64 content is broken") from error

    async def last_change(self, repository: Repository, path: str, *, ref: str) -> datetime | None:
        """When `path` last changed on `ref` (its newest commit's time); None if unknown."""
        try:
            response = await self._github.rest.repos.async_list_commits(
                repository.owner, repository.name, sha=ref, path=path, per_page=1
            )
            commits: Any = response.json()
            return _time(commits[0]["commit"]["committer"]["date"]) if commits else None
        except (GitHubException, KeyError, IndexError, TypeError, ValueError):
            # Only the "updated" date is missing: the document is still indexed.
            return None

    async def issues(
        self, repository: Repository, *, since: datetime | None
    ) -> AsyncIterator[Issue]:
        """Issues (open and closed) updated since `since`, oldest update first."""
        pages = self._github.rest.paginate(
            self._github.rest.issues.async_list_for_repo,
            map_func=lambda response: list(response.json()),
            owner=repository.owner,
            repo=repository.name,
            state="all",
            sort="updated",
            direction="asc",
            since=UNSET if since is None else since,
            per_page=100,
        )
        try:
            async for item in pages:
                yield _issue(item)
        except GitHubException as error:
            raise self._source_error(error, f"the issues of {repository.full_name}") from error

    async def comments(self, repository: Repository, number: int) -> list[Comment]:
        pages = self._github.rest.paginate(
            self._github.rest.issues.async_list_comments,
            map_func=lambda response: list(response.json()),
            owner=repository.owner,
            repo=repository.name,
            issue_number=number,
            per_page=100,
        )
        found = []
        try:
            async for item in pages:
                found.append(
                    Comment(
                        author=_login(item.get("user")),
                        body=item.get("body") or "",
                        created_at=_time(item["created_at"]),
                    )
                )
        except GitHubException as error:
            raise DocumentError(_describe(error)) from error
        return found

    async def discussions(
        self, repository: Repository, *, since: datetime | None
    ) -> AsyncIterator[Discussion]:
        """Discussions updated at or after `since` (all when None), newest update first:
        pages are read only until one reaches back before `since` (GraphQL)."""
        cursor: str | None = None
        while True:
            variables = {"owner": repository.owner, "name": repository.name, "cursor": cursor}
            try:
                data = await self._github.graphql.arequest(DISCUSSIONS_QUERY, variables)
            except GraphQLFailed as error:
                messages = dict.fromkeys(e.message for e in error.response.errors or [])
                said = "; ".join(list(messages)[:3])
                raise GitHubError(
                    f"the discussions of {repository.full_name}: GitHub said: {said}"
                ) from error
            except GitHubException as error:
                where = f"the discussions of {repository.full_name}"
                raise self._source_error(error, where) from error
            page = parse_page(data)
            if page is None:
                raise NotFound(f"{repository.full_name}: its discussions are not visible")
            for discussion in page.discussions:
                if since is not None and discussion.updated_at < since:
                    return
                yield discussion
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    async def _call(self, method: Any, *args: Any, **kwargs: Any) -> Response[Any]:
        try:
            return await method(*args, **kwargs)  # type: ignore[no-any-return]
        except GitHubException as error:
            where = "/".join(str(a) for a in args[:2])
            raise self._source_error(error, where) from error

    def _source_error(self, error: GitHubException, where: str) -> GitHubError:
        if isinstance(error, RequestError) and isinstance(error.exc, GitHubException):
            error = error.exc  # refused while minting the App's installation token
        if isinstance(error, RequestFailed) and error.response.status_code == 401:
            return GitHubError(_refused(self._credentials, error))
        if (
            isinstance(error, RequestFailed)
            and error.response.status_code == 404
            and isinstance(self._credentials, AppInstallation)
            and "/access_tokens" in str(error.response.raw_request.url)
        ):
            app = self._credentials
            return GitHubError(
                f"GitHub has no installation {app.installation_id} of GitHub App "
                f"{app.app_id}: install the app on the organisation and copy the number at "
                "the end of the installation's settings URL into installation_id"
            )
        if isinstance(error, RequestFailed) and error.response.status_code in (404, 422):
            return NotFound(f"{where}: {_describe(error)}")
        return GitHubError(f"{where}: {_describe(error)}")


def _strategy(credentials: Credentials) -> TokenAuthStrategy | AppInstallationAuthStrategy:
    if isinstance(credentials, Token):
        return TokenAuthStrategy(credentials.value)
    try:
        key = load_pem_private_key(credentials.private_key.encode(), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as error:
        raise GitHubError(
            f"{credentials.key_env} does not hold a GitHub App private key ({error}): set it "
            "to the whole .pem file the app's settings page generated, BEGIN and END lines "
            "included"
        ) from error
    if not isinstance(key, RSAPrivateKey):
        raise GitHubError(f"{credentials.key_env} holds a key GitHub can't use: it needs RSA")
    return AppInstallationAuthStrategy(
        str(credentials.app_id),
        credentials.private_key,
        installation_id=credentials.installation_id,
    )


def _refused(credentials: Credentials, error: RequestFailed) -> str:
    """One line saying which credential GitHub refused (401) and what to do."""
    if isinstance(credentials, Token):
        return (
            f"GitHub refused the token in {credentials.env} (401 Bad credentials): it is "
            f"wrong, expired or revoked; set {credentials.env} to a valid token"
        )
    try:
        said = str(error.response.json().get("message") or "Bad credentials")
    except (ValueError, AttributeError):
        said = "Bad credentials"
    return (
        f"GitHub refused GitHub App {credentials.app_id} (401 {said}): check that "
        f"{credentials.key_env} holds the app's current private key and that this "
        "machine's clock is right"
    )


def _describe(error: GitHubException) -> str:
    if isinstance(error, RateLimitExceeded):
        seconds = int(error.retry_after.total_seconds())
        return f"GitHub's rate limit is spent; it asks to wait {seconds} s; the next run retries"
    if isinstance(error, RequestFailed):
        status = error.response.status_code
        if status == 404:
            return "not found (or the token may not read it)"
        return f"GitHub answered {status} {error.response.raw_response.reason_phrase}"
    if isinstance(error, RequestError):
        return f"could not reach GitHub: {type(error.exc).__name__}"
    return type(error).__name__


def _repository(data: dict[str, Any]) -> Repository:
    return Repository(
        owner=_login(data.get("owner")),
        name=data["name"],
        default_branch=data.get("default_branch") or "main",
        html_url=data["html_url"],
        private=bool(data.get("private")),
        archived=bool(data.get("archived")),
    )


def _issue(data: dict[str, Any]) -> Issue:
    return Issue(
        number=int(data["number"]),
        title=data.get("title") or "",
        body=data.get("body") or "",
        html_url=data["html_url"],
        state=data.get("state") or "open",
        state_reason=data.get("state_reason"),
        updated_at=_time(data["updated_at"]),
        author=_login(data.get("user")),
        comments=int(data.get("comments") or 0),
        is_pull_request="pull_request" in data,
    )


def _login(user: Any) -> str:
    return str(user.get("login") or "") if isinstance(user, dict) else ""


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
