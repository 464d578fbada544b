"""Which chunks a search may return, shared by the vector and the keyword search."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class ChunkFilter:
    """Restrictions on a search; a field left None restricts nothing."""

    sources: Sequence[str] | None = None
    collections: Sequence[str] | None = None
    # Collections never returned, whatever `collections` says: a private channel's
    # threads outside that channel.
    excluded_collections: Sequence[str] | None = None
    # The document's own update time when its source gives one, else when it was indexed.
    updated_after: datetime | None = None
    updated_before: datetime | None = None

    @property
    def restricts(self) -> bool:
        return any(
            f is not None
            for f in (
                self.sources,
                self.collections,
                self.excluded_collections,
                self.updated_after,
                self.updated_before,
            )
        )


NO_FILTER = ChunkFilter()
