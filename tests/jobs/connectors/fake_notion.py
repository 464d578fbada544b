"""A strict local fake of the Notion API, reached through notion-client's AsyncClient.

Wire format from the API reference (Notion-Version 2025-09-03, notion-client's default):
- POST /v1/search: https://developers.notion.com/reference/post-search
- GET /v1/blocks/{id}/children: https://developers.notion.com/reference/get-block-children
- GET /v1/pages/{id}: https://developers.notion.com/reference/retrieve-a-page
- GET /v1/databases/{id}: https://developers.notion.com/reference/database-retrieve
- data sources (a database's tables, with its title, description and property schema;
  rows are pages whose parent is `data_source_id`):
  https://developers.notion.com/reference/data-source,
  GET /v1/data_sources/{id}: https://developers.notion.com/reference/retrieve-a-data-source,
  POST /v1/data_sources/{id}/query: https://developers.notion.com/reference/query-a-data-source
  Search with no filter returns pages and data sources together (`page_or_data_source`).
- page property values: https://developers.notion.com/reference/page-property-values
- GET /v1/users/{id}: https://developers.notion.com/reference/get-user
- pagination (start_cursor, page_size ≤ 100, has_more, next_cursor):
  https://developers.notion.com/reference/intro#pagination
- errors and 429 with Retry-After: https://developers.notion.com/reference/status-codes,
  https://developers.notion.com/reference/request-limits
Search never returns pages in the trash; a deleted page is a 404 everywhere.
"""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

TOKEN = "ntn_fake_integration_token_000000000000000"
EPOCH = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def new_id() -> str:
    return str(uuid.uuid4())


def text(content: str, *, href: str | None = None) -> dict[str, Any]:
    return {
        "type": "text",
        "text": {"content": content, "link": {"url": href} if href else None},
        "annotations": {"bold": False, "italic": False, "strikethrough": False,
                        "underline": False, "code": False, "color": "default"},
        "plain_text": content,
        "href": href,
    }  # fmt: skip


def mention(page_id: str, title: str) -> dict[str, Any]:
    """A page mention: plain_text is the mentioned page's title, href its URL."""
    href = f"https://www.notion.so/{page_id.replace('-', '')}"
    return {"type": "mention", "mention": {"type": "page", "page": {"id": page_id}},
            "annotations": text("")["annotations"], "plain_text": title, "href": href}  # fmt: skip


def block(kind: str, *rich: dict[str, Any] | str, **extra: Any) -> dict[str, Any]:
    """A block object of type `kind`; its children are given to FakeNotion.add_page."""
    parts = [text(r) if isinstance(r, str) else r for r in rich]
    body: dict[str, Any] = {"rich_text": parts, **extra} if rich or kind != "divider" else {}
    return {"object": "block", "id": new_id(), "type": kind, "has_children": False,
            "archived": False, "in_trash": False, kind: body}  # fmt: skip


