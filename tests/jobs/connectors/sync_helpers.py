"""Running a connector the way the reindex does, with an in-memory store between runs.

The store here keeps what a run yielded (new and changed documents replace their copy,
gone ones are deleted, unchanged ones stay), so a test can run a connector again and
again and see what each run asked the system for. The real reindex is exercised by
the end-to-end tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jobs.connectors.base import ChangeFeedSource, Cursor
from jobs.documents import (
    FailedDocument,
    GoneDocument,
    SourceDocument,
    SourceItem,
    UnchangedDocument,
)
from store.documents import StoredDocument


@dataclass(slots=True)
class Run:
    items: list[SourceItem]
    cursor: Cursor | None

    def of(self, kind: type) -> dict[str, Any]:
        return {item.uri: item for item in self.items if isinstance(item, kind)}

    @property
    def changed(self) -> dict[str, SourceDocument]:
        return self.of(SourceDocument)

    @property
    def gone(self) -> dict[str, GoneDocument]:
        return self.of(GoneDocument)

    @property
    def failed(self) -> dict[str, FailedDocument]:
        return self.of(FailedDocument)

    @property
    def unchanged(self) -> set[str]:
        return set(self.of(UnchangedDocument))


@dataclass(slots=True)
class MemoryStore:
    documents: dict[str, SourceDocument] = field(default_factory=dict)
    cursor: Cursor | None = None

    def stored(self) -> dict[str, StoredDocument]:
        return {
            uri: StoredDocument(
                id=number,
                uri=uri,
                content_hash=str(hash(doc.text)),
                metadata_hash="",
                metadata=doc.metadata,
                url=doc.url,
                collection=doc.collection,
            )
            for number, (uri, doc) in enumerate(self.documents.items(), start=1)
        }

    async def sync(
        self, source: ChangeFeedSource, *, on_item: Callable[[], None] | None = None
    ) -> Run:
        items = []
        async for item in source.documents():
            items.append(item)
            if on_item is not None:  # progress, for bench/connectors.py
                on_item()
        listed = {item.uri for item in items}
        for item in items:
            if isinstance(item, SourceDocument):
                self.documents[item.uri] = item
            elif isinstance(item, GoneDocument):
                self.documents.pop(item.uri, None)
        for uri in list(self.documents):
            if uri not in listed:  # the reindex deletes what the listing left out
                del self.documents[uri]
        self.cursor = source.new_cursor
        return Run(items, source.new_cursor)
