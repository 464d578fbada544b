"""The `google_drive` source kind: shared drives and folders, read from Drive's change feed.

The first run takes `changes.getStartPageToken` *before* listing, then lists every file
in scope (`files.list`: a shared drive with `corpora=drive`, a folder and its subfolders
by `'id' in parents`), so an edit made during the listing is in the next run's feed.
Later runs read `changes.list(pageToken)` page by page until `newStartPageToken`:
removed and trashed files are deleted, changed ones fetched again, and every stored file
the feed did not mention is unchanged (jobs/connectors/base.py).

Permissions: a shared drive or a configured folder (with everything below it) is the
permission unit, mapped to a collection (`collections`, else its id in lower case). A
file moved between units moves collection; one moved out of every unit is deleted. The
feed reports a moved folder but not what lies below it, so the subtree of a folder that
changed unit is listed and its files follow it (indexed, moved or deleted). A
file with limited access (`inheritedPermissionsDisabled`: only the people it is shared
with can open it, not everyone who sees the folder or drive) is skipped by default and
counted (`skipped_limited`); such a file already indexed is deleted.

Content: Google Docs are exported as HTML (headings kept, jobs/formats/html.py), Sheets
as CSV (a capped table), Slides as plain text; PDFs, .docx, HTML and text files are
downloaded and converted. Other types are left out.

The client (google-api-python-client) is blocking: each request's `execute()` runs in a
worker thread behind the concurrency cap, through the shared retry policy. It is built
from the discovery document shipped in the package (`static_discovery=True`), so nothing
is fetched to build it.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from jobs.connectors.base import ChangeFeedSource, ConnectorContext, Cursor, SourceCheck
from jobs.connectors.errors import ConnectorError, CredentialRejectedError, TransientError
from jobs.connectors.retry import ApiCalls, RetryPolicy, retry_after_seconds
from jobs.connectors.threads import BlockingCalls
from jobs.documents import (
    FailedDocument,
    GoneDocument,
    SourceDocument,
    SourceItem,
    UnchangedDocument,
)
from jobs.errors import DocumentError
from jobs.file_conversion import decode_text
from jobs.formats.html import convert_html
from jobs.formats.office import convert_csv_table, convert_docx
from jobs.formats.pdf import convert_pdf
from jobs.formats.plaintext import tidy_text

if TYPE_CHECKING:
    from jobs.config import GoogleDriveSourceConfig

log = logging.getLogger(__name__)

FOLDER = "application/vnd.google-apps.folder"
DOC = "application/vnd.google-apps.document"
SHEET = "application/vnd.google-apps.spreadsheet"
SLIDES = "application/vnd.google-apps.presentation"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
# What each readable type is fetched as: (export MIME type, or None to download).
READABLE: dict[str, str | None] = {
    DOC: "text/html",
    SHEET: "text/csv",
    SLIDES: "text/plain",
    "application/pdf": None,
    DOCX: None,
    "text/html": None,
    "text/plain": None,
    "text/markdown": None,
}
_FILE_FIELDS = (
    "id,name,mimeType,parents,driveId,trashed,modifiedTime,version,webViewLink,"
    "lastModifyingUser(displayName),inheritedPermissionsDisabled"
)
_SCOPES = ["https://www.googleapis.com/auth/drive.readonly"]


class _NotFound(Exception):
    """HTTP 404: the file is gone, or no longer shared with the credential."""


class GoogleDriveSource(ChangeFeedSource):
    def __init__(
        self,
        *,
        name: str,
        config: GoogleDriveSourceConfig,
        context: ConnectorContext,
        policy: RetryPolicy | None = None,
    ) -> None:
        super().__init__(name=name, context=context)
        settings = config.settings
        self._settings = settings
        self._credential = context.credential(source=name, env=settings.credentials_env)
        self._service = _drive_service(
            self._credential.value, subject=settings.subject, endpoint=settings.api_endpoint
        )
        self.api = ApiCalls(
            policy or RetryPolicy(attempts=settings.max_attempts, concurrency=settings.concurrency)
        )
        self._threads = BlockingCalls(settings.concurrency)
        # Folder id -> the configured unit (shared drive or root folder) it lies in.
        self._folders: dict[str, str] = {}
        self._token: str | None = None
        self._retry: set[str] = set()
        self.skipped_limited = 0

    # -- the change feed --------------------------------------------------------------

    async def changes(self, cursor: Cursor | None) -> AsyncIterator[SourceItem]:
        if cursor is None:
            async for item in self._everything():
                yield item
        else:
            self._folders = dict(cursor.get("folders") or {})
            async for item in self._changed(str(cursor["token"]), list(cursor.get("retry", []))):
                yield item
        if self.skipped_limited:
            log.info(
                "source %s: %d file(s) shared only with specific people were skipped",
                self.name,
                self.skipped_limited,
            )

    def cursor_after(self, *, failed: Sequence[str]) -> Cursor:
        assert self._token is not None, "cursor_after is called after changes()"
        return {"token": self._token, "folders": self._folders, "retry": sorted(failed)}

    async def check(self, *, titles: int = 3) -> SourceCheck:
        """One listing call per configured drive or folder: what the credential can see."""
        names: list[str] = []
        visible = 0
        capped = False
        for request in self._unit_listings():
            body = await self._execute(functools.partial(request, None))
            files = [f for f in body.get("files", []) if f.get("mimeType") != FOLDER]
            visible += len(files)
            names.extend(str(f.get("name")) for f in files)
            capped = capped or bool(body.get("nextPageToken"))
        return SourceCheck(visible=visible, titles=tuple(names[:titles]), capped=capped)

    async def _everything(self) -> AsyncIterator[SourceItem]:
        token = await self._execute(
            lambda: self._service.changes().getStartPageToken(supportsAllDrives=True)
        )
        self._token = str(token["startPageToken"])
        # Files are read a batch at a time (side by side, up to the concurrency cap), and
        # a batch is yielded before the next is listed, so memory stays bounded.
        batch: list[dict[str, Any]] = []
        for drive in self._settings.shared_drives:
            async for file in self._listing(self._drive_listing(drive)):
                if file.get("mimeType") == FOLDER:
                    self._folders[str(file["id"])] = drive
                    continue
                batch.append(file)
                if len(batch) >= self._batch_size:
                    for item in await self._items(batch):
                        yield item
                    batch = []
        for root in self._settings.folders:
            self._folders[root] = root
            pending = [root]
            while pending:
                folder = pending.pop()
                async for file in self._listing(self._folder_listing(folder)):
                    if file.get("mimeType") == FOLDER:
                        self._folders[str(file["id"])] = root
                        pending.append(str(file["id"]))
                        continue
                    batch.append(file)
                    if len(batch) >= self._batch_size:
                        for item in await self._items(batch):
                            yield item
                        batch = []
        for item in await self._items(batch):
            yield item

    async def _changed(self, token: str, retry: list[str]) -> AsyncIterator[SourceItem]:
        page_token: str | None = token
        latest: dict[str, dict[str, Any] | None] = {}
        moved: set[str] = set()  # folders whose unit changed: their subtrees are listed
        while page_token is not None:
            body = await self._execute(functools.partial(self._changes_request, page_token))
            for change in body.get("changes", []):
                file_id = str(change["fileId"])
                file = None if change.get("removed") else change.get("file")
                if file is not None and file.get("mimeType") == FOLDER:
                    before = self._folders.get(file_id)
                    self._place_folder(file)
                    if self._folders.get(file_id) != before:
                        moved.add(file_id)
                elif file is None and self._folders.pop(file_id, None) is not None:
                    moved.add(file_id)  # a folder we can no longer see
                latest[file_id] = file
            page_token = body.get("nextPageToken")
            if page_token is None:
                self._token = str(body["newStartPageToken"])
        for folder in moved:
            async for file in self._subtree(folder, self._folders.get(folder)):
                latest.setdefault(str(file["id"]), file)
        for file_id in retry:
            if file_id not in latest:
                latest[file_id] = await self._file(file_id)
        files: list[dict[str, Any]] = []
        for file_id, file in latest.items():
            if file is None or file.get("trashed"):
                if file_id in self.context.stored:
                    reason = "the file was trashed" if file else "the file was removed"
                    yield GoneDocument(file_id, reason)
            elif file.get("mimeType") != FOLDER:
                files.append(file)
        for start in range(0, len(files), self._batch_size):
            for item in await self._items(files[start : start + self._batch_size]):
                yield item

    @property
    def _batch_size(self) -> int:
        # Files read side by side before they are handed on: at most a listing page, so
        # `page_size` also bounds what a run holds (and how much a killed run re-lists).
        return min(self._settings.concurrency * 4, self._settings.page_size)

    async def _subtree(self, folder: str, unit: str | None) -> AsyncIterator[dict[str, Any]]:
        """The files below a folder that moved into, out of or between units.

        Drive's change feed reports the moved folder alone: what lies below it keeps its
        parents and is not reported, yet it moved with the folder. Its subfolders are
        placed in the folder's new unit (or forgotten), and its files are listed so each
        is indexed, moved to its new collection or deleted like any changed file.
        """
        pending = [folder]
        while pending:
            current = pending.pop()
            async for file in self._listing(self._folder_listing(current)):
                if file.get("mimeType") == FOLDER:
                    sub = str(file["id"])
                    if sub in self._settings.folders:
                        continue  # a configured root keeps its own unit
                    if unit is None:
                        self._folders.pop(sub, None)
                    else:
                        self._folders[sub] = unit
                    pending.append(sub)
                else:
                    yield file

    def _changes_request(self, page_token: str) -> Any:
        return self._service.changes().list(
            pageToken=page_token,
            pageSize=self._settings.page_size,
            includeRemoved=True,
            includeItemsFromAllDrives=True,
            supportsAllDrives=True,
            fields=(
                f"nextPageToken,newStartPageToken,changes(fileId,removed,file({_FILE_FIELDS}))"
            ),
        )

    def _place_folder(self, folder: Mapping[str, Any]) -> None:
        """Keep the folder map current as folders are created, moved or trashed."""
        folder_id = str(folder["id"])
        if folder_id in self._settings.folders:
            return
        unit = None if folder.get("trashed") else self._unit(folder)
        if unit is None:
            self._folders.pop(folder_id, None)
        else:
            self._folders[folder_id] = unit

    async def _items(self, files: Sequence[Mapping[str, Any]]) -> list[SourceItem]:
        results = await asyncio.gather(
            *(self._file_item(f) for f in files if f.get("mimeType") != FOLDER)
        )
        return [item for item in results if item is not None]

    async def _file_item(self, file: Mapping[str, Any]) -> SourceItem | None:
        uri = str(file["id"])
        stored = self.context.stored.get(uri)
        unit = self._unit(file)
        if unit is None:
            return (
                GoneDocument(uri, "moved out of the synced drives and folders") if stored else None
            )
        if file.get("inheritedPermissionsDisabled") and not self._settings.include_limited_access:
            self.skipped_limited += 1
            return GoneDocument(uri, "shared only with specific people now") if stored else None
        mime = str(file.get("mimeType"))
        if mime not in READABLE or (
            self._settings.mime_types and mime not in self._settings.mime_types
        ):
            return None
        collection = self._settings.collections.get(unit) or unit.lower()
        version = str(file.get("version") or file.get("modifiedTime") or "")
        stored_version = (stored.metadata.get("drive") or {}).get("version") if stored else None
        if stored is not None and stored_version == version and stored.collection == collection:
            # Said, not left to the base class: a run without a cursor (the first run was
            # killed before saving one) lists everything, and what it leaves out is deleted.
            return UnchangedDocument(uri)
        title = str(file.get("name") or uri)
        try:
            text = await self._content(file)
        except _NotFound:
            return GoneDocument(uri, "the file is no longer shared") if stored else None
        except (ConnectorError, DocumentError) as error:
            if isinstance(error, CredentialRejectedError):
                raise
            return FailedDocument(uri, f"{title!r}: {error}")
        if not text.strip():
            return FailedDocument(uri, f"{title!r}: empty: no text after cleaning")
        author = (file.get("lastModifyingUser") or {}).get("displayName")
        return SourceDocument(
            uri=uri,
            title=title,
            url=str(file.get("webViewLink") or "") or None,
            text=text,
            metadata={
                "drive": {"id": uri, "version": version, "mime_type": mime},
                "author": author,
            },
            updated_at=_parse_when(file.get("modifiedTime")),
            collection=collection,
        )

    def _unit(self, file: Mapping[str, Any]) -> str | None:
        """The configured shared drive or root folder the file lies in, if any."""
        drive = file.get("driveId")
        if drive and drive in self._settings.shared_drives:
            return str(drive)
        for parent in file.get("parents") or []:
            if parent in self._folders:
                return self._folders[parent]
        return None

    async def _content(self, file: Mapping[str, Any]) -> str:
        file_id, mime = str(file["id"]), str(file["mimeType"])
        export = READABLE[mime]
        if export is not None:
            data = await self._media(
                lambda: self._service.files().export(fileId=file_id, mimeType=export)
            )
        else:
            data = await self._media(
                lambda: self._service.files().get_media(fileId=file_id, supportsAllDrives=True)
            )
        if len(data) > self._settings.max_bytes:
            raise DocumentError(f"{len(data):,} bytes, over the max_bytes limit")
        return await asyncio.to_thread(
            _convert, mime, data, str(file.get("webViewLink") or ""), self._settings.max_sheet_rows
        )

    async def _file(self, file_id: str) -> dict[str, Any] | None:
        try:
            return await self._execute(
                lambda: self._service.files().get(
                    fileId=file_id, fields=_FILE_FIELDS, supportsAllDrives=True
                )
            )
        except _NotFound:
            return None

    # -- listings -----------------------------------------------------------------------

    def _drive_listing(self, drive: str) -> Callable[[str | None], Any]:
        return lambda page: self._service.files().list(
            corpora="drive",
            driveId=drive,
            includeItemsFromAllDrives=True,
            supportsAllDrives=True,
            q="trashed = false",
            pageSize=self._settings.page_size,
            pageToken=page,
            fields=f"nextPageToken,files({_FILE_FIELDS})",
        )

    def _folder_listing(self, folder: str) -> Callable[[str | None], Any]:
        return lambda page: self._service.files().list(
            includeItemsFromAllDrives=True,
            supportsAllDrives=True,
            q=f"'{folder}' in parents and trashed = false",
            pageSize=self._settings.page_size,
            pageToken=page,
            fields=f"nextPageToken,files({_FILE_FIELDS})",
        )

    def _unit_listings(self) -> list[Callable[[str | None], Any]]:
        drives = [self._drive_listing(d) for d in self._settings.shared_drives]
        return drives + [self._folder_listing(f) for f in self._settings.folders]

    async def _listing(self, request: Callable[[str | None], Any]) -> AsyncIterator[dict[str, Any]]:
        page: str | None = None
        while True:
            body = await self._execute(functools.partial(request, page))
            for file in body.get("files", []):
                yield file
            page = body.get("nextPageToken")
            if not page:
                return

    # -- HTTP ---------------------------------------------------------------------------

    async def _execute(self, build: Callable[[], Any]) -> dict[str, Any]:
        async def once() -> dict[str, Any]:
            result = await self._run(build)
            if not isinstance(result, dict):
                raise ConnectorError("Google Drive sent an unexpected response")
            return result

        return await self.api.call(once)

    async def _media(self, build: Callable[[], Any]) -> bytes:
        async def once() -> bytes:
            result = await self._run(build)
            if not isinstance(result, bytes):
                raise ConnectorError("Google Drive sent no file content")
            return result

        return await self.api.call(once)

    def _fresh_http(self) -> Any:
        import google_auth_httplib2
        import httplib2

        credentials = self._service._http.credentials
        # httplib2 waits forever by default: a stalled answer would hang the sync.
        http = httplib2.Http(timeout=self._settings.timeout_seconds)
        return google_auth_httplib2.AuthorizedHttp(credentials, http=http)

    async def _run(self, build: Callable[[], Any]) -> Any:
        from google.auth.exceptions import RefreshError, TransportError
        from googleapiclient.errors import HttpError

        try:
            # httplib2, the client's transport, is not thread-safe: requests sharing the
            # service's one Http in parallel threads got each other's responses (a file's
            # text indexed under another file's title and URL). Each call gets its own
            # Http, as the client's documentation says to do for threads.
            return await self._threads.run(
                lambda: build().execute(http=self._fresh_http(), num_retries=0)
            )
        except RefreshError:
            raise CredentialRejectedError(
                source=self.name, env=self._credential.env, system="Google Drive"
            ) from None
        except HttpError as error:
            status = int(error.resp.status)
            if status == 401:
                raise CredentialRejectedError(
                    source=self.name, env=self._credential.env, system="Google Drive"
                ) from None
            if status == 404:
                raise _NotFound() from None
            reason = _reason(error)
            if (
                status == 429
                or status >= 500
                or reason in ("rateLimitExceeded", "userRateLimitExceeded")
            ):
                raise TransientError(
                    f"Google Drive answered HTTP {status}",
                    retry_after=retry_after_seconds(error.resp.get("retry-after")),
                ) from None
            raise ConnectorError(
                f"Google Drive answered HTTP {status}: {reason or 'error'}"
            ) from None
        except (TransportError, OSError) as error:
            raise TransientError(
                f"Google Drive could not be reached: {type(error).__name__}"
            ) from None


def _convert(mime: str, data: bytes, url: str, max_rows: int) -> str:
    """A file's bytes as cleaned text, by type (runs in a worker thread)."""
    if mime == "application/pdf":
        return convert_pdf(data).text
    if mime == DOCX:
        return convert_docx(data).text
    text = decode_text(data)
    if mime in (DOC, "text/html"):
        return convert_html(text, page_url=url or None).text
    if mime == SHEET:
        return convert_csv_table(text, max_rows=max_rows)
    return tidy_text(text)


