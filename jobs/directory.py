"""The directory source: every matching file under a folder becomes one document.

Files are Markdown (the handbook's Eleventy dialect), plain text, reStructuredText,
HTML or PDF, chosen by extension. Whatever is wrong with one file (unreadable, not
text, a parser that gives up, a conversion over its time or memory budget, a symlink
leading out of the folder or round in a loop) yields a FailedDocument with a reason the
owner can act on, and the walk goes on. Conversions run in worker processes
(`jobs.isolation`); listing runs in a thread, so the event loop keeps serving Slack.

A file whose size, modification time, source settings and converter version are the
same as when it was last indexed is not opened at all: it is an UnchangedDocument. The
Eleventy alias map, which every page's links depend on, is built from the stored
metadata of such pages, and a change in it re-converts every Markdown page.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import stat
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePath, PurePosixPath
from urllib.parse import quote

from pydantic import ValidationError

from jobs.config import DEFAULT_EXCLUDE, DEFAULT_INCLUDE, DirectorySettings, describe_error
from jobs.documents import FailedDocument, SourceDocument, SourceItem, UnchangedDocument
from jobs.errors import DocumentError, SourceConfigError
from jobs.file_conversion import (
    ConvertedFile,
    FileTask,
    PageUrls,
    UrlStyle,
    convert_file,
    read_page_aliases,
)
from jobs.formats import CONVERTER_VERSION
from jobs.formats.markdown import build_alias_map
from jobs.hashing import CHUNKING_VERSION
from jobs.isolation import ConversionBudget, IsolatedRunner, one_line_reason
from store.documents import StoredDocument

log = logging.getLogger(__name__)

__all__ = ["DEFAULT_EXCLUDE", "DEFAULT_INCLUDE", "DirectorySource", "handbook_source"]

FORMATS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "plaintext",
    ".rst": "restructuredtext",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".docx": "docx",
}
HANDBOOK_URL = "https://handbook.tts.gsa.gov"
HANDBOOK_SLACK = "https://gsa-tts.slack.com"

# Conversions kept in flight, so both workers stay busy while results are yielded in order.
_AHEAD = 8
# Every printable ASCII character but "%" stays as it is in a percent-encoded file name.
_SAFE_NAME = "".join(chr(c) for c in range(0x20, 0x7F) if chr(c) != "%")


@dataclass(frozen=True, slots=True)
class _Listed:
    """A file found by the listing, with what decides whether it must be read again."""

    path: Path
    uri: str
    file_format: str
    fingerprint: str
    modified: datetime
    note: str | None


class DirectorySource:
    """A folder of documents; `uri` is each file's POSIX path relative to `root`.

    `include`/`exclude` are glob patterns relative to `root` (`**` spans folders; an
    excluded folder excludes everything below it). URLs: `eleventy` derives them the
    way the handbook site does from `base_url`; `template` fills `url_template`'s
    `{path}` (relative path) and `{stem}` (path without extension); `none` gives none.
    `previous` is what the store holds for this source (by uri), so unchanged files can
    be skipped without reading them.
    """

    def __init__(
        self,
        *,
        name: str,
        root: Path,
        include: Sequence[str] = DEFAULT_INCLUDE,
        exclude: Sequence[str] = DEFAULT_EXCLUDE,
        url_style: UrlStyle,
        base_url: str | None = None,
        url_template: str | None = None,
        max_bytes: int = 10_000_000,
        slack_workspace_url: str | None = None,
        budget: ConversionBudget | None = None,
        previous: Mapping[str, StoredDocument] | None = None,
    ) -> None:
        settings = _checked_settings(root, include, exclude, url_style, base_url, url_template)
        self.name = name
        self.root = root
        self.include = tuple(settings.include)
        self.exclude = tuple(settings.exclude)
        self.url_style = url_style
        self.base_url = base_url.rstrip("/") if base_url else None
        self.urls = PageUrls(url_style, self.base_url, url_template)
        self.max_bytes = max_bytes
        self.slack_workspace_url = slack_workspace_url
        self.budget = budget or ConversionBudget()
        self._previous = previous or {}
        # The part of every file's fingerprint that says how it is converted.
        self.fingerprint_suffix = _digest(
            [CONVERTER_VERSION, CHUNKING_VERSION, self.urls, max_bytes, slack_workspace_url]
        )

    @classmethod
    def from_settings(
        cls,
        *,
        name: str,
        settings: DirectorySettings,
        base_dir: Path,
        previous: Mapping[str, StoredDocument] | None = None,
    ) -> DirectorySource:
        """The source a sources-file entry describes; a relative root starts at `base_dir`."""
        return cls(
            name=name,
            root=base_dir / settings.root,
            include=settings.include,
            exclude=settings.exclude,
            url_style=settings.resolved_url_style,
            base_url=settings.base_url,
            url_template=settings.url_template,
            max_bytes=settings.max_bytes,
            slack_workspace_url=settings.slack_workspace_url,
            budget=ConversionBudget(
                seconds=settings.convert_timeout_seconds, memory_mb=settings.convert_memory_mb
            ),
            previous=previous,
        )

    async def documents(self) -> AsyncIterator[SourceItem]:
        """Yield one item per matching file, in path order."""
        if not await asyncio.to_thread(self.root.is_dir):
            raise SourceConfigError(f"{self.root} is not a folder; check the source's root")
        listing = await asyncio.to_thread(self._list_files)
        async with IsolatedRunner(self.budget) as runner:
            aliases = await self._alias_map(listing, runner)
            links = _digest(sorted(aliases.items())) if aliases else ""

            def load(entry: _Listed | FailedDocument) -> Awaitable[SourceItem]:
                return self._load(entry, runner, aliases, links)

            async for item in _in_order(listing, load):
                yield item

    # -- listing ---------------------------------------------------------------------------

    def _list_files(self) -> list[_Listed | FailedDocument]:
        included = {path for pattern in self.include for path in self.root.glob(pattern)}
        excluded = {path for pattern in self.exclude for path in self.root.glob(pattern)}
        real_root = self.root.resolve()
        listed = (
            self._listed(path, real_root)
            for path in included
            if excluded.isdisjoint((path, *path.parents))
        )
        return sorted((entry for entry in listed if entry is not None), key=lambda e: e.uri)

    def _listed(self, path: Path, real_root: Path) -> _Listed | FailedDocument | None:
        uri, note = safe_uri(path.relative_to(self.root))
        try:
            real = path.resolve(strict=True)
            status = real.stat()
        except (OSError, RuntimeError):
            if path.is_symlink():
                return FailedDocument(uri, "a symlink that loops or leads nowhere; skipped")
            return None  # removed while we listed
        if not stat.S_ISREG(status.st_mode):
            return None  # a folder, socket or device the pattern happened to match
        if not real.is_relative_to(real_root):
            return FailedDocument(uri, "a symlink to a file outside the source folder; skipped")
        file_format = FORMATS.get(path.suffix.lower())
        if file_format is None:
            supported = ", ".join(sorted(FORMATS))
            return FailedDocument(
                uri, f"unsupported file type {path.suffix!r} (supported: {supported}); exclude it"
            )
        fingerprint = f"{status.st_size}:{status.st_mtime_ns}:{self.fingerprint_suffix}"
        modified = datetime.fromtimestamp(status.st_mtime, tz=UTC)
        return _Listed(path, uri, file_format, fingerprint, modified, note)

    # -- aliases ---------------------------------------------------------------------------

    async def _alias_map(
        self, listing: Sequence[_Listed | FailedDocument], runner: IsolatedRunner
    ) -> dict[str, str]:
        """Eleventy sites link to pages by old aliases: map them all before converting."""
        if self.url_style != "eleventy" or self.base_url is None:
            return {}
        pages = [e for e in listing if isinstance(e, _Listed) and e.file_format == "markdown"]
        found = await asyncio.gather(*(self._page_aliases(page, runner) for page in pages))
        entries = [(url, aliases) for url, aliases in found if url is not None]
        return build_alias_map(entries, site_root=self.base_url)

    async def _page_aliases(
        self, entry: _Listed, runner: IsolatedRunner
    ) -> tuple[str | None, list[str]]:
        stored = self._unchanged_copy(entry)
        if stored is not None:
            return stored.url, list(stored.metadata.get("redirect_from") or [])
        try:
            page = await runner.run(read_page_aliases, self._task(entry, {}))
        except DocumentError:
            return None, []  # the main pass reports this file
        return page.url, page.aliases

    # -- one file --------------------------------------------------------------------------

    async def _load(
        self,
        entry: _Listed | FailedDocument,
        runner: IsolatedRunner,
        aliases: Mapping[str, str],
        links: str,
    ) -> SourceItem:
        if isinstance(entry, FailedDocument):
            return entry
        stored = self._unchanged_copy(entry)
        if stored is not None and self._links_of(entry, links) == stored.metadata.get("links"):
            return UnchangedDocument(entry.uri)
        try:
            converted = await runner.run(convert_file, self._task(entry, aliases))
            return self._document(entry, converted, self._links_of(entry, links))
        except DocumentError as error:
            return FailedDocument(uri=entry.uri, reason=error.reason)
        except Exception as error:
            log.debug("could not convert %s", entry.uri, exc_info=True)
            return FailedDocument(uri=entry.uri, reason=one_line_reason(error))

    def _unchanged_copy(self, entry: _Listed) -> StoredDocument | None:
        stored = self._previous.get(entry.uri)
        if stored is None or stored.metadata.get("file_fingerprint") != entry.fingerprint:
            return None
        return stored

    def _links_of(self, entry: _Listed, links: str) -> str | None:
        return links if entry.file_format == "markdown" and links else None

    def _task(self, entry: _Listed, aliases: Mapping[str, str]) -> FileTask:
        return FileTask(
            path=entry.path,
            uri=entry.uri,
            file_format=entry.file_format,
            urls=self.urls,
            max_bytes=self.max_bytes,
            aliases=aliases,
            slack_workspace_url=self.slack_workspace_url,
        )

    def _document(self, entry: _Listed, converted: ConvertedFile, links: str | None) -> SourceItem:
        document = converted.document
        if not document.text.strip():
            raise DocumentError("empty: no text after cleaning")
        title = document.title or _title_from_path(entry.uri)
        metadata = {
            **document.metadata,
            "path": entry.uri,
            "format": entry.file_format,
            "file_fingerprint": entry.fingerprint,
        }
        if links is not None:
            metadata["links"] = links
        return SourceDocument(
            uri=entry.uri,
            title=title,
            url=converted.url,
            text=_with_title_heading(title, document.text),
            metadata=metadata,
            updated_at=entry.modified,
            notes=(entry.note,) if entry.note else (),
        )


async def _in_order(
    entries: Iterable[_Listed | FailedDocument],
    load: Callable[[_Listed | FailedDocument], Awaitable[SourceItem]],
) -> AsyncIterator[SourceItem]:
    """`load` each entry, a few at a time, yielding the results in the entries' order."""
    ahead: deque[asyncio.Future[SourceItem]] = deque()
    try:
        for entry in entries:
            ahead.append(asyncio.ensure_future(load(entry)))
            if len(ahead) >= _AHEAD:
                yield await ahead.popleft()
        while ahead:
            yield await ahead.popleft()
    finally:
        for future in ahead:
            future.cancel()


