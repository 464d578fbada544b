"""A local fake of the Google Drive API v3, for google-api-python-client pointed at it.

Written from the Drive v3 reference:
- files.list (q, corpora, driveId, pageToken/nextPageToken, supportsAllDrives):
  https://developers.google.com/drive/api/reference/rest/v3/files/list
  and the query language: https://developers.google.com/drive/api/guides/ref-search-terms
- files.get with alt=media: https://developers.google.com/drive/api/reference/rest/v3/files/get
- files.export: https://developers.google.com/drive/api/reference/rest/v3/files/export
- changes.getStartPageToken / changes.list (newStartPageToken, removed, file):
  https://developers.google.com/drive/api/reference/rest/v3/changes
  A change is "a change to a file or shared drive": moving a folder changes that
  folder's `parents` alone, so the files and folders below it get no change of their
  own (here: `change(folder, parents=...)` logs the folder only).
- errors (401 authError, 403/429 rateLimitExceeded, 400 invalid pageToken):
  https://developers.google.com/drive/api/guides/handle-errors
- limited access (`inheritedPermissionsDisabled`):
  https://developers.google.com/drive/api/guides/limited-expansive-access

Strict: a request without `Authorization: Bearer <token>` gets 401, a query it does not
understand 400 ("Invalid Value"), an unknown page token 400, an unknown file 404.
Faults are scripted per path. Every request is recorded.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer

FOLDER = "application/vnd.google-apps.folder"
DOC = "application/vnd.google-apps.document"
SHEET = "application/vnd.google-apps.spreadsheet"
PREFIX = "/drive/v3"
_TERM = re.compile(
    r"^(?:'([\w-]+)' in parents|trashed\s*=\s*(true|false)|mimeType\s*(=|!=)\s*'([^']+)')$"
)


@dataclass(slots=True)
class File:
    id: str
    name: str
    mime: str
    parents: list[str]
    content: bytes = b""
    drive_id: str | None = None
    modified: datetime = field(default_factory=lambda: datetime(2026, 11, 1, tzinfo=UTC))
    trashed: bool = False
    limited: bool = False  # inheritedPermissionsDisabled: only specific people
    author: str = "Grace Hopper"
    version: int = 1


@dataclass(slots=True)
class Fault:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    times: int = 1


class FakeDrive:
    def __init__(self, *, token: str = "ya29.drive-token") -> None:
        self.token = token
        self.files: dict[str, File] = {}
        self.log: list[tuple[str, bool]] = []  # (file id, removed), one per change
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.faults: dict[str, list[Fault]] = {}
        self.server: TestServer | None = None
        # Content requests in flight at once, at most: `together` holds the first ones
        # until that many arrive (or a few seconds pass), so reads made side by side
        # show as overlapping and reads made one by one do not.
        self.together = 0
        self.in_flight = 0
        self.most_in_flight = 0
        self._arrived = asyncio.Event()

    async def _content_request(self) -> None:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        if self.in_flight >= self.together:
            self._arrived.set()
        elif not self._arrived.is_set():
            with suppress(TimeoutError):  # reads made one by one: no partner comes
                await asyncio.wait_for(self._arrived.wait(), timeout=3)
        self.in_flight -= 1

    @property
    def endpoint(self) -> str:
        assert self.server is not None
        return str(self.server.make_url(PREFIX + "/"))

    def put(self, file: File) -> File:
        if file.id in self.files:
            file.version = self.files[file.id].version + 1
        self.files[file.id] = file
        self.log.append((file.id, False))
        return file

    def change(self, file_id: str, **changes: Any) -> None:
        file = self.files[file_id]
        for key, value in changes.items():
            setattr(file, key, value)
        file.version += 1
        self.log.append((file_id, False))

    def delete(self, file_id: str) -> None:
        del self.files[file_id]
        self.log.append((file_id, True))

    def fail(self, path: str, *faults: Fault) -> None:
        self.faults.setdefault(path, []).extend(faults)

    def calls(self, path_prefix: str = "") -> int:
        return sum(1 for path, _ in self.requests if path.startswith(path_prefix))

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._gate])
        app.router.add_get(f"{PREFIX}/changes/startPageToken", self._start_token)
        app.router.add_get(f"{PREFIX}/changes", self._changes)
        app.router.add_get(f"{PREFIX}/files", self._list)
        app.router.add_get(f"{PREFIX}/files/{{id}}", self._get)
        app.router.add_get(f"{PREFIX}/files/{{id}}/export", self._export)
        return app

    @web.middleware
    async def _gate(self, request: web.Request, handler: Any) -> web.StreamResponse:
        path = request.path.removeprefix(PREFIX)
        self.requests.append((path, dict(request.query)))
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return _error(401, "Request had invalid authentication credentials.", "authError")
        queued = self.faults.get(path)
        if queued:
            fault = queued[0]
            fault.times -= 1
            if fault.times <= 0:
                queued.pop(0)
            reason = "rateLimitExceeded" if fault.status in (403, 429) else "backendError"
            return _error(fault.status, "scripted fault", reason, headers=fault.headers)
        return await handler(request)

    async def _start_token(self, request: web.Request) -> web.Response:
        return web.json_response(
            {"kind": "drive#startPageToken", "startPageToken": str(len(self.log) + 1)}
        )

    async def _changes(self, request: web.Request) -> web.Response:
        token = request.query.get("pageToken", "")
        if not token.isdigit() or not 1 <= int(token) <= len(self.log) + 1:
            return _error(400, "Invalid Value", "invalid", location="pageToken")
        size = int(request.query.get("pageSize", "100"))
        start = int(token) - 1
        window = self.log[start : start + size]
        changes = []
        for number, (file_id, removed) in enumerate(window, start=start + 1):
            if any(later == file_id for later, _ in self.log[number:]):
                continue  # Drive reports a file once, at its latest change
            change: dict[str, Any] = {
                "kind": "drive#change",
                "changeType": "file",
                "time": "2026-12-01T00:00:00.000Z",
                "removed": removed,
                "fileId": file_id,
            }
            if not removed and file_id in self.files:
                change["file"] = self._file_json(self.files[file_id])
            changes.append(change)
        body: dict[str, Any] = {"kind": "drive#changeList", "changes": changes}
        if start + size < len(self.log):
            body["nextPageToken"] = str(start + size + 1)
        else:
            body["newStartPageToken"] = str(len(self.log) + 1)
        return web.json_response(body)

    async def _list(self, request: web.Request) -> web.Response:
        try:
            matches = self._query(request.query.get("q", ""))
        except ValueError as error:
            return _error(400, f"Invalid Value ({error})", "invalid", location="q")
        if request.query.get("corpora") == "drive":
            if request.query.get("supportsAllDrives") != "true" or "driveId" not in request.query:
                return _error(400, "The driveId parameter must be specified", "invalid")
            matches = [f for f in matches if f.drive_id == request.query["driveId"]]
        matches.sort(key=lambda f: f.id)
        size = int(request.query.get("pageSize", "100"))
        start = int(request.query.get("pageToken", "0") or "0")
        window = matches[start : start + size]
        body: dict[str, Any] = {
            "kind": "drive#fileList",
            "files": [self._file_json(f) for f in window],
        }
        if start + size < len(matches):
            body["nextPageToken"] = str(start + size)
        return web.json_response(body)

    def _query(self, q: str) -> list[File]:
        found = list(self.files.values())
        for term in re.split(r"\s+and\s+", q.strip()) if q.strip() else []:
            match = _TERM.match(term.strip())
            if match is None:
                raise ValueError(f"unexpected term {term!r}")
            parent, trashed, operator, mime = match.groups()
            if parent:
                found = [f for f in found if parent in f.parents]
            if trashed:
                found = [f for f in found if f.trashed == (trashed == "true")]
            if mime:
                found = [f for f in found if (f.mime == mime) == (operator == "=")]
        return found

    async def _get(self, request: web.Request) -> web.Response:
        file = self.files.get(request.match_info["id"])
        if file is None:
            return _error(404, f"File not found: {request.match_info['id']}.", "notFound")
        if request.query.get("alt") == "media":
            await self._content_request()
            if file.mime.startswith("application/vnd.google-apps."):
                return _error(
                    403, "Only files with binary content can be downloaded.", "fileNotDownloadable"
                )
            return web.Response(body=file.content, content_type=file.mime)
        return web.json_response(self._file_json(file))

    async def _export(self, request: web.Request) -> web.Response:
        file = self.files.get(request.match_info["id"])
        if file is None:
            return _error(404, "File not found.", "notFound")
        wanted = request.query.get("mimeType", "")
        await self._content_request()
        allowed = {DOC: {"text/html", "text/plain"}, SHEET: {"text/csv"}}.get(file.mime, set())
        if wanted not in allowed:
            return _error(400, "The requested conversion is not supported.", "badRequest")
        return web.Response(body=file.content, content_type=wanted)

    def _file_json(self, file: File) -> dict[str, Any]:
        web_link = (
            f"https://docs.google.com/document/d/{file.id}/edit"
            if file.mime == DOC
            else f"https://drive.google.com/file/d/{file.id}/view"
        )
        body: dict[str, Any] = {
            "kind": "drive#file",
            "id": file.id,
            "name": file.name,
            "mimeType": file.mime,
            "parents": file.parents,
            "trashed": file.trashed,
            "modifiedTime": file.modified.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "version": str(file.version),
            "webViewLink": web_link,
            "lastModifyingUser": {"kind": "drive#user", "displayName": file.author},
            "inheritedPermissionsDisabled": file.limited,
        }
        if file.drive_id:
            body["driveId"] = file.drive_id
        return body


def _error(
    status: int,
    message: str,
    reason: str,
    *,
    location: str | None = None,
    headers: dict[str, str] | None = None,
) -> web.Response:
    detail: dict[str, Any] = {"domain": "global", "reason": reason, "message": message}
    if location:
        detail.update(locationType="parameter", location=location)
    body = {"error": {"code": status, "message": message, "errors": [detail]}}
    return web.json_response(body, status=status, headers=headers or {})


@asynccontextmanager
async def running_drive(fake: FakeDrive) -> AsyncIterator[FakeDrive]:
    server = TestServer(fake.app())
    await server.start_server()
    fake.server = server
    try:
        yield fake
    finally:
        await server.close()
