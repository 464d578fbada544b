"""The directory source: every matching file under a folder becomes one document.

Files are Markdown (the handbook's Eleventy dialect), plain text, reStructuredText,
HTML or PDF, chosen by extension. A file that cannot be read yields a FailedDocument
with a reason the owner can act on, and the walk goes on. All file work runs in a
worker thread so the event loop keeps serving Slack.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Literal
from urllib.parse import quote

from jobs.documents import FailedDocument, SourceDocument, SourceItem
from jobs.errors import DocumentError, SourceConfigError
from jobs.formats import ConvertedDocument
from jobs.formats.html import convert_html
from jobs.formats.markdown import (
    build_alias_map,
    convert_markdown,
    handbook_page_url,
    parse_front_matter,
    redirect_aliases,
)
from jobs.formats.pdf import convert_pdf
from jobs.formats.plaintext import convert_plaintext
from jobs.formats.restructuredtext import convert_restructuredtext

UrlStyle = Literal["eleventy", "template", "none"]

DEFAULT_INCLUDE = (
    "**/*.md", "**/*.markdown", "**/*.txt", "**/*.rst", "**/*.html", "**/*.htm", "**/*.pdf",
)  # fmt: skip
# Hidden folders (.git, .venv) and vendored dependencies are never documentation.
DEFAULT_EXCLUDE = ("**/.*", "**/node_modules", "**/site-packages")
FORMATS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "plaintext",
    ".rst": "restructuredtext",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
}
HANDBOOK_URL = "https://handbook.tts.gsa.gov"

_BINARY_SAMPLE_BYTES = 8192


class DirectorySource:
    """A folder of documents; `uri` is each file's POSIX path relative to `root`.

    `include`/`exclude` are glob patterns relative to `root` (`**` spans folders; an
    excluded folder excludes everything below it). URLs: `eleventy` derives them the
    way the handbook site does from `base_url`; `template` fills `url_template`'s
    `{path}` (relative path) and `{stem}` (path without extension); `none` gives none.
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
    ) -> None:
        _check_url_settings(url_style, base_url, url_template)
        self.name = name
        self.root = root
        self.include = tuple(include)
        self.exclude = tuple(exclude)
        self.url_style = url_style
        self.base_url = base_url.rstrip("/") if base_url else None
        self.url_template = url_template
        self.max_bytes = max_bytes

    async def documents(self) -> AsyncIterator[SourceItem]:
        """Yield one SourceDocument or FailedDocument per matching file, in path order."""
        if not await asyncio.to_thread(self.root.is_dir):
            raise SourceConfigError(f"{self.root} is not a folder; check the source's root")
        paths = await asyncio.to_thread(self._list_files)
        aliases = await asyncio.to_thread(self._alias_map, paths)
        for path in paths:
            yield await asyncio.to_thread(self._load, path, aliases)

    def _list_files(self) -> list[Path]:
        included = {path for pattern in self.include for path in self.root.glob(pattern)}
        excluded = {path for pattern in self.exclude for path in self.root.glob(pattern)}
        return sorted(
            (
                path
                for path in included
                if path.is_file() and excluded.isdisjoint((path, *path.parents))
            ),
            key=self._uri,
        )

    def _uri(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def _alias_map(self, paths: Sequence[Path]) -> dict[str, str]:
        """Eleventy sites link to pages by old aliases: map them all before converting."""
        if self.url_style != "eleventy" or self.base_url is None:
            return {}
        pages: list[tuple[str, list[str]]] = []
        for path in paths:
            if FORMATS.get(path.suffix.lower()) != "markdown":
                continue
            try:
                front, _ = parse_front_matter(self._read_text(path))
            except (DocumentError, OSError):
                continue  # the main pass reports this file
            url = self._page_url(self._uri(path), front.get("permalink"))
            if url is not None:
                pages.append((url, redirect_aliases(front)))
        return build_alias_map(pages, site_root=self.base_url)

    def _load(self, path: Path, aliases: Mapping[str, str]) -> SourceItem:
        uri = self._uri(path)
        try:
            return self._convert(path, uri, aliases)
        except DocumentError as error:
            return FailedDocument(uri=uri, reason=error.reason)
        except OSError as error:
            return FailedDocument(
                uri=uri, reason=f"could not read the file: {error.strerror or error}"
            )

    def _convert(self, path: Path, uri: str, aliases: Mapping[str, str]) -> SourceDocument:
        file_format = FORMATS.get(path.suffix.lower())
        if file_format is None:
            supported = ", ".join(sorted(FORMATS))
            raise DocumentError(
                f"unsupported file type {path.suffix!r} (supported: {supported}); exclude it"
            )
        modified = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
        converted, url = self._convert_file(path, uri, file_format, aliases)
        if not converted.text.strip():
            raise DocumentError("empty: no text after cleaning")
        title = converted.title or _title_from_path(uri)
        return SourceDocument(
            uri=uri,
            title=title,
            url=url,
            text=_with_title_heading(title, converted.text),
            metadata={**converted.metadata, "path": uri, "format": file_format},
            updated_at=modified,
        )

    def _convert_file(
        self, path: Path, uri: str, file_format: str, aliases: Mapping[str, str]
    ) -> tuple[ConvertedDocument, str | None]:
        if file_format == "pdf":
            return convert_pdf(self._read_bytes(path)), self._page_url(uri, None)
        raw = self._read_text(path)
        if file_format == "markdown":
            front, _ = parse_front_matter(raw)
            url = self._page_url(uri, front.get("permalink"))
            converted = convert_markdown(
                raw, page_url=url, site_root=self.base_url, aliases=aliases
            )
            return converted, url
        url = self._page_url(uri, None)
        if file_format == "html":
            return convert_html(raw, page_url=url), url
        if file_format == "restructuredtext":
            return convert_restructuredtext(raw, page_url=url), url
        return convert_plaintext(raw), url

    def _page_url(self, uri: str, permalink: object) -> str | None:
        if self.url_style == "eleventy" and self.base_url:
            link = permalink if isinstance(permalink, str) else None
            return handbook_page_url(uri, site_root=self.base_url, permalink=link)
        if self.url_style == "template" and self.url_template:
            stem = PurePosixPath(uri).with_suffix("").as_posix()
            return self.url_template.format(path=quote(uri), stem=quote(stem))
        return None

    def _read_bytes(self, path: Path) -> bytes:
        """The file's bytes, after checking its size without reading it."""
        size = path.stat().st_size
        if size > self.max_bytes:
            raise DocumentError(
                f"{_megabytes(size)} is over the {_megabytes(self.max_bytes)} limit (max_bytes)"
            )
        if size == 0:
            raise DocumentError("empty: no text after cleaning")
        return path.read_bytes()

    def _read_text(self, path: Path) -> str:
        return decode_text(self._read_bytes(path))


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
    )


