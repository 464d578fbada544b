"""What a directory source's worker process does with one file: read it, decode it, convert it.

These functions run inside `jobs.isolation.IsolatedRunner` workers, so their arguments
and results are small picklable values. They read only the file they are given:
converters never follow includes, fetch URLs or open other files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal
from urllib.parse import quote

from jobs.errors import DocumentError
from jobs.formats import ConvertedDocument
from jobs.formats.html import convert_html
from jobs.formats.markdown import (
    convert_markdown,
    handbook_page_url,
    parse_front_matter,
    redirect_aliases,
)
from jobs.formats.office import convert_docx
from jobs.formats.pdf import convert_pdf
from jobs.formats.plaintext import convert_plaintext
from jobs.formats.restructuredtext import convert_restructuredtext

UrlStyle = Literal["eleventy", "template", "none"]

_BINARY_SAMPLE_BYTES = 8192


@dataclass(frozen=True, slots=True)
class PageUrls:
    """How a file's public URL is made: `eleventy` from `base_url`, `template`, or `none`."""

    style: UrlStyle
    base_url: str | None = None
    template: str | None = None

    def page_url(self, uri: str, permalink: object) -> str | None:
        if self.style == "eleventy" and self.base_url:
            link = permalink if isinstance(permalink, str) else None
            return handbook_page_url(uri, site_root=self.base_url, permalink=link)
        if self.style == "template" and self.template:
            stem = PurePosixPath(uri).with_suffix("").as_posix()
            return self.template.format(path=quote(uri), stem=quote(stem))
        return None


@dataclass(frozen=True, slots=True)
class FileTask:
    """One file to convert, and everything its conversion depends on."""

    path: Path
    uri: str
    file_format: str
    urls: PageUrls
    max_bytes: int
    aliases: Mapping[str, str] = field(default_factory=dict)
    slack_workspace_url: str | None = None


@dataclass(frozen=True, slots=True)
class ConvertedFile:
    document: ConvertedDocument
    url: str | None


@dataclass(frozen=True, slots=True)
class PageAliases:
    """What the alias map needs of one Markdown page: its URL and `redirect_from` aliases."""

    url: str | None
    aliases: list[str]


def convert_file(task: FileTask) -> ConvertedFile:
    """Read and convert one file; DocumentError says why it cannot be indexed."""
    if task.file_format == "pdf":
        return ConvertedFile(convert_pdf(read_bytes(task.path, task.max_bytes)), _url(task, None))
    if task.file_format == "docx":
        return ConvertedFile(convert_docx(read_bytes(task.path, task.max_bytes)), _url(task, None))
    raw = decode_text(read_bytes(task.path, task.max_bytes))
    if task.file_format == "markdown":
        front, _ = parse_front_matter(raw)
        url = _url(task, front.get("permalink"))
        converted = convert_markdown(
            raw,
            page_url=url,
            site_root=task.urls.base_url,
            aliases=task.aliases,
            slack_workspace_url=task.slack_workspace_url,
        )
        return ConvertedFile(converted, url)
    url = _url(task, None)
    if task.file_format == "html":
        return ConvertedFile(convert_html(raw, page_url=url), url)
    if task.file_format == "restructuredtext":
        return ConvertedFile(convert_restructuredtext(raw, page_url=url), url)
    return ConvertedFile(convert_plaintext(raw), url)


def read_page_aliases(task: FileTask) -> PageAliases:
    """A Markdown page's URL and aliases, from its front matter alone."""
    front, _ = parse_front_matter(decode_text(read_bytes(task.path, task.max_bytes)))
    return PageAliases(_url(task, front.get("permalink")), redirect_aliases(front))


def _url(task: FileTask, permalink: object) -> str | None:
    return task.urls.page_url(task.uri, permalink)


def read_bytes(path: Path, max_bytes: int) -> bytes:
    """The file's bytes, after checking its size without reading it."""
    size = path.stat().st_size
    if size > max_bytes:
        raise DocumentError(
            f"{_megabytes(size)} is over the {_megabytes(max_bytes)} limit (max_bytes)"
        )
    if size == 0:
        raise DocumentError("empty: no text after cleaning")
    try:
        return path.read_bytes()
    except OSError as error:
        raise DocumentError(f"could not read the file: {error.strerror or error}") from error


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


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"
