"""The `github` source: each repository's doc files (and optionally issues) as documents.

Per repository, per run:
1. "Did the default branch move?": `GET /repos/{o}/{r}/commits/{branch}` in the SHA
   media type with the ETag saved in the cursor. A 304 costs nothing against the rate
   limit and ends the repository's work: its stored documents are unchanged.
2. When it moved (or on a first run), one recursive tree of the new head lists every
   file with its blob SHA. A file whose blob SHA is the one stored with its document is
   unchanged (git's content hash: same SHA, same bytes); a new or edited one is fetched
   (`git/blobs`) and converted; a stored file no longer in the tree is gone. This is the
   tree-SHA diff: it needs no previous head and never misses a change the way a
   `compare` capped at 300 files could.
3. Issues (if enabled): `GET /repos/{o}/{r}/issues?since=` the newest update seen, with
   their comments; one that no longer matches the filter (reopened) is removed.
4. Discussions (if enabled): GraphQL pages, newest update first, until one older than the
   newest update seen last run (jobs/github/discussions.py); the accepted answer leads
   its replies, and one whose answer was unmarked leaves an "answered" source.
5. The wiki (if enabled), a git repository beside the code: its head, and on a move its
   pages by blob SHA, as for the files (jobs/github/wiki.py).

Documents: uri `owner/repo/path` (or `owner/repo/issues/N`, `owner/repo/discussions/N`,
`owner/repo.wiki/path`, named like the wiki's own repository so no file path can clash),
URL the file on its default branch (`html_url/blob/branch/path`) or the issue's,
discussion's or wiki page's, updated = the file's newest commit (or the last update).
The cursor, per repository: default branch, html_url, head SHA, its ETag, the issues' and
discussions' `since`, and the wiki's head.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from datetime import datetime
from typing import Any
from urllib.parse import quote

from jobs.config import GitHubSettings
from jobs.connectors.base import ChangeFeedSource, ConnectorContext, Cursor, SourceCheck
from jobs.documents import (
    FailedDocument,
    GoneDocument,
    SourceDocument,
    SourceItem,
    UnchangedDocument,
)
from jobs.errors import DocumentError
from jobs.formats.markdown import convert_markdown
from jobs.formats.plaintext import tidy_text
from jobs.github.client import GitHubApi, GitHubError, Issue, NotFound, Repository, TreeFile
from jobs.github.content import convert_repository_file
from jobs.github.discussions import Discussion
from jobs.github.paths import matches, wanted
from jobs.github.wiki import WikiFile, WikiReader

ApiFactory = Callable[[], GitHubApi]


class GitHubSource(ChangeFeedSource):
    def __init__(
        self,
        *,
        name: str,
        settings: GitHubSettings,
        context: ConnectorContext,
        api: ApiFactory,
    ) -> None:
        super().__init__(name=name, context=context)
        self._settings = settings
        self._api = api
        self._state: dict[str, dict[str, Any]] = {}
        self._failed_repos: set[str] = set()

    async def changes(self, cursor: Cursor | None) -> AsyncIterator[SourceItem]:
        saved: dict[str, dict[str, Any]] = dict((cursor or {}).get("repos", {}))
        async with self._api() as api:
            repositories = await self._repositories(api, saved)
            for repository in repositories:
                async for item in self._repository_items(api, repository, saved):
                    yield item
        listed = {r.full_name for r in repositories}
        for uri, stored in self.context.stored.items():
            if _repo_of(stored.metadata) not in listed:
                yield GoneDocument(uri, "its repository is no longer in the source's settings")

    def cursor_after(self, *, failed: Sequence[str]) -> Cursor:
        state = {name: dict(entry) for name, entry in self._state.items()}
        for uri in failed:
            name = "/".join(uri.split("/", 2)[:2])
            if name in state:
                # Walk its tree again next run (only the failed files are fetched again).
                state[name]["etag"] = None
        return {"repos": state}

    async def check(self, *, titles: int = 3) -> SourceCheck:
        """Authenticate and count the configured repositories' doc files (no indexing)."""
        found: list[str] = []
        async with self._api() as api:
            for repository in await self._repositories(api, {}):
                head = await api.head(repository, etag=None)
                tree = await api.tree(repository, head.sha or repository.default_branch)
                found += [f"{repository.full_name}/{f.path}" for f in self._docs(tree.files)]
        return SourceCheck(visible=len(found), titles=tuple(found[:titles]))

    # -- repositories -------------------------------------------------------------------

    async def _repositories(
        self, api: GitHubApi, saved: dict[str, dict[str, Any]]
    ) -> list[Repository]:
        found: list[Repository] = []
        for full_name in self._settings.repositories:
            entry = saved.get(full_name)
            if entry and entry.get("default_branch") and entry.get("html_url"):
                # Known from the last run: "unchanged" then costs one request, not two.
                found.append(_saved_repository(full_name, entry))
            else:
                found.append(await api.repository(full_name))
        if self._settings.org:
            async for repository in api.organization_repositories(self._settings.org):
                if repository.archived and not self._settings.include_archived:
                    continue
                if matches(repository.name, self._settings.repository_filter):
                    found.append(repository)
        unique = {r.full_name: r for r in found}
        return list(unique.values())

    async def _repository_items(
        self, api: GitHubApi, repository: Repository, saved: dict[str, dict[str, Any]]
    ) -> AsyncIterator[SourceItem]:
        entry = dict(saved.get(repository.full_name) or {})
        try:
            head = await api.head(repository, etag=entry.get("etag") if entry else None)
        except NotFound:
            # Renamed default branch (or repository): ask for it afresh, once.
            repository = await api.repository(repository.full_name)
            entry = {}
            head = await api.head(repository, etag=None)
        state = {
            "default_branch": repository.default_branch,
            "html_url": repository.html_url,
            "head": entry.get("head"),
            "etag": entry.get("etag"),
            "issues_since": entry.get("issues_since"),
            "discussions_since": entry.get("discussions_since"),
            "wiki_head": entry.get("wiki_head"),
        }
        if head.sha is not None:
            async for item in self._files(api, repository, head.sha):
                yield item
            state.update(head=head.sha, etag=head.etag)
        if self._settings.issues != "none":
            async for item in self._issues(api, repository, state):
                yield item
        if self._settings.discussions != "none":
            async for item in self._discussions(api, repository, state):
                yield item
        if self._settings.wiki:
            async for item in self._wiki(api, repository, state):
                yield item
        self._state[repository.full_name] = state

    # -- files --------------------------------------------------------------------------

    def _docs(self, files: Iterable[TreeFile]) -> list[TreeFile]:
        s = self._settings
        return [
            f
            for f in files
            if f.size <= s.max_bytes and wanted(f.path, include=s.paths, exclude=s.exclude)
        ]

    async def _files(
        self, api: GitHubApi, repository: Repository, head: str
    ) -> AsyncIterator[SourceItem]:
        tree = await api.tree(repository, head)
        if tree.truncated:
            raise GitHubError(
                f"{repository.full_name}: its tree is too large for one listing (GitHub "
                "truncated it); narrow `paths` or split the repository's docs out"
            )
        documents = self._docs(tree.files)
        prefix = repository.full_name + "/"
        in_tree = {prefix + f.path for f in documents}
        for uri, stored in self.context.stored.items():
            if uri.startswith(prefix) and _is_file(stored.metadata) and uri not in in_tree:
                yield GoneDocument(uri, "deleted from the default branch (or no longer matched)")
        changed = []
        for file in documents:
            stored_doc = self.context.stored.get(prefix + file.path)
            if stored_doc and _blob_of(stored_doc.metadata) == file.sha:
                yield UnchangedDocument(prefix + file.path)
            else:
                changed.append(file)
        # Fetch a few files at once, keep the listing's order (the run's progress reads it).
        width = self._settings.concurrency
        for start in range(0, len(changed), width):
            batch = changed[start : start + width]
            items = await asyncio.gather(*(self._file(api, repository, head, f) for f in batch))
            for item in items:
                yield item

    async def _file(
        self, api: GitHubApi, repository: Repository, head: str, file: TreeFile
    ) -> SourceItem:
        uri = f"{repository.full_name}/{file.path}"
        url = f"{repository.html_url}/blob/{quote(repository.default_branch)}/{quote(file.path)}"
        try:
            data = await api.blob(repository, file.sha)
            converted = convert_repository_file(file.path, data, page_url=url)
        except DocumentError as error:
            return FailedDocument(uri, error.reason)
        updated = await api.last_change(repository, file.path, ref=head)
        return SourceDocument(
            uri=uri,
            title=converted.title or file.path.rsplit("/", 1)[-1],
            url=url,
            text=converted.text,
            metadata={
                **converted.metadata,
                "github": {
                    "repo": repository.full_name,
                    "path": file.path,
                    "blob": file.sha,
                    "commit": head,
                },
            },
            updated_at=updated,
        )

    # -- issues -------------------------------------------------------------------------

    async def _issues(
        self, api: GitHubApi, repository: Repository, state: dict[str, Any]
    ) -> AsyncIterator[SourceItem]:
        since_text = state.get("issues_since")
        since = datetime.fromisoformat(since_text) if since_text else None
        newest = since
        async for issue in api.issues(repository, since=since):
            newest = max(newest, issue.updated_at) if newest else issue.updated_at
            if issue.is_pull_request:
                continue
            uri = f"{repository.full_name}/issues/{issue.number}"
            if self._wanted_issue(issue):
                yield await self._issue(api, repository, issue, uri)
            elif uri in self.context.stored:
                yield GoneDocument(uri, f"the issue is {issue.state} now")
        state["issues_since"] = newest.isoformat() if newest else None

    def _wanted_issue(self, issue: Issue) -> bool:
        kind = self._settings.issues
        if kind == "all":
            return True
        if kind == "closed":
            return issue.state == "closed"
        return issue.state == "closed" and issue.state_reason == "completed"

    async def _issue(
        self, api: GitHubApi, repository: Repository, issue: Issue, uri: str
    ) -> SourceItem:
        try:
            comments = await api.comments(repository, issue.number) if issue.comments else []
        except DocumentError as error:
            return FailedDocument(uri, error.reason)
        replies = [("Reply", c.author, c.body) for c in comments]
        return SourceDocument(
            uri=uri,
            title=f"{issue.title} (#{issue.number})",
            url=issue.html_url,
            text=_thread_text(issue.body, replies, issue.html_url),
            metadata={
                "github": {
                    "repo": repository.full_name,
                    "issue": issue.number,
                    "state": issue.state,
                    "state_reason": issue.state_reason,
                    "author": issue.author,
                }
            },
            updated_at=issue.updated_at,
        )

    # -- discussions --------------------------------------------------------------------

    async def _discussions(
        self, api: GitHubApi, repository: Repository, state: dict[str, Any]
    ) -> AsyncIterator[SourceItem]:
        since_text = state.get("discussions_since")
        since = datetime.fromisoformat(since_text) if since_text else None
        newest = since
        async for discussion in api.discussions(repository, since=since):
            newest = max(newest, discussion.updated_at) if newest else discussion.updated_at
            uri = f"{repository.full_name}/discussions/{discussion.number}"
            if self._settings.discussions == "all" or discussion.answered:
                yield _discussion_document(repository, discussion, uri)
            elif uri in self.context.stored:
                yield GoneDocument(uri, "the discussion's answer was unmarked")
        state["discussions_since"] = newest.isoformat() if newest else None

    # -- wiki -----------------------------------------------------------------------------

    async def _wiki(
        self, api: GitHubApi, repository: Repository, state: dict[str, Any]
    ) -> AsyncIterator[SourceItem]:
        reader = WikiReader(
            password=await api.git_password(),
            password_env=api.credential_env,
            timeout_seconds=self._settings.timeout_seconds,
        )
        prefix = f"{repository.full_name}.wiki/"
        stored = {u: d for u, d in self.context.stored.items() if u.startswith(prefix)}
        head = await reader.head(repository.html_url)
        if head is not None and head == state.get("wiki_head"):
            for uri in stored:
                yield UnchangedDocument(uri)
            return
        files = (await reader.snapshot(repository.html_url, head)).files if head else ()
        pages = {prefix + f.path: f for f in files if _wiki_page(f.path)}
        for uri in stored:
            if uri not in pages:
                yield GoneDocument(uri, "no longer a page of the wiki")
        for uri, file in pages.items():
            if uri in stored and _blob_of(stored[uri].metadata) == file.sha:
                yield UnchangedDocument(uri)
            else:
                yield _wiki_document(repository, file, uri, head)
        state["wiki_head"] = head