def safe_uri(relative: PurePath) -> tuple[str, str | None]:
    """The file's POSIX path as a uri, and a note when its name had to be percent-encoded.

    A name that is not UTF-8 arrives from the OS with surrogate escapes, which Postgres
    cannot store; its raw bytes are percent-encoded instead (`caf%E9.md`).
    """
    posix = relative.as_posix()
    try:
        posix.encode("utf-8")
    except UnicodeEncodeError:
        uri = quote(os.fsencode(posix), safe=_SAFE_NAME)
        return uri, f"the file name is not valid UTF-8; indexed as {uri}"
    return posix, None


def _with_title_heading(title: str, text: str) -> str:
    """Start the text with the page's title as its top heading, as the page shows it.

    The title then reaches the embeddings through every chunk's heading path (so "Leave"
    chunks are found for leave questions); renaming a page re-embeds it, which is right
    since the title is part of what readers see.
    """
    if text.lstrip().startswith("# "):
        return text
    return f"# {title}\n\n{text}"


def handbook_source(root: Path) -> DirectorySource:
    """The bundled TTS Handbook snapshot (`bot/sample_kb/handbook`): its pages, with public URLs."""
    return DirectorySource(
        name="handbook",
        root=root,
        include=("pages/**/*.md",),
        url_style="eleventy",
        base_url=HANDBOOK_URL,
        slack_workspace_url=HANDBOOK_SLACK,
    )


def _title_from_path(uri: str) -> str:
    path = PurePosixPath(uri)
    stem = path.stem
    if stem.lower() in ("index", "readme") and path.parent.name:
        stem = path.parent.name
    words = " ".join(stem.replace("_", " ").replace("-", " ").split())
    return words[:1].upper() + words[1:] if words else uri


def _digest(value: object) -> str:
    payload = json.dumps(value, sort_keys=True, default=repr)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _checked_settings(
    root: Path,
    include: Sequence[str],
    exclude: Sequence[str],
    url_style: UrlStyle,
    base_url: str | None,
    url_template: str | None,
) -> DirectorySettings:
    """The same checks a sources file gets, for sources built in code."""
    values = {
        "root": str(root), "include": list(include), "exclude": list(exclude),
        "url_style": url_style, "base_url": base_url, "url_template": url_template,
    }  # fmt: skip
    try:
        return DirectorySettings.model_validate(values)
    except ValidationError as error:
        raise SourceConfigError(describe_error(values, error)) from None
