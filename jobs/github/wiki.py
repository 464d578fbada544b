"""A repository's wiki. GitHub serves a wiki as a git repository beside the code
(`<repository URL>.wiki.git`), not over REST, so it is read with dulwich, a pure-Python
git client, over git's smart HTTP protocol:

- "did it move?" is one request, the ref advertisement (`info/refs`), compared with the
  head the last run saw;
- when it moved, a shallow fetch (depth 1) of the head into memory gives every page's
  blob SHA and bytes: a wiki is a few hundred small Markdown files at most.

GitHub takes the token (a PAT, or an App's installation token) as the password of HTTPS
basic auth, the username `x-access-token`. dulwich is synchronous: each call runs in a
worker thread. https://docs.github.com/en/communities/documenting-your-project-with-wikis/adding-or-editing-wiki-pages#adding-or-editing-wiki-pages-locally
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from dulwich.client import HttpGitClient, HTTPUnauthorized
from dulwich.errors import GitProtocolError, NotGitRepository
from dulwich.object_store import iter_tree_contents
from dulwich.objects import Blob, ObjectID
from dulwich.refs import Ref
from dulwich.repo import MemoryRepo

from jobs.errors import JobsError


class WikiError(JobsError):
    """The wiki could not be read (credentials, network, protocol)."""


@dataclass(frozen=True, slots=True)
class WikiFile:
    path: str
    sha: str
    data: bytes


@dataclass(frozen=True, slots=True)
class WikiSnapshot:
    head: str
    files: tuple[WikiFile, ...]


class WikiReader:
    def __init__(self, *, password: str, password_env: str, timeout_seconds: float) -> None:
        self._password = password
        self._password_env = password_env
        self._timeout = timeout_seconds

    async def head(self, repository_url: str) -> str | None:
        """The wiki's head commit, or None when the repository has no wiki (GitHub answers
        404 until a first page is written, and when wikis are turned off)."""
        return await asyncio.to_thread(self._head, repository_url)

    async def snapshot(self, repository_url: str, head: str) -> WikiSnapshot:
        """Every file of the wiki at `head`, with its blob SHA and bytes."""
        return await asyncio.to_thread(self._snapshot, repository_url, head)

    def _client(self, repository_url: str) -> tuple[HttpGitClient, str]:
        parts = urlsplit(repository_url.rstrip("/") + ".wiki.git")
        client = HttpGitClient(
            f"{parts.scheme}://{parts.netloc}/",
            username="x-access-token",
            password=self._password,
            timeout=self._timeout,
            quiet=True,
        )
        return client, parts.path

    def _head(self, repository_url: str) -> str | None:
        client, path = self._client(repository_url)
        try:
            refs = client.get_refs(path).refs
        except NotGitRepository:
            return None
        except Exception as error:
            raise self._error(error, repository_url) from error
        head = refs.get(Ref(b"HEAD"))
        return head.decode() if head else None

    def _snapshot(self, repository_url: str, head: str) -> WikiSnapshot:
        client, path = self._client(repository_url)
        repo = MemoryRepo()
        wanted = ObjectID(head.encode())

        def wants(refs: Mapping[Ref, ObjectID], depth: int | None = None) -> list[ObjectID]:
            return [wanted]

        try:
            client.fetch(path, repo, determine_wants=wants, depth=1)
            tree = repo[wanted].tree  # type: ignore[attr-defined]
            files = []
            for entry in iter_tree_contents(repo.object_store, tree):
                blob = repo[entry.sha]
                if isinstance(blob, Blob) and entry.path is not None:
                    files.append(
                        WikiFile(
                            entry.path.decode("utf-8", "replace"), entry.sha.decode(), blob.data
                        )
                    )
        except Exception as error:
            raise self._error(error, repository_url) from error
        return WikiSnapshot(head, tuple(files))

    def _error(self, error: Exception, repository_url: str) -> WikiError:
        where = f"the wiki of {repository_url}"
        if isinstance(error, HTTPUnauthorized):
            return WikiError(
                f"{where}: GitHub refused the credentials from {self._password_env} for git "
                "(401); check the token (or the App) may read the repository's contents"
            )
        if isinstance(error, GitProtocolError):
            return WikiError(f"{where}: git said: {str(error).strip()[:200]}")
        return WikiError(f"{where}: could not fetch it ({type(error).__name__})")
