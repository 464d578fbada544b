"""The `notion` source: pages (database rows included) and databases shared with an integration.

Read through the official `notion-client` (its AsyncClient, so nothing blocks the event
loop), with its own retries off: every call goes through jobs/connectors/retry.py.

The change feed is POST /v1/search for pages, sorted by last_edited_time descending
(https://developers.notion.com/reference/post-search), read until a page older than
the cursor: a run with no edits makes one call. Pages are read as each search answer
arrives (`page_size` results per call), so memory holds one answer, not the listing;
the cursor (the newest edit seen) is saved only once the run is complete. A page whose
last_edited_time and collection match the stored copy is not fetched. Search returns
neither deleted nor unshared pages, so every `full_check_every` runs the whole id list
is read (pages only, no content) and stored pages missing from it are removed. A page's
blocks come from GET /v1/blocks/{id}/children, paginated, recursively (notion_blocks.py
turns them into text). The permission unit is the root page: the top-most shared ancestor, or the
configured `root_pages` one a page is below; `collections` maps it to a collection.

A database is a document too (uri `data_source/<id>`, one per data source, in its
database's collection): its title, description and a table of its rows
(notion_databases.py), so "what is in the Projects database" finds it. The search feed
lists data sources beside pages; a database is read again (its rows queried, capped at
`max_database_rows`) when it is listed as edited, when one of its rows was added,
edited or removed this run, and at every full check.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from notion_client import AsyncClient
from notion_client.errors import HTTPResponseError, RequestTimeoutError

from jobs.config import NotionSourceConfig
from jobs.connectors.base import ChangeFeedSource, ConnectorContext, Cursor, SourceCheck
from jobs.connectors.errors import ConnectorError, CredentialRejectedError, TransientError
from jobs.connectors.notion_blocks import BlockNode, page_title, page_url, render
from jobs.connectors.notion_databases import database_text, plain, row_lines
from jobs.connectors.retry import ApiCalls, RetryPolicy, retry_after_seconds
from jobs.documents import (
    FailedDocument,
    GoneDocument,
    SourceDocument,
    SourceItem,
    UnchangedDocument,
)

log = logging.getLogger(__name__)

# Pages fetched side by side; the calls themselves are capped by ApiCalls.
WINDOW = 8
MAX_DEPTH = 64  # nesting of blocks, and of parents when finding a root
# How far our clock may be from Notion's.
CLOCK_SKEW = timedelta(minutes=1)


class PageGone(ConnectorError):
    """The API says the object does not exist or is not shared (404)."""


def build(config: NotionSourceConfig, context: ConnectorContext) -> NotionSource:
    return NotionSource(config=config, context=context)


def plain_id(notion_id: str) -> str:
    """An id as Notion shows it in URLs and settings: 32 hex digits, no dashes."""
    return notion_id.replace("-", "").lower()


DATA_SOURCE = "data_source/"  # the uri prefix of a database's document


@dataclass(frozen=True, slots=True)
class Listed:
    """A page (or a database's data source) as the search feed lists it."""

    id: str
    edited: str  # last_edited_time, ISO 8601
    page: dict[str, Any]

    @property
    def gone(self) -> bool:
        return bool(self.page.get("archived") or self.page.get("in_trash"))

    @property
    def is_data_source(self) -> bool:
        return self.page.get("object") == "data_source"

    @property
    def uri(self) -> str:
        return DATA_SOURCE + self.id if self.is_data_source else self.id

    @property
    def data_source(self) -> str | None:
        """For a database row, the id of the data source it is a row of."""
        parent = self.page.get("parent") or {}
        found = parent.get("data_source_id") if parent.get("type") == "data_source_id" else None
        return str(found) if found else None


class NotionApi:
    """The calls this connector makes, with Notion's errors turned into ours."""

    def __init__(
        self, client: AsyncClient, calls: ApiCalls, *, source: str, env: str, page_size: int
    ) -> None:
        self._client = client
        self.calls = calls
        self._source = source
        self._env = env
        self._page_size = page_size

    async def call(self, request: Callable[[], Awaitable[Any]]) -> dict[str, Any]:
        async def once() -> dict[str, Any]:
            try:
                return await request()
            except HTTPResponseError as error:
                raise self._translated(error) from None
            except (httpx.TransportError, RequestTimeoutError) as error:
                raise TransientError(f"Notion did not answer: {type(error).__name__}") from None

        return await self.calls.call(once)

    def _translated(self, error: HTTPResponseError) -> Exception:
        if error.status == 401:
            return CredentialRejectedError(source=self._source, env=self._env, system="Notion")
        if error.status == 429 or error.status >= 500:
            wait = retry_after_seconds(error.headers.get("retry-after"))
            return TransientError(f"Notion answered HTTP {error.status}", retry_after=wait)
        if error.status == 404:
            return PageGone("not found, or no longer shared with the integration")
        return ConnectorError(f"Notion refused the request: HTTP {error.status} {error.code}")

    async def search_pages(self, *, databases: bool = False) -> AsyncIterator[Listed]:
        """Pages, newest edit first; with `databases`, data sources among them (search
        with no filter returns both, in one order)."""
        start: str | None = None
        while True:
            body: dict[str, Any] = {
                "sort": {"direction": "descending", "timestamp": "last_edited_time"},
                "page_size": self._page_size,
            }
            if not databases:
                body["filter"] = {"property": "object", "value": "page"}
            if start:
                body["start_cursor"] = start
            answer = await self.call(functools.partial(self._client.search, **body))
            for page in answer.get("results", []):
                if page.get("object") == "page":
                    yield Listed(str(page["id"]), str(page["last_edited_time"]), _slim(page))
                elif databases and page.get("object") == "data_source":
                    yield Listed(str(page["id"]), str(page["last_edited_time"]), page)
            if not answer.get("has_more") or not answer.get("next_cursor"):
                return
            start = str(answer["next_cursor"])

    async def page(self, page_id: str) -> dict[str, Any]:
        return await self.call(lambda: self._client.pages.retrieve(page_id=page_id))

    async def database(self, database_id: str) -> dict[str, Any]:
        return await self.call(lambda: self._client.databases.retrieve(database_id=database_id))

    async def data_source(self, data_source_id: str) -> dict[str, Any]:
        return await self.call(
            lambda: self._client.data_sources.retrieve(data_source_id=data_source_id)
        )

    async def rows(self, data_source_id: str, *, limit: int) -> tuple[list[dict[str, Any]], bool]:
        """Up to `limit` rows of a data source, and whether it has more."""
        rows: list[dict[str, Any]] = []
        start: str | None = None
        while True:
            query: dict[str, Any] = {
                "data_source_id": data_source_id,
                "page_size": min(self._page_size, limit - len(rows)),
            }
            if start:
                query["start_cursor"] = start
            answer = await self.call(functools.partial(self._client.data_sources.query, **query))
            rows.extend(answer.get("results", [])[: limit - len(rows)])
            more = bool(answer.get("has_more") and answer.get("next_cursor"))
            if not more or len(rows) >= limit:
                return rows, more
            start = str(answer["next_cursor"])

    async def block(self, block_id: str) -> dict[str, Any]:
        return await self.call(lambda: self._client.blocks.retrieve(block_id=block_id))

    async def children(self, block_id: str) -> AsyncIterator[dict[str, Any]]:
        start: str | None = None
        while True:
            query: dict[str, Any] = {"block_id": block_id, "page_size": self._page_size}
            if start:
                query["start_cursor"] = start
            answer = await self.call(functools.partial(self._client.blocks.children.list, **query))
            for block in answer.get("results", []):
                yield block
            if not answer.get("has_more") or not answer.get("next_cursor"):
                return
            start = str(answer["next_cursor"])

    async def user_name(self, user_id: str) -> str | None:
        try:
            user = await self.call(lambda: self._client.users.retrieve(user_id=user_id))
        except (PageGone, ConnectorError) as error:
            if isinstance(error, CredentialRejectedError):
                raise
            return None  # no "read user information" capability: keep the id
        name = user.get("name")
        return str(name) if name else None


class NotionSource(ChangeFeedSource):
    def __init__(self, *, config: NotionSourceConfig, context: ConnectorContext) -> None:
        super().__init__(name=config.name, context=context)
        self.settings = config.settings
        self._token = context.credential(source=config.name, env=self.settings.token_env)
        self._roots = {plain_id(r) for r in self.settings.root_pages}
        self._collections = {plain_id(k): v for k, v in self.settings.collections.items()}
        self._newest: str | None = (context.cursor or {}).get("since")
        # When the previous run listed (our clock), and when this one does.
        self._last_listed = _parsed((context.cursor or {}).get("listed_at"))
        self._listed_at = datetime.now(UTC)
        self._runs = int((context.cursor or {}).get("runs_since_full_check", 0))
        self._full = False
        self._parents: dict[str, str | None] = {}  # id → parent page/database id
        # One lookup per author, shared by the pages read side by side that ask for it.
        self._users: dict[str, asyncio.Task[str | None]] = {}
        # The calls of the last run or check, for the "a quiet run makes one call" promise.
        self.calls: ApiCalls | None = None

    def _client(self) -> tuple[AsyncClient, ApiCalls]:
        policy = RetryPolicy(
            attempts=self.settings.max_attempts, concurrency=self.settings.concurrency
        )
        client = AsyncClient(
            auth=self._token.value,
            base_url=self.settings.base_url.rstrip("/"),
            timeout_ms=int(self.settings.timeout_seconds * 1000),
            retry=False,  # retry.py decides, for every connector alike
            logger=logging.getLogger("notion_client"),
            log_level=logging.WARNING,
        )
        self.calls = ApiCalls(policy)
        return client, self.calls

    async def check(self, *, titles: int = 3) -> SourceCheck:
        client, calls = self._client()
        async with client:
            api = self._api(client, calls)
            seen, first = 0, list[str]()
            async for listed in api.search_pages():
                seen += 1
                if len(first) < titles:
                    first.append(page_title(listed.page))
                if seen >= 1000:
                    return SourceCheck(seen, tuple(first), capped=True)
            return SourceCheck(seen, tuple(first))

    def _api(self, client: AsyncClient, calls: ApiCalls) -> NotionApi:
        return NotionApi(
            client, calls, source=self.name, env=self._token.env, page_size=self.settings.page_size
        )

    async def changes(self, cursor: Cursor | None) -> AsyncIterator[SourceItem]:
        client, calls = self._client()
        async with client:
            api = self._api(client, calls)
            self._full = cursor is None or self._runs + 1 >= self.settings.full_check_every
            listed: set[str] = set()  # the uris search listed: ids only, for the full check
            sources: list[Listed] = []  # data sources: read once their rows are read
            touched: set[str] = set()  # data sources whose rows changed this run
            # Pages are read as search lists them, a window at a time, so a run holds a
            # window and one search answer, not the workspace's listing.
            async for window in self._listing(api, cursor):
                listed.update(p.uri for p in window)
                sources.extend(p for p in window if p.is_data_source)
                pages = [p for p in window if not p.is_data_source]
                async for item in self._read(api, pages, touched):
                    yield item
            retry = [r for r in (cursor or {}).get("retry", []) if r not in listed]
            for retried in _windows(await self._retried(api, retry), WINDOW):
                async for item in self._read(api, retried, touched):
                    yield item
            async for item in self._databases(api, sources, touched, retry):
                yield item
            if self._full:
                for uri in self.context.stored:
                    if uri not in listed:
                        yield GoneDocument(uri, "deleted, or no longer shared with the integration")

    async def _read(
        self, api: NotionApi, pages: Sequence[Listed], touched: set[str]
    ) -> AsyncIterator[SourceItem]:
        """Pages read side by side; a row that changed marks its data source `touched`."""
        items = await asyncio.gather(*(self._item(api, page) for page in pages))
        for page, item in zip(pages, items, strict=True):
            if item is not None:
                if page.data_source and not isinstance(item, UnchangedDocument):
                    touched.add(plain_id(page.data_source))
                yield item

    async def _listing(self, api: NotionApi, cursor: Cursor | None) -> AsyncIterator[list[Listed]]:
        """What search lists since the cursor, newest edit first, in windows of pages.

        The newest time seen becomes the next cursor, but only through cursor_after, once
        the run is complete: search is newest first, so a run stopped half-way has not
        seen the older edits yet and must list them again.
        """
        since = None if self._full or cursor is None else cursor.get("since")
        size = min(WINDOW, self.settings.page_size)  # never waiting for a second answer
        window: list[Listed] = []
        async for page in api.search_pages(databases=self.settings.databases):
            # Notion's times are to the minute: an equal time may be a later edit, so it is
            # listed, and skipped below if the stored copy has that time already.
            if since is not None and page.edited < since:
                break
            window.append(page)
            self._parents[plain_id(page.id)] = _parent_id(page.page)
            if self._newest is None or page.edited > self._newest:
                self._newest = page.edited
            if len(window) >= size:
                yield window
                window = []
        if window:
            yield window

    async def _retried(self, api: NotionApi, ids: Sequence[str]) -> list[Listed]:
        found = []
        for page_id in ids:
            if page_id.startswith(DATA_SOURCE):
                continue  # read again by _databases
            try:
                page = await api.page(page_id)
            except PageGone:
                found.append(Listed(page_id, "", {"id": page_id, "in_trash": True}))
                continue
            found.append(Listed(str(page["id"]), str(page["last_edited_time"]), page))
        return found

    async def _item(self, api: NotionApi, listed: Listed) -> SourceItem | None:
        uri = listed.id
        stored = self.context.stored.get(uri)
        if listed.gone:
            return GoneDocument(uri, "archived or in the trash") if stored else None
        if (
            stored is not None
            and stored.metadata.get("last_edited_time") == listed.edited
            and not self._maybe_edited_since_listed(listed.edited)
            and stored.metadata.get("root")
            and stored.collection == self._collections.get(stored.metadata["root"])
        ):
            # Not edited since it was stored (moving a page edits it): no call at all.
            return UnchangedDocument(uri)
        try:
            root = await self._root(api, listed.id)
        except PageGone:
            root = plain_id(listed.id)
        if root is None:  # not below any configured root page
            return GoneDocument(uri, "no longer below the root pages") if stored else None
        collection = self._collections.get(root)
        title = page_title(listed.page)
        try:
            return await self._document(api, listed, title, root, collection)
        except PageGone:
            return GoneDocument(uri, "deleted, or no longer shared with the integration")
        except CredentialRejectedError:
            raise
        except ConnectorError as error:
            return FailedDocument(uri, f"{title!r}: {error}")

    async def _databases(
        self, api: NotionApi, sources: list[Listed], touched: set[str], retry: Sequence[str]
    ) -> AsyncIterator[SourceItem]:
        """One document per data source that is new, edited, had rows change, or failed
        last run; every one at a full check (a removed row does not edit its database)."""
        if not self.settings.databases:
            return
        listed = {plain_id(s.id) for s in sources}
        extra = touched | {plain_id(r.removeprefix(DATA_SOURCE)) for r in retry
                           if r.startswith(DATA_SOURCE)}  # fmt: skip
        for source_id in sorted(extra - listed):
            try:
                found = await api.data_source(source_id)
            except PageGone:
                continue  # gone with its database: the full check removes it
            sources.append(Listed(str(found["id"]), str(found["last_edited_time"]), found))
        for source in sources:
            item = await self._database_item(api, source, plain_id(source.id) in extra)
            if item is not None:
                yield item

    async def _database_item(
        self, api: NotionApi, source: Listed, rows_changed: bool
    ) -> SourceItem | None:
        uri, stored = source.uri, self.context.stored.get(source.uri)
        if source.gone:
            return GoneDocument(uri, "archived or in the trash") if stored else None
        database = plain_id(str((source.page.get("parent") or {}).get("database_id") or ""))
        self._parents["db:" + database] = _parent_id({"parent": source.page.get("database_parent")})
        try:
            root = await self._root(api, "db:" + database)
        except PageGone:
            root = None
        if root is None and self._roots:
            return GoneDocument(uri, "no longer below the root pages") if stored else None
        collection = self._collections.get(root) if root else None
        if (
            stored is not None
            and not (self._full or rows_changed)
            and stored.metadata.get("last_edited_time") == source.edited
            and not self._maybe_edited_since_listed(source.edited)
            and stored.collection == collection
        ):
            return UnchangedDocument(uri)
        title = plain(source.page.get("title")) or "Untitled database"
        try:
            rows, more = await api.rows(source.id, limit=self.settings.max_database_rows)
        except PageGone:
            return GoneDocument(uri, "deleted, or no longer shared") if stored else None
        except CredentialRejectedError:
            raise
        except ConnectorError as error:
            return FailedDocument(uri, f"{title!r}: {error}")
        text = database_text(
            title=title,
            description=source.page.get("description"),
            schema=source.page.get("properties") or {},
            rows=rows,
            more=more,
        )
        return SourceDocument(
            uri=uri,
            title=title,
            url=str(source.page.get("url") or page_url(database)),
            text=text,
            metadata={"last_edited_time": source.edited, "root": root, "database": database},
            updated_at=_parsed(source.edited),
            notes=(f"more than {len(rows)} rows: the first {len(rows)} indexed",) if more else (),
            collection=collection,
        )

    async def _document(
        self, api: NotionApi, listed: Listed, title: str, root: str, collection: str | None
    ) -> SourceDocument:
        nodes, truncated = await self._tree(api, listed.id)
        page = listed.page
        author_id = (page.get("created_by") or {}).get("id")
        notes = (f"longer than {self.settings.max_blocks} blocks: indexed up to there",)
        return SourceDocument(
            uri=listed.id,
            title=title,
            url=str(page.get("url") or page_url(listed.id)),
            text=f"# {title}\n\n{_row_text(page)}{render(nodes)}",
            metadata={
                "last_edited_time": listed.edited,
                "root": root,
                "author": await self._user(api, author_id) if author_id else None,
                "parent": _parent_id(page),
            },
            updated_at=_parsed(listed.edited),
            notes=notes if truncated else (),
            collection=collection,
        )

    async def _tree(self, api: NotionApi, page_id: str) -> tuple[list[BlockNode], bool]:
        """The page's blocks, depth first; each block read once (synced blocks can point
        back at their own page), at most max_blocks of them."""
        seen: set[str] = {plain_id(page_id)}
        budget = [self.settings.max_blocks]

        async def read(block_id: str, depth: int) -> list[BlockNode]:
            nodes = []
            async for block in api.children(block_id):
                if budget[0] <= 0:
                    break
                budget[0] -= 1
                node = BlockNode(block)
                nodes.append(node)
                child = _children_of(block)
                if child and depth < MAX_DEPTH and plain_id(child) not in seen:
                    seen.add(plain_id(child))
                    node.children = await read(child, depth + 1)
            return nodes

        nodes = await read(page_id, 0)
        return nodes, budget[0] <= 0

    async def _root(self, api: NotionApi, page_id: str) -> str | None:
        """The page's permission unit: the configured root page it is below (None: below
        none), or without `root_pages` its top-most ancestor page shared with us."""
        current: str | None = plain_id(page_id)
        top = current
        for depth in range(MAX_DEPTH):
            if current is None:
                break
            if current in self._roots:
                return current
            stored = self.context.stored.get(_dashed(current))
            if depth and stored is not None and stored.metadata.get("root"):
                return str(stored.metadata["root"])  # an ancestor we already placed
            if not current.startswith("db:"):
                top = current
            try:
                current = await self._parent(api, current)
            except PageGone:
                break  # an ancestor not shared with us: the root is below it
        return None if self._roots else top

    async def _parent(self, api: NotionApi, object_id: str) -> str | None:
        if object_id not in self._parents:
            if object_id.startswith("db:"):
                database = await api.database(object_id[3:])
                self._parents[object_id] = _parent_id(database)
            else:
                page = await api.page(object_id)
                self._parents[object_id] = _parent_id(page)
        return self._parents[object_id]

    async def _user(self, api: NotionApi, user_id: str) -> str:
        if user_id not in self._users:
            self._users[user_id] = asyncio.ensure_future(api.user_name(user_id))
        return await asyncio.shield(self._users[user_id]) or user_id

    def _maybe_edited_since_listed(self, edited: str) -> bool:
        """Notion's last_edited_time is to the minute: an edit made in the same minute as
        the previous listing, after it, shows the same time. Such pages (and, for clock
        skew, those a minute either side) are read again."""
        when = _parsed(edited)
        if when is None or self._last_listed is None:
            return False
        return when + timedelta(minutes=1) + CLOCK_SKEW >= self._last_listed

    def cursor_after(self, *, failed: Sequence[str]) -> Cursor:
        return {
            "listed_at": self._listed_at.isoformat(),
            "since": self._newest,
            "runs_since_full_check": 0 if self._full else self._runs + 1,
            "retry": sorted(failed),
        }


# What is kept of a listed page until its turn comes (a window of pages is read while
# the rest of its search answer waits): its (possibly large) properties are dropped.
_KEPT = ("id", "last_edited_time", "parent", "url", "created_by", "archived", "in_trash")


def _slim(page: dict[str, Any]) -> dict[str, Any]:
    slim = {key: page[key] for key in _KEPT if key in page}
    slim["properties"] = {"title": {"type": "title", "title": _title_parts(page)}}
    slim["row"] = _row_text(page)
    return slim


def _row_text(page: dict[str, Any]) -> str:
    """A database row's properties ("Status: Done"), which are often all a row holds."""
    if "row" in page:
        return str(page["row"])
    if (page.get("parent") or {}).get("type") not in ("data_source_id", "database_id"):
        return ""
    lines = row_lines(page.get("properties") or {})
    return "".join(f"{line}\n" for line in lines) + ("\n" if lines else "")


def _title_parts(page: dict[str, Any]) -> list[Any]:
    for prop in (page.get("properties") or {}).values():
        if isinstance(prop, dict) and prop.get("type") == "title":
            return [{"plain_text": p.get("plain_text", "")} for p in prop.get("title") or []]
    return []


def _parsed(stamp: Any) -> datetime | None:
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None


def _parent_id(obj: dict[str, Any]) -> str | None:
    """The page or database an object sits in (databases as 'db:<id>'); None at the top."""
    parent = obj.get("parent") or {}
    kind = parent.get("type")
    if kind == "page_id":
        return plain_id(str(parent["page_id"]))
    if kind in ("database_id", "data_source_id") and parent.get("database_id"):
        return "db:" + plain_id(str(parent["database_id"]))
    return None  # workspace, or a block (a page inside a column): treated as the top


def _children_of(block: dict[str, Any]) -> str | None:
    """Whose children to read under this block: its own, or a synced block's original."""
    kind = block.get("type")
    if kind in ("child_page", "child_database"):
        return None  # their own documents
    if kind == "synced_block":
        original = (block.get("synced_block") or {}).get("synced_from") or {}
        if original.get("block_id"):
            return str(original["block_id"])
    return str(block["id"]) if block.get("has_children") else None


def _dashed(plain: str) -> str:
    p = plain
    return f"{p[:8]}-{p[8:12]}-{p[12:16]}-{p[16:20]}-{p[20:]}" if len(p) == 32 else p


def _windows(pages: Sequence[Listed], size: int) -> list[Sequence[Listed]]:
    return [pages[i : i + size] for i in range(0, len(pages), size)]
