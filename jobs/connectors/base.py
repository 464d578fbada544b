"""The change-feed Source every connector builds on.

A connector asks its system what changed since the saved cursor (`changes`), yielding a
SourceDocument for each new or edited document, a GoneDocument for each one deleted,
archived or no longer visible, and a FailedDocument for one it could not read. The base
class then marks every other stored document unchanged, so the indexer's usual rules
(hash diff, chunk reuse, "absent from the listing means deleted") hold as they are, and
after the listing it hands over the cursor to save (`new_cursor`). The reindex saves it
only once the run has written everything (jobs/reindex.py): a run killed half-way starts
again from the previous cursor, and what it had written is found unchanged by its hashes.

With no cursor (a first run, or `kb index --full`-style resets) `changes` lists every
document and nothing is filled in: a stored document it did not list is deleted.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from jobs.connectors.errors import MissingCredentialError, RefreshUnsupported
from jobs.documents import FailedDocument, SourceItem, UnchangedDocument
from store.documents import StoredDocument

Cursor = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Credential:
    """A secret and the name of the environment variable it came from (for messages).

    The value never appears in a repr, a log line or an error: only `env` does.
    """

    env: str
    value: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class ConnectorContext:
    """What a connector is built with, besides its settings."""

    # What the store holds of this source, by uri.
    stored: Mapping[str, StoredDocument] = field(default_factory=dict)
    # The cursor saved by the last complete run; None: read everything.
    cursor: Cursor | None = None
    # Environment variable name → value, for the names the sources file gives (bot/ reads
    # the environment; jobs/ never does).
    credentials: Mapping[str, str] = field(default_factory=dict, repr=False)
    # Read only these documents again (a refresh: the bot saw them change in Slack);
    # None: the whole change feed. A refresh never moves the cursor.
    only: frozenset[str] | None = None

    def credential(self, *, source: str, env: str) -> Credential:
        value = self.credentials.get(env)
        if not value:
            raise MissingCredentialError(source=source, env=env)
        return Credential(env, value)


@dataclass(frozen=True, slots=True)
class SourceCheck:
    """What `kb sources --check --online` reports of one source."""

    visible: int  # documents the credential can see (counted, possibly capped)
    titles: tuple[str, ...]  # the first few
    capped: bool = False  # `visible` stopped counting at the check's limit

    def describe(self) -> str:
        count = f"{self.visible}{'+' if self.capped else ''} document(s) visible"
        if not self.titles:
            return count
        return f"{count}, e.g. " + ", ".join(repr(t) for t in self.titles)


@runtime_checkable
class CursorSource(Protocol):
    """A source that reads a change feed: the reindex saves `new_cursor` after a full run."""

    name: str
    new_cursor: Cursor | None


@runtime_checkable
class OnlineCheck(Protocol):
    """A source that can authenticate and report what it sees without indexing."""

    name: str

    async def check(self, *, titles: int = 3) -> SourceCheck: ...


class ChangeFeedSource(ABC):
    """Base of every change-feed connector; subclasses implement `changes` and `cursor_after`."""

    def __init__(self, *, name: str, context: ConnectorContext) -> None:
        self.name = name
        self.context = context
        # Set once `documents()` has listed everything; None until then (or on failure).
        self.new_cursor: Cursor | None = None
        self._failed: list[str] = []  # what the source could not read this run

    @property
    def cursor(self) -> Cursor | None:
        return self.context.cursor

    @abstractmethod
    def changes(self, cursor: Cursor | None) -> AsyncIterator[SourceItem]:
        """What changed since `cursor` (everything when None), one item per document."""

    @abstractmethod
    def cursor_after(self, *, failed: Sequence[str]) -> Cursor:
        """The cursor to save after a complete listing. `failed` are the uris that could not
        be read this run: a connector should read them again next run (keep them in the
        cursor, or do not move past them), since their stored copies are now stale."""

    def refresh(self, uris: frozenset[str]) -> AsyncIterator[SourceItem]:
        """Those documents read again, whatever the feed says (`context.only`); a
        connector that can't read one document alone refuses."""
        raise RefreshUnsupported(f"source {self.name!r} can't read single documents again")

    async def documents(self) -> AsyncIterator[SourceItem]:
        listed: set[str] = set()
        self._failed = []
        if self.context.only is not None:
            # A refresh lists a few documents; every other one stays as stored, and the
            # cursor stays where the last full run left it (new_cursor stays None).
            if self.cursor is None:
                return  # never synced: the first full run reads them
            async for item in self.refresh(self.context.only):
                listed.add(item.uri)
                yield item
            for uri in self.context.stored:
                if uri not in listed:
                    yield UnchangedDocument(uri)
            return
        async for item in self.changes(self.cursor):
            listed.add(item.uri)
            if isinstance(item, FailedDocument):
                self._failed.append(item.uri)
            yield item
        if self.cursor is not None:
            for uri in self.context.stored:
                if uri not in listed:
                    yield UnchangedDocument(uri)
        self.new_cursor = self.cursor_after(failed=self._failed)

    def settle(self, *, failed: Sequence[str]) -> Cursor | None:
        """The cursor to save once the run is written. `failed` are the documents the
        indexer could not write (no text left after cleaning, a write that failed): they
        are read again next run like the ones the source could not read."""
        if self.new_cursor is None:
            return None
        return self.cursor_after(failed=sorted(set(self._failed) | set(failed)))