@dataclass
class FakePage:
    id: str
    title: str
    parent: dict[str, Any]
    edited: datetime
    author: str
    in_trash: bool = False
    # A database row's property values besides its title, by property name.
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass
class FakeNotion:
    token: str = TOKEN
    expired: bool = False
    # Results per answer at most (the API may return fewer than page_size).
    page_size_cap: int = 100
    pages: dict[str, FakePage] = field(default_factory=dict)
    databases: dict[str, dict[str, Any]] = field(default_factory=dict)
    data_sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    blocks: dict[str, dict[str, Any]] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=dict)
    users: dict[str, str] = field(default_factory=dict)
    # Answer the next n requests with 429 (Retry-After: 1).
    rate_limited: int = 0
    # Block (or page) ids whose children always answer 500.
    broken: set[str] = field(default_factory=set)
    requests: list[tuple[str, str]] = field(default_factory=list)
    clock: datetime = EPOCH
    _cursors: dict[str, int] = field(default_factory=dict)

    def tick(self) -> datetime:
        self.clock += timedelta(minutes=1)
        return self.clock

    # --- building the workspace ---------------------------------------------------------

    def add_page(
        self, title: str, blocks: list[Any], *, parent: str | None = None,
        database: str | None = None, author: str = "Ada Lovelace",
        properties: dict[str, Any] | None = None,
    ) -> str:  # fmt: skip
        page_id = new_id()
        user_id = self.users.setdefault(author, new_id())
        if database:
            source = self.databases[database]["data_sources"][0]["id"]
            where = {"type": "data_source_id", "data_source_id": source, "database_id": database}
        elif parent:
            where = {"type": "page_id", "page_id": parent}
        else:
            where = {"type": "workspace", "workspace": True}
        self.pages[page_id] = FakePage(
            page_id, title, where, self.tick(), user_id, properties=dict(properties or {})
        )
        self.set_blocks(page_id, blocks, touch=False)
        if parent:
            child = block("child_page", title=title)
            child["child_page"] = {"title": title}
            child["id"] = page_id
            self.children.setdefault(parent, []).append(page_id)
            self.blocks[page_id] = child
        return page_id

    def add_database(
        self, title: str, *, parent: str, description: str = "",
        schema: dict[str, str] | None = None,
    ) -> str:  # fmt: skip
        """A database with one data source; `schema` maps property names (besides the
        title, "Name") to property types."""
        database_id, source_id = new_id(), new_id()
        where = {"type": "page_id", "page_id": parent}
        self.databases[database_id] = {
            "object": "database", "id": database_id, "title": [text(title)],
            "description": [text(description)] if description else [],
            "parent": where, "is_inline": False, "in_trash": False,
            "data_sources": [{"id": source_id, "name": title}],
        }  # fmt: skip
        properties = {"Name": {"id": "title", "name": "Name", "type": "title", "title": {}}}
        for number, (name, kind) in enumerate((schema or {}).items()):
            properties[name] = {"id": f"p{number}", "name": name, "type": kind, kind: {}}
        self.data_sources[source_id] = {
            "object": "data_source", "id": source_id, "title": [text(title)],
            "description": [text(description)] if description else [],
            "parent": {"type": "database_id", "database_id": database_id},
            "database_parent": where, "properties": properties,
            "archived": False, "in_trash": False, "edited": self.tick(),
        }  # fmt: skip
        return database_id

    def source_of(self, database_id: str) -> str:
        return str(self.databases[database_id]["data_sources"][0]["id"])

    def data_source_object(self, source: dict[str, Any]) -> dict[str, Any]:
        stamp = source["edited"].strftime("%Y-%m-%dT%H:%M:00.000Z")
        body = {k: v for k, v in source.items() if k != "edited"}
        database = source["parent"]["database_id"]
        return {**body, "created_time": stamp, "last_edited_time": stamp,
                "url": f"https://www.notion.so/{database.replace('-', '')}"}  # fmt: skip

    def set_blocks(self, owner: str, blocks: list[Any], *, touch: bool = True) -> None:
        """Replace the page's (or block's) children: a block, or (block, [children])."""
        ids = []
        for item in blocks:
            found, kids = (item, []) if isinstance(item, dict) else item
            self.blocks[found["id"]] = found
            if kids:
                found["has_children"] = True
                self.set_blocks(found["id"], kids, touch=False)
            ids.append(found["id"])
        self.children[owner] = ids
        if touch and owner in self.pages:
            self.pages[owner].edited = self.tick()

    def page_object(self, page: FakePage) -> dict[str, Any]:
        stamp = page.edited.strftime("%Y-%m-%dT%H:%M:00.000Z")
        plain = page.id.replace("-", "")
        return {
            "object": "page", "id": page.id, "created_time": stamp, "last_edited_time": stamp,
            "created_by": {"object": "user", "id": page.author},
            "last_edited_by": {"object": "user", "id": page.author},
            "parent": page.parent, "archived": page.in_trash, "in_trash": page.in_trash,
            "icon": None, "cover": None,
            "properties": {
                **page.properties,
                "title": {"id": "title", "type": "title", "title": [text(page.title)]},
            },
            "url": f"https://www.notion.so/{page.title.replace(' ', '-')}-{plain}",
            "public_url": None,
        }  # fmt: skip

    # --- the HTTP API ---------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._gate])
        app.router.add_post("/v1/search", self._search)
        app.router.add_get("/v1/blocks/{id}/children", self._children)
        app.router.add_get("/v1/blocks/{id}", self._block)
        app.router.add_get("/v1/pages/{id}", self._page)
        app.router.add_get("/v1/databases/{id}", self._database)
        app.router.add_get("/v1/data_sources/{id}", self._data_source)
        app.router.add_post("/v1/data_sources/{id}/query", self._query)
        app.router.add_get("/v1/users/{id}", self._user)
        return app

    @web.middleware
    async def _gate(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self.requests.append((request.method, request.path))
        if request.headers.get("Authorization") != f"Bearer {self.token}" or self.expired:
            return _error(401, "unauthorized", "API token is invalid.")
        if not request.headers.get("Notion-Version"):
            return _error(400, "missing_version", "Notion-Version header failed validation.")
        if self.rate_limited > 0:
            self.rate_limited -= 1
            response = _error(429, "rate_limited", "You have been rate limited.")
            response.headers["Retry-After"] = "1"
            return response
        return await handler(request)

    def _paged(self, items: list[Any], start: str | None, size: Any, kind: str) -> web.Response:
        if not isinstance(size, int) or not 1 <= size <= 100:
            return _error(400, "validation_error", "body.page_size should be ≤ 100.")
        offset = 0
        if start is not None:
            if start not in self._cursors:
                return _error(400, "validation_error", "The start_cursor provided is invalid.")
            offset = self._cursors[start]
        end = offset + min(size, self.page_size_cap)
        more = end < len(items)
        cursor = None
        if more:
            cursor = new_id()
            self._cursors[cursor] = end
        return web.json_response({"object": "list", "results": items[offset:end],
                                  "next_cursor": cursor, "has_more": more, "type": kind,
                                  kind: {}})  # fmt: skip

    async def _search(self, request: web.Request) -> web.Response:
        body = await request.json()
        allowed = {"query", "sort", "filter", "start_cursor", "page_size"}
        if set(body) - allowed:
            return _error(400, "validation_error", f"unknown keys {sorted(set(body) - allowed)}")
        wanted = (body.get("filter") or {}).get("value")
        if body.get("filter") and (body["filter"].get("property") != "object"
                                   or wanted not in ("page", "data_source")):  # fmt: skip
            return _error(400, "validation_error", "body.filter is invalid.")
        sort = body.get("sort") or {"direction": "descending", "timestamp": "last_edited_time"}
        if sort.get("timestamp") != "last_edited_time":
            return _error(400, "validation_error", "body.sort.timestamp should be last_edited_time")
        found: list[tuple[datetime, dict[str, Any]]] = []
        if wanted != "data_source":
            found += [
                (p.edited, self.page_object(p)) for p in self.pages.values() if not p.in_trash
            ]
        if wanted != "page":
            found += [(s["edited"], self.data_source_object(s))
                      for s in self.data_sources.values() if not s["in_trash"]]  # fmt: skip
        found.sort(key=lambda pair: pair[0], reverse=sort.get("direction") != "ascending")
        results = [obj for _, obj in found]
        return self._paged(results, body.get("start_cursor"), body.get("page_size", 100),
                           "page_or_data_source")  # fmt: skip

    async def _children(self, request: web.Request) -> web.Response:
        owner = request.match_info["id"]
        owner = next(
            (k for k in self.children if k.replace("-", "") == owner.replace("-", "")), owner
        )
        if owner in self.broken:
            return _error(500, "internal_server_error", "Unexpected error occurred.")
        if owner not in self.children or (owner in self.pages and self.pages[owner].in_trash):
            return _error(404, "object_not_found", f"Could not find block with ID: {owner}.")
        size = request.query.get("page_size", "100")
        found = [self.blocks[i] for i in self.children[owner]]
        return self._paged(found, request.query.get("start_cursor"),
                           int(size) if size.isdigit() else size, "block")  # fmt: skip

    async def _block(self, request: web.Request) -> web.Response:
        found = self.find(self.blocks, request.match_info["id"])
        if found is None:
            return _error(404, "object_not_found", "Could not find block.")
        return web.json_response(found)

    async def _page(self, request: web.Request) -> web.Response:
        page = self.find(self.pages, request.match_info["id"])
        if page is None:
            return _error(404, "object_not_found", "Could not find page.")
        return web.json_response(self.page_object(page))

    async def _database(self, request: web.Request) -> web.Response:
        found = self.find(self.databases, request.match_info["id"])
        if found is None:
            return _error(404, "object_not_found", "Could not find database.")
        return web.json_response(found)

    async def _data_source(self, request: web.Request) -> web.Response:
        found = self.find(self.data_sources, request.match_info["id"])
        if found is None or found["in_trash"]:
            return _error(404, "object_not_found", "Could not find data source.")
        return web.json_response(self.data_source_object(found))

    async def _query(self, request: web.Request) -> web.Response:
        found = self.find(self.data_sources, request.match_info["id"])
        if found is None or found["in_trash"]:
            return _error(404, "object_not_found", "Could not find data source.")
        body = await request.json() if request.can_read_body else {}
        allowed = {"sorts", "filter", "start_cursor", "page_size", "in_trash", "result_type"}
        if set(body) - allowed:
            return _error(400, "validation_error", f"unknown keys {sorted(set(body) - allowed)}")
        rows = [
            self.page_object(p) for p in self.pages.values()
            if not p.in_trash and p.parent.get("data_source_id") == found["id"]
        ]  # fmt: skip
        rows.sort(key=lambda row: row["created_time"], reverse=True)  # newest first
        return self._paged(rows, body.get("start_cursor"), body.get("page_size", 100), "page")

    async def _user(self, request: web.Request) -> web.Response:
        names = {v: k for k, v in self.users.items()}
        user_id = request.match_info["id"]
        if user_id not in names:
            return _error(404, "object_not_found", "Could not find user.")
        return web.json_response({"object": "user", "id": user_id, "type": "person",
                                  "name": names[user_id], "avatar_url": None})  # fmt: skip

    def find(self, table: dict[str, Any], given: str) -> Any:
        """Notion takes an id with or without its dashes."""
        plain = given.replace("-", "").lower()
        return next((v for k, v in table.items() if k.replace("-", "") == plain), None)

    def calls(self) -> int:
        return len(self.requests)


def _error(status: int, code: str, message: str) -> web.Response:
    return web.Response(
        status=status,
        text=json.dumps(
            {
                "object": "error",
                "status": status,
                "code": code,
                "message": message,
                "request_id": str(next(_request_ids)),
            }
        ),
        content_type="application/json",
    )


_request_ids = itertools.count(1)


@asynccontextmanager
async def running(fake: FakeNotion) -> AsyncIterator[str]:
    """Serve `fake` on an ephemeral port; yields its base URL."""
    runner = web.AppRunner(fake.app())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()
