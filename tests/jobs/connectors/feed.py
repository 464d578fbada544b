"""A tiny change-feed system and its connector, for the framework's own tests.

The "system" numbers every edit (like a log sequence number); its change feed answers
"what changed after sequence n". Nothing here is under test: it exercises
jobs/connectors/base.py and the reindex's cursor handling.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from jobs.connectors.base import ChangeFeedSource, ConnectorContext, Cursor
from jobs.documents import FailedDocument, GoneDocument, SourceDocument, SourceItem


@dataclass(slots=True)
class Page:
    title: str
    text: str
    collection: str | None = None
    deleted: bool = False
    unreadable: bool = False
    seq: int = 0


@dataclass(slots=True)
class FeedSystem:
    pages: dict[str, Page] = field(default_factory=dict)
    seq: int = 0
    # Every cursor the feed was asked from, in order.
    asked: list[int | None] = field(default_factory=list)

    def put(self, page_id: str, page: Page) -> None:
        self.seq += 1
        page.seq = self.seq
        self.pages[page_id] = page

    def edit(self, page_id: str, **changes: Any) -> None:
        page = self.pages[page_id]
        for key, value in changes.items():
            setattr(page, key, value)
        self.seq += 1
        page.seq = self.seq


class FeedSource(ChangeFeedSource):
    def __init__(self, *, name: str, context: ConnectorContext, system: FeedSystem) -> None:
        super().__init__(name=name, context=context)
        self.system = system
        self._newest = (context.cursor or {}).get("seq", 0)

    async def changes(self, cursor: Cursor | None) -> AsyncIterator[SourceItem]:
        after = None if cursor is None else int(cursor["seq"])
        retry = set((cursor or {}).get("retry", []))
        self.system.asked.append(after)
        for page_id, page in sorted(self.system.pages.items()):
            if after is not None and page.seq <= after and page_id not in retry:
                continue
            self._newest = max(self._newest, page.seq)
            if page.deleted:
                yield GoneDocument(page_id, "deleted")
            elif page.unreadable:
                yield FailedDocument(page_id, "could not be read")
            else:
                yield SourceDocument(
                    uri=page_id,
                    title=page.title,
                    url=f"https://feed.example/{page_id}",
                    text=page.text,
                    collection=page.collection,
                )

    def cursor_after(self, *, failed: Sequence[str]) -> Cursor:
        return {"seq": self._newest, "retry": sorted(failed)}