def _wiki_page(path: str) -> bool:
    """A page of the wiki: a document format, not a sidebar or footer (`_Sidebar.md`)."""
    name = path.rsplit("/", 1)[-1]
    return not name.startswith("_") and name.rsplit(".", 1)[-1].lower() in _WIKI_FORMATS


_WIKI_FORMATS = {"md", "markdown", "rst", "txt"}


def _wiki_document(
    repository: Repository, file: WikiFile, uri: str, head: str | None
) -> SourceItem:
    # GitHub addresses a page by its file name alone, without folders or extension, and
    # shows that name with its dashes as spaces ("Deploy-guide.md": "Deploy guide").
    name = file.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    url = f"{repository.html_url}/wiki/{quote(name)}"
    try:
        converted = convert_repository_file(file.path, file.data, page_url=url)
    except DocumentError as error:
        return FailedDocument(uri, error.reason)
    return SourceDocument(
        uri=uri,
        title=converted.title or name.replace("-", " "),
        url=url,
        text=converted.text,
        metadata={
            **converted.metadata,
            "github": {
                "repo": repository.full_name,
                "wiki": file.path,
                "blob": file.sha,
                "commit": head,
            },
        },
    )


def _discussion_document(
    repository: Repository, discussion: Discussion, uri: str
) -> SourceDocument:
    replies = [("Answer" if r.is_answer else "Reply", r.author, r.body) for r in discussion.replies]
    return SourceDocument(
        uri=uri,
        title=f"{discussion.title} (discussion #{discussion.number})",
        url=discussion.url,
        text=_thread_text(discussion.body, replies, discussion.url),
        metadata={
            "github": {
                "repo": repository.full_name,
                "discussion": discussion.number,
                "answered": discussion.answered,
                "category": discussion.category,
                "author": discussion.author,
                "replies_left_out": discussion.more_replies,
            }
        },
        updated_at=discussion.updated_at,
    )