def _reason(error: Any) -> str:
    try:
        body = json.loads(error.content.decode("utf-8"))
        return str(body["error"]["errors"][0]["reason"])
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return ""


def _drive_service(secret: str, *, subject: str | None, endpoint: str | None) -> Any:
    """A Drive v3 client from the packaged discovery document; no network is used to build it.

    `secret` is a service account's JSON key (the usual case: its own files, or a user's
    with domain-wide delegation when `subject` names them) or an OAuth access token.
    """
    from google.oauth2 import credentials as oauth
    from google.oauth2 import service_account
    from googleapiclient.discovery import build

    if secret.lstrip().startswith("{"):
        try:
            info = json.loads(secret)
            creds: Any = service_account.Credentials.from_service_account_info(info, scopes=_SCOPES)
        except (ValueError, KeyError) as error:
            raise ConnectorError(
                "the service account key is not valid JSON key material"
            ) from error
        if subject:
            creds = creds.with_subject(subject)
    else:
        creds = oauth.Credentials(token=secret.strip())
    options = {"api_endpoint": endpoint} if endpoint else None
    return build(
        "drive",
        "v3",
        credentials=creds,
        client_options=options,
        static_discovery=True,
        cache_discovery=False,
    )


def _parse_when(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def build_google_drive(config: Any, context: ConnectorContext) -> GoogleDriveSource:
    return GoogleDriveSource(name=config.name, config=config, context=context)
