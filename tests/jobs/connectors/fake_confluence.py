"""A local fake of Confluence's REST API (v1, Cloud and Data Center), for atlassian-python-api.

Written from Atlassian's reference:
- content search by CQL:
  https://developer.atlassian.com/cloud/confluence/rest/v1/api-group-content/#api-wiki-rest-api-content-search-get
- content by id with `expand=body.storage,...`:
  https://developer.atlassian.com/cloud/confluence/rest/v1/api-group-content/#api-wiki-rest-api-content-id-get
- attachments: https://developer.atlassian.com/cloud/confluence/rest/v1/api-group-content---attachments/
- CQL fields and date format (`lastmodified >= "yyyy/MM/dd HH:mm"`):
  https://developer.atlassian.com/cloud/confluence/cql-fields/
- restrictions expansion (`restrictions.read.restrictions.user` / `.group`):
  https://developer.atlassian.com/cloud/confluence/rest/v1/api-group-content-restrictions/
- ancestors (`expand=ancestors`: the page's ancestors, root first, as content objects):
  https://developer.atlassian.com/cloud/confluence/rest/v1/api-group-content/#api-wiki-rest-api-content-id-get
  A restriction set on a parent hides the child in Confluence, but the child's own
  `restrictions.read` stays empty: the API lists only restrictions set on the content
  itself (https://jira.atlassian.com/browse/CONFCLOUD-71108,
  https://jira.atlassian.com/browse/CONFSERVER-99749), as this fake does.
- rate limiting (429 with Retry-After): https://developer.atlassian.com/cloud/confluence/rate-limiting/

It serves under a context path (`/wiki`, as Cloud does), pages results with `start` and
`limit` and a `_links.next` relative to the context, and is strict: a request without
the expected `Authorization` gets 401, a CQL it does not understand 400 (as the real
API's "Could not parse cql"), an unknown id 404. Faults are scripted per path.
"""

from __future__ import annotations

import base64
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from aiohttp import web
from aiohttp.test_utils import TestServer

CONTEXT = "/wiki"
_CLAUSE = re.compile(
    r"^(?:type\s*(?:=\s*(\w+)|in\s*\(([\w\s,]+)\))"
    r'|space\s*(?:=\s*"([^"]+)"|in\s*\(([^)]*)\))'
    r"|space\s+not\s+in\s*\(([^)]*)\)"
    r'|label\s*(?:=\s*"([^"]+)"|in\s*\(([^)]*)\))'
    r'|lastmodified\s*>=\s*"(\d{4}/\d{2}/\d{2} \d{2}:\d{2})")$',
    re.I,
)
_ORDER = re.compile(r"\s+order\s+by\s+lastmodified\s+asc\s*$", re.I)


@dataclass(slots=True)
class Page:
    id: str
    space: str
    title: str
    body: str
    modified: datetime
    version: int = 1
    author: str = "Ada Lovelace"
    labels: list[str] = field(default_factory=list)
    restricted_to: list[str] = field(default_factory=list)  # user names with read access
    attachments: list[Attachment] = field(default_factory=list)
    parent: str | None = None  # the parent page's id, in the same space


@dataclass(slots=True)
class Attachment:
    id: str
    title: str
    media_type: str
    data: bytes
    modified: datetime
    version: int = 1


@dataclass(slots=True)
class Fault:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    times: int = 1


