"""What a source hands to the indexer: cleaned documents, failures, and 'unchanged' markers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class SourceDocument:
    """One cleaned document, ready to chunk.

    `uri` is the document's stable identity inside its source (a relative path for
    files, the canonical URL for web pages). `text` is the cleaned text that gets
    chunked and embedded: Markdown-flavoured plain text where headings are lines
    starting with `#`, paragraphs are separated by blank lines, and links are kept
    as `[text](url)`. `metadata` must be JSON-serialisable. `notes` are things the
    owner should know although the document was indexed (a file name that had to be
    encoded); the run reports them as warnings. `collection`, when given, overrides the
    source's configured collection for this document: a connector maps the document's
    permission unit (a Notion root page, a Confluence space, a Drive shared drive) to it,
    and a document whose unit changes moves collection on the next run.
    """

    uri: str
    title: str
    url: str | None
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)
    updated_at: datetime | None = None
    notes: tuple[str, ...] = ()
    collection: str | None = None


@dataclass(frozen=True, slots=True)
class FailedDocument:
    """A document the source could not read; the run reports it and goes on."""

    uri: str
    reason: str


@dataclass(frozen=True, slots=True)
class UnchangedDocument:
    """The source knows the document did not change (e.g. HTTP 304): keep the stored copy."""

    uri: str


@dataclass(frozen=True, slots=True)
class GoneDocument:
    """The source says the document was removed (e.g. HTTP 404/410): delete the stored copy."""

    uri: str
    reason: str


SourceItem = SourceDocument | FailedDocument | UnchangedDocument | GoneDocument


class Source(Protocol):
    """Anything that can list the documents of one configured source."""

    name: str

    def documents(self) -> AsyncIterator[SourceItem]:
        """Yield every document currently in the source, one item per document."""
        ...


class StaticSource:
    """A source whose items are handed over up front (tests, benchmarks, imports)."""

    def __init__(self, name: str, items: Sequence[SourceItem]) -> None:
        self.name = name
        self.items = list(items)

    async def documents(self) -> AsyncIterator[SourceItem]:
        for item in self.items:
            yield item