def decode_text(data: bytes) -> str:
    """Decode a text file as UTF-8 (a BOM is allowed); DocumentError if it is not text."""
    if _looks_binary(data[:_BINARY_SAMPLE_BYTES], decodes=True):
        raise DocumentError("looks like a binary file, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        if _looks_binary(data[:_BINARY_SAMPLE_BYTES], decodes=False):
            raise DocumentError("looks like a binary file, not text") from error
        raise DocumentError(
            f"not valid UTF-8 at byte {error.start}; re-save the file as UTF-8"
        ) from error


def _looks_binary(sample: bytes, *, decodes: bool) -> bool:
    """NUL bytes or many control bytes; when it is not UTF-8, many high bytes too."""
    if b"\x00" in sample:
        return True
    if not sample:
        return False
    control = sum(
        1 for byte in sample if (byte < 32 and byte not in b"\t\n\r\f\x1b") or byte == 127
    )
    if control / len(sample) > 0.1:
        return True
    high = sum(1 for byte in sample if byte >= 128)
    # Text in a legacy 8-bit encoding has a few high bytes; binary data is full of them.
    return not decodes and (control + high) / len(sample) > 0.3


def _title_from_path(uri: str) -> str:
    path = PurePosixPath(uri)
    stem = path.stem
    if stem.lower() in ("index", "readme") and path.parent.name:
        stem = path.parent.name
    words = " ".join(stem.replace("_", " ").replace("-", " ").split())
    return words[:1].upper() + words[1:] if words else uri


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


def _check_url_settings(url_style: str, base_url: str | None, url_template: str | None) -> None:
    if url_style == "eleventy" and not base_url:
        raise SourceConfigError("url_style 'eleventy' needs base_url (the site's root URL)")
    if url_style == "template":
        if not url_template:
            raise SourceConfigError("url_style 'template' needs url_template")
        try:
            url_template.format(path="a.md", stem="a")
        except (KeyError, IndexError, ValueError) as error:
            raise SourceConfigError(
                f"url_template {url_template!r} is not valid: use only {{path}} and {{stem}}"
            ) from error
    elif url_style not in ("eleventy", "none"):
        raise SourceConfigError(f"url_style must be eleventy, template or none, not {url_style!r}")