class FakeConfluence:
    def __init__(self, *, email: str = "bot@acme.test", token: str = "api-token") -> None:
        self.pages: dict[str, Page] = {}
        self.credentials = base64.b64encode(f"{email}:{token}".encode()).decode()
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.faults: dict[str, list[Fault]] = {}
        self.server: TestServer | None = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return str(self.server.make_url(CONTEXT))

    def add(self, page: Page) -> Page:
        self.pages[page.id] = page
        return page

    def edit(self, page_id: str, body: str, *, at: datetime) -> None:
        page = self.pages[page_id]
        page.body, page.modified, page.version = body, at, page.version + 1

    def fail(self, path: str, *faults: Fault) -> None:
        """Answer the next requests to `path` (after the context) with these statuses."""
        self.faults.setdefault(path, []).extend(faults)

    def calls(self, path_prefix: str = "") -> int:
        return sum(1 for path, _ in self.requests if path.startswith(path_prefix))

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._gate])
        app.router.add_get(f"{CONTEXT}/rest/api/content/search", self._search)
        app.router.add_get(f"{CONTEXT}/rest/api/content/{{id}}", self._content)
        app.router.add_get(f"{CONTEXT}/rest/api/content/{{id}}/child/attachment", self._attachments)
        app.router.add_get(f"{CONTEXT}/download/attachments/{{id}}/{{name}}", self._download)
        return app

    @web.middleware
    async def _gate(self, request: web.Request, handler: Any) -> web.StreamResponse:
        path = request.path.removeprefix(CONTEXT)
        self.requests.append((path, dict(request.query)))
        if request.headers.get("Authorization") != f"Basic {self.credentials}":
            # Cloud answers a bad or expired API token with 401 and a JSON message.
            return _error(401, "Current user not permitted to use Confluence")
        queued = self.faults.get(path)
        if queued:
            fault = queued[0]
            fault.times -= 1
            if fault.times <= 0:
                queued.pop(0)
            return _error(fault.status, "scripted fault", headers=fault.headers)
        return await handler(request)

    async def _search(self, request: web.Request) -> web.Response:
        cql = request.query.get("cql", "")
        try:
            matches = self._matching(cql)
        except ValueError as error:
            return _error(400, f"Could not parse cql : {cql} ({error})")
        start = int(request.query.get("start", "0"))
        limit = min(int(request.query.get("limit", "25")), 200)  # the API caps limit
        expand = _expand(request)
        window = matches[start : start + limit]
        results = [self._content_json(page, expand) for page in window]
        links: dict[str, str] = {"base": self.base_url, "context": CONTEXT}
        if start + limit < len(matches):
            query = {**request.query, "start": str(start + limit), "limit": str(limit)}
            links["next"] = "/rest/api/content/search?" + urlencode(query)
        body = {"results": results, "start": start, "limit": limit, "size": len(results)}
        return web.json_response({**body, "_links": links})

    def _matching(self, cql: str) -> list[Any]:
        order = _ORDER.search(cql)
        where = cql[: order.start()] if order else cql
        types = {"page"}
        spaces: set[str] | None = None
        excluded: set[str] = set()
        labels: set[str] | None = None
        since: datetime | None = None
        for clause in re.split(r"\s+and\s+", where.strip(), flags=re.I):
            match = _CLAUSE.match(clause.strip())
            if match is None:
                raise ValueError(f"unexpected clause {clause!r}")
            groups = match.groups()
            one_type, many_types, space, many_spaces, not_spaces = groups[:5]
            label, many_labels, date = groups[5:]
            if not_spaces:
                excluded = _quoted(not_spaces)
            if one_type or many_types:
                types = {t.strip() for t in (one_type or many_types).split(",")}
            if space or many_spaces:
                spaces = {space} if space else _quoted(many_spaces)
            if label or many_labels:
                labels = {label} if label else _quoted(many_labels)
            if date:
                since = datetime.strptime(date, "%Y/%m/%d %H:%M").replace(tzinfo=UTC)
        found: list[Any] = []
        for page in self.pages.values():
            if (spaces is not None and page.space not in spaces) or page.space in excluded:
                continue
            if labels is not None and not labels & set(page.labels):
                continue
            if "page" in types and (since is None or page.modified >= since):
                found.append(page)
        found.sort(key=lambda item: (item.modified, item.id))
        return found

    async def _content(self, request: web.Request) -> web.Response:
        page = self.pages.get(request.match_info["id"])
        if page is None:
            return _error(404, "No content found with id")
        return web.json_response(self._content_json(page, _expand(request)))

    async def _attachments(self, request: web.Request) -> web.Response:
        page = self.pages.get(request.match_info["id"])
        if page is None:
            return _error(404, "No content found with id")
        start = int(request.query.get("start", "0"))
        limit = int(request.query.get("limit", "25"))
        window = page.attachments[start : start + limit]
        results = [
            {
                "id": a.id,
                "type": "attachment",
                "status": "current",
                "title": a.title,
                "metadata": {"mediaType": a.media_type},
                "extensions": {"mediaType": a.media_type, "fileSize": len(a.data)},
                "version": {"number": a.version, "when": _when(a.modified)},
                "_links": {
                    "download": f"/download/attachments/{page.id}/{a.title}?version={a.version}",
                    "webui": f"/pages/viewpageattachments.action?pageId={page.id}",
                },
            }
            for a in window
        ]
        links: dict[str, str] = {"base": self.base_url, "context": CONTEXT}
        if start + limit < len(page.attachments):
            query = {**request.query, "start": str(start + limit)}
            links["next"] = f"/rest/api/content/{page.id}/child/attachment?" + urlencode(query)
        return web.json_response(
            {
                "results": results,
                "start": start,
                "limit": limit,
                "size": len(results),
                "_links": links,
            }
        )

    async def _download(self, request: web.Request) -> web.Response:
        page = self.pages.get(request.match_info["id"])
        name = request.match_info["name"]
        found = next((a for a in page.attachments if a.title == name), None) if page else None
        if found is None:
            return _error(404, "attachment not found")
        return web.Response(body=found.data, content_type=found.media_type)

    def _content_json(self, page: Page, expand: set[str]) -> dict[str, Any]:
        content: dict[str, Any] = {
            "id": page.id,
            "type": "page",
            "status": "current",
            "title": page.title,
            "_links": {
                "webui": f"/spaces/{page.space}/pages/{page.id}/{page.title.replace(' ', '+')}",
                "self": f"{self.base_url}/rest/api/content/{page.id}",
            },
            "_expandable": {"body": "", "version": "", "space": ""},
        }
        if "space" in expand:
            content["space"] = {"key": page.space, "name": f"{page.space} space", "type": "global"}
        if "version" in expand:
            content["version"] = {
                "number": page.version,
                "when": _when(page.modified),
                "by": {"type": "known", "displayName": page.author},
            }
        if "body.storage" in expand:
            content["body"] = {"storage": {"value": page.body, "representation": "storage"}}
        if "metadata.labels" in expand:
            labels = [{"prefix": "global", "name": name} for name in page.labels]
            content["metadata"] = {"labels": {"results": labels, "size": len(labels)}}
        if "ancestors" in expand:
            content["ancestors"] = [self._ancestor_json(a) for a in self._ancestors(page)]
        if "restrictions.read.restrictions.user" in expand:
            users = [{"type": "known", "displayName": who} for who in page.restricted_to]
            content["restrictions"] = {
                "read": {
                    "operation": "read",
                    "restrictions": {
                        "user": {"results": users, "size": len(users)},
                        "group": {"results": [], "size": 0},
                    },
                }
            }
        return content

    def _ancestors(self, page: Page) -> list[Page]:
        chain: list[Page] = []
        parent = self.pages.get(page.parent) if page.parent else None
        while parent is not None:
            chain.insert(0, parent)  # root first, as Confluence orders them
            parent = self.pages.get(parent.parent) if parent.parent else None
        return chain

    def _ancestor_json(self, page: Page) -> dict[str, Any]:
        return {
            "id": page.id,
            "type": "page",
            "status": "current",
            "title": page.title,
            "_links": {"self": f"{self.base_url}/rest/api/content/{page.id}"},
            "_expandable": {"restrictions": f"/rest/api/content/{page.id}/restriction/byOperation"},
        }


def _expand(request: web.Request) -> set[str]:
    return {part.strip() for part in request.query.get("expand", "").split(",") if part.strip()}


def _quoted(listing: str) -> set[str]:
    return {item.strip().strip('"') for item in listing.split(",") if item.strip()}


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _error(status: int, message: str, *, headers: dict[str, str] | None = None) -> web.Response:
    body = {"statusCode": status, "data": {"authorized": status != 401}, "message": message}
    return web.json_response(body, status=status, headers=headers or {})


@asynccontextmanager
async def running_confluence(fake: FakeConfluence) -> AsyncIterator[FakeConfluence]:
    server = TestServer(fake.app())
    await server.start_server()
    fake.server = server
    try:
        yield fake
    finally:
        await server.close()
