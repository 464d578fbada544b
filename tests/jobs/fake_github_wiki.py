"""GitHub's wikis as git repositories over smart HTTP, served by dulwich's own git server.

Like github.com: `<owner>/<repo>.wiki.git`, the token as the basic-auth password (any
user name), 401 with `WWW-Authenticate` without valid credentials, 404 for a repository
without a wiki. https://docs.github.com/en/communities/documenting-your-project-with-wikis
"""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from dulwich.objects import Blob, Commit, Tree
from dulwich.repo import MemoryRepo
from dulwich.server import DictBackend
from dulwich.web import WSGIRequestHandlerLogger, WSGIServerLogger, make_server, make_wsgi_chain


class FakeWikis:
    def __init__(self, token_valid: Callable[[str], bool]) -> None:
        self._token_valid = token_valid
        self._repos: dict[str, MemoryRepo] = {}
        self.requests: list[tuple[str, str, int]] = []  # method, path, status
        self.url = ""

    def write(self, full_name: str, pages: dict[str, str | None]) -> str:
        """A commit on the wiki of `full_name` setting (or deleting, None) pages."""
        key = f"/{full_name}.wiki.git"
        repo = self._repos.setdefault(key, MemoryRepo())
        files = self._files(repo)
        for name, text in pages.items():
            if text is None:
                files.pop(name, None)
            else:
                files[name] = text.encode()
        tree = Tree()
        for name, data in sorted(files.items()):
            blob = Blob.from_string(data)
            repo.object_store.add_object(blob)
            tree.add(name.encode(), 0o100644, blob.id)
        repo.object_store.add_object(tree)
        commit = Commit()
        commit.tree = tree.id
        commit.parents = [repo.refs[b"HEAD"]] if b"HEAD" in repo.refs else []
        commit.author = commit.committer = b"Wiki editor <wiki@example.com>"
        commit.commit_time = commit.author_time = int(time.time())
        commit.commit_timezone = commit.author_timezone = 0
        commit.message = b"Updated wiki"
        repo.object_store.add_object(commit)
        repo.refs[b"refs/heads/master"] = commit.id
        repo.refs.set_symbolic_ref(b"HEAD", b"refs/heads/master")
        return commit.id.decode()

    @staticmethod
    def _files(repo: MemoryRepo) -> dict[str, bytes]:
        if b"HEAD" not in repo.refs:
            return {}
        tree = repo[repo[repo.refs[b"HEAD"]].tree]  # type: ignore[attr-defined]
        return {e.path.decode(): repo[e.sha].data for e in tree.iteritems()}  # type: ignore[attr-defined]

    def _app(self) -> Callable[..., Iterable[bytes]]:
        git = make_wsgi_chain(DictBackend(self._repos))  # type: ignore[arg-type]

        def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            path = environ.get("PATH_INFO", "")
            status: list[int] = []

            def record(line: str, headers: list[tuple[str, str]], *rest: Any) -> Any:
                status.append(int(line.split()[0]))
                self.requests.append((environ["REQUEST_METHOD"], path, status[0]))
                return start_response(line, headers, *rest)

            scheme, _, encoded = environ.get("HTTP_AUTHORIZATION", "").partition(" ")
            try:
                _, _, password = base64.b64decode(encoded).decode().partition(":")
            except ValueError:
                password = ""
            if scheme != "Basic" or not self._token_valid(password):
                record("401 Unauthorized", [("WWW-Authenticate", 'Basic realm="GitHub"')])
                return [b"Invalid username or token."]
            if not any(path.startswith(k + "/") for k in self._repos):
                record("404 Not Found", [("Content-Type", "text/plain")])
                return [b"Repository not found."]
            return git(environ, record)

        return app


@contextmanager
def serving_wikis(token_valid: Callable[[str], bool]) -> Iterator[FakeWikis]:
    wikis = FakeWikis(token_valid)
    server = make_server(
        "127.0.0.1",
        0,
        wikis._app(),
        handler_class=WSGIRequestHandlerLogger,
        server_class=WSGIServerLogger,
    )
    wikis.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield wikis
    finally:
        server.shutdown()
        server.server_close()