def _thread_text(body: str, replies: list[tuple[str, str, str]], page_url: str) -> str:
    """A post, then each (kind, author, body) reply under "## Reply by author"."""
    parts = [_markdown(body, page_url)]
    for kind, author, text in replies:
        heading = f"## {kind} by {author}" if author else f"## {kind}"
        parts.append(f"{heading}\n\n{_markdown(text, page_url)}")
    return tidy_text("\n\n".join(p for p in parts if p.strip()))


def _markdown(body: str, page_url: str) -> str:
    try:
        return convert_markdown(body, page_url=page_url, site_root=None, aliases={}).text
    except DocumentError:
        # An issue body opening with `---` is not front matter: keep the words as written.
        return tidy_text(body)


def _saved_repository(full_name: str, entry: dict[str, Any]) -> Repository:
    owner, name = full_name.split("/", 1)
    return Repository(
        owner=owner,
        name=name,
        default_branch=str(entry["default_branch"]),
        html_url=str(entry["html_url"]),
    )


def _github(metadata: dict[str, Any]) -> dict[str, Any]:
    found = metadata.get("github")
    return found if isinstance(found, dict) else {}


def _repo_of(metadata: dict[str, Any]) -> str | None:
    repo = _github(metadata).get("repo")
    return repo if isinstance(repo, str) else None


def _blob_of(metadata: dict[str, Any]) -> str | None:
    blob = _github(metadata).get("blob")
    return blob if isinstance(blob, str) else None


def _is_file(metadata: dict[str, Any]) -> bool:
    return "path" in _github(metadata)
