"""The `confluence` source kind: pages of Confluence Cloud or Data Center, read incrementally.

Each run asks CQL for the pages modified since the cursor, oldest first, paged
(`type = page AND space in (...) AND lastmodified >= "..." ORDER BY lastmodified ASC`,
through `GET /rest/api/content/search`). A listed page whose version number is the one
stored is unchanged and not fetched; any other is fetched with `expand=body.storage` and
converted (jobs/formats/confluence.py), and its PDF attachments through the PDF
converter. Every stored page the feed did not mention is unchanged (jobs/connectors/base.py).

CQL cannot see deletions, and a restriction added to a page does not change its
modification time, so every `reconcile_every` runs the connector lists the ids (and read
restrictions, and ancestors) of every page in scope, cheaply, and drops the stored pages
missing from it or newly restricted. A space is the permission unit: its pages land in
the space's collection (`collections`, else the space key in lower case); a page with
read restrictions, of its own or on any ancestor page (Confluence hides a child of a
restricted page too; jobs/connectors/confluence_restrictions.py), is left out unless
`restricted_collection` names where it goes.

The client (atlassian-python-api, built on requests) is blocking: every call runs in a
worker thread behind the source's concurrency cap (jobs/connectors/threads.py), through
the shared retry policy (jobs/connectors/retry.py). It is used in its "advanced mode"
(raw responses) so the status codes are read here: 401 fails the run naming the
variable to fix, 429 and 5xx are retried, 404 means the page is gone.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import requests

from jobs.connectors.base import ChangeFeedSource, ConnectorContext, Cursor, SourceCheck
from jobs.connectors.confluence_restrictions import ReadRestrictions
from jobs.connectors.errors import ConnectorError, CredentialRejectedError, TransientError
from jobs.connectors.retry import ApiCalls, RetryPolicy, retry_after_seconds
from jobs.connectors.threads import BlockingCalls
from jobs.documents import (
    FailedDocument,
    GoneDocument,
    SourceDocument,
    SourceItem,
    UnchangedDocument,
)
from jobs.errors import DocumentError
from jobs.formats.confluence import convert_confluence_storage
from jobs.formats.pdf import convert_pdf

if TYPE_CHECKING:
    from jobs.config import ConfluenceSourceConfig

_PAGE_FIELDS = "space,version,metadata.labels"
_RESTRICTIONS = "restrictions.read.restrictions.user,restrictions.read.restrictions.group"
# A page's ancestors, root first (ids only): their restrictions hide the page too.
_ANCESTORS = "ancestors"
_LISTING_FIELDS = f"{_PAGE_FIELDS},{_RESTRICTIONS},{_ANCESTORS}"
_BODY_FIELDS = f"body.storage,{_LISTING_FIELDS}"
_SCOPE_FIELDS = f"space,version,{_RESTRICTIONS},{_ANCESTORS}"  # reconcile: no labels
_IDS_LIMIT = 200
_ATTACHMENT = "/attachments/"


class _NotFound(Exception):
    """HTTP 404: the content is gone (deleted, or no longer visible to the credential)."""


@dataclass(frozen=True, slots=True)
class _Listed:
    """One page as the search lists it (no body)."""

    id: str
    title: str
    space: str
    version: int
    when: datetime
    restricted: bool  # read restrictions of its own
    ancestors: tuple[str, ...] = ()


class ConfluenceSource(ChangeFeedSource):
    def __init__(
        self,
        *,
        name: str,
        config: ConfluenceSourceConfig,
        context: ConnectorContext,
        policy: RetryPolicy | None = None,
    ) -> None:
        super().__init__(name=name, context=context)
        from atlassian import Confluence  # imported here: only syncs pay for it

        settings = config.settings
        self._settings = settings
        # The client's own 429 handling sleeps in its thread for as long as the server
        # says; the shared retry policy waits instead (capped, off the loop's threads).
        options: dict[str, Any] = {
            "cloud": settings.cloud,
            "timeout": int(settings.timeout_seconds),
            "retry_with_header": False,
            "backoff_and_retry": False,
        }
        self._site = settings.url.rstrip("/")
        self._token = context.credential(source=name, env=settings.token_env)
        if settings.user_env:  # Cloud: e-mail + API token, basic auth
            user = context.credential(source=name, env=settings.user_env)
            self._client = Confluence(
                url=self._site,
                username=user.value,
                password=self._token.value,
                **options,
            )
        else:  # Data Center: a personal access token, as a bearer token
            self._client = Confluence(
                url=self._site,
                token=self._token.value,
                **options,
            )
        self.api = ApiCalls(
            policy or RetryPolicy(attempts=settings.max_attempts, concurrency=settings.concurrency)
        )
        self._threads = BlockingCalls(settings.concurrency)
        self._newest: datetime | None = None
        self._failed_when: dict[str, datetime] = {}
        self._reconciled = False
        self._restrictions = ReadRestrictions(lookup=self._own_restriction)

    # -- the change feed --------------------------------------------------------------

    async def changes(self, cursor: Cursor | None) -> AsyncIterator[SourceItem]:
        since = _parse_when(cursor.get("modified")) if cursor else None
        self._newest = since
        runs = int(cursor.get("runs_since_reconcile", 0)) if cursor else 0
        listed: set[str] = set()
        async for batch in self._pages(self._cql(since), expand=_LISTING_FIELDS):
            for page in batch:  # a parent listed beside its child needs no call of its own
                self._restrictions.note(page.id, restricted=page.restricted)
            results = await asyncio.gather(*(self._page_items(page) for page in batch))
            for page, items in zip(batch, results, strict=True):
                listed.add(page.id)
                self._newest = max(self._newest or page.when, page.when)
                for item in items:
                    yield item
        self._reconciled = cursor is not None and runs + 1 >= self._settings.reconcile_every
        if self._reconciled:
            async for item in self._reconcile(listed):
                yield item

    def cursor_after(self, *, failed: Sequence[str]) -> Cursor:
        newest = self._newest
        for uri in failed:
            when = self._failed_when.get(uri.split(_ATTACHMENT)[0])
            if when is not None and (newest is None or when < newest):
                newest = when  # not past a page that failed: it is read again next run
        previous = int((self.cursor or {}).get("runs_since_reconcile", 0))
        runs = 0 if self._reconciled or self.cursor is None else previous + 1
        cursor: Cursor = {"runs_since_reconcile": runs}
        if newest is not None:
            cursor["modified"] = newest.isoformat()
        return cursor

    async def check(self, *, titles: int = 3) -> SourceCheck:
        """One search call: how many pages the credential sees in scope, and a few titles."""
        body = await self._get(
            "rest/api/content/search", {"cql": self._cql(None), "limit": _IDS_LIMIT}
        )
        results = body.get("results") or []
        return SourceCheck(
            visible=len(results),
            titles=tuple(str(r.get("title", "")) for r in results[:titles]),
            capped="next" in (body.get("_links") or {}),
        )

    def _cql(self, since: datetime | None) -> str:
        settings = self._settings
        clauses = ["type = page"]
        if settings.spaces:
            clauses.append(f"space in ({_cql_list(settings.spaces)})")
        if settings.exclude_spaces:
            clauses.append(f"space not in ({_cql_list(settings.exclude_spaces)})")
        if settings.labels:
            clauses.append(f"label in ({_cql_list(settings.labels)})")
        if settings.cql:
            clauses.append(f"({settings.cql})")
        if since is not None:
            # CQL dates have minute precision and are read in the user's time zone: the
            # overlap re-lists a little (unchanged pages are not fetched) and misses nothing.
            start = since - timedelta(minutes=settings.overlap_minutes)
            clauses.append(f'lastmodified >= "{start.astimezone(UTC):%Y/%m/%d %H:%M}"')
        return " AND ".join(clauses) + " ORDER BY lastmodified ASC"

    async def _pages(self, cql: str, *, expand: str) -> AsyncIterator[list[_Listed]]:
        """The search's results, one API page at a time, following `_links.next`."""
        path: str | None = "rest/api/content/search"
        params: dict[str, Any] | None = {
            "cql": cql,
            "limit": self._settings.page_size,
            "expand": expand,
        }
        while path is not None:
            body = await self._get(path, params)
            yield [_listed(result) for result in body.get("results") or []]
            following = (body.get("_links") or {}).get("next")
            path, params = (str(following).lstrip("/"), None) if following else (None, None)

    async def _page_items(self, page: _Listed) -> list[SourceItem]:
        """What one listed page becomes: unchanged, gone (restricted), or fetched."""
        uri = page.id
        stored = self.context.stored.get(uri)
        try:
            restricted = await self._restricted(page)
        except ConnectorError as error:
            if isinstance(error, CredentialRejectedError):
                raise
            self._failed_when[uri] = page.when
            return [FailedDocument(uri, f"{page.title!r}: {error}")]
        collection = self._collection(page, restricted=restricted)
        if collection is None:
            if stored is None:
                return []
            return [GoneDocument(uri, "the page is restricted; restricted pages are not synced")]
        stored_version = (
            (stored.metadata.get("confluence") or {}).get("version") if stored else None
        )
        if (
            stored is not None
            and stored_version == page.version
            and stored.collection == collection
        ):
            # Said, not left to the base class: a run without a cursor (the first run was
            # killed before saving one) lists everything, and what it leaves out is deleted.
            prefix = uri + _ATTACHMENT
            attachments = [u for u in self.context.stored if u.startswith(prefix)]
            return [UnchangedDocument(u) for u in (uri, *attachments)]
        try:
            return await self._fetch(page, collection, inherited=restricted)
        except _NotFound:
            return [GoneDocument(uri, "the page was deleted")] if stored else []
        except (ConnectorError, DocumentError) as error:
            if isinstance(error, CredentialRejectedError):
                raise
            self._failed_when[uri] = page.when
            return [FailedDocument(uri, f"{page.title!r}: {error}")]

    async def _fetch(self, page: _Listed, collection: str, *, inherited: bool) -> list[SourceItem]:
        content = await self._get(f"rest/api/content/{page.id}", {"expand": _BODY_FIELDS})
        listed = _listed(content)
        restricted = listed.restricted or inherited
        collection = self._collection(listed, restricted=restricted) or collection
        url = self._site + str((content.get("_links") or {}).get("webui", ""))
        storage = ((content.get("body") or {}).get("storage") or {}).get("value") or ""
        text = await asyncio.to_thread(
            convert_confluence_storage,
            storage,
            base_url=self._site,
            page_url=url,
            page_id=page.id,
            max_chars=self._settings.max_page_chars,
        )
        if not text.strip():
            raise DocumentError("the page has no text")
        version = content.get("version") or {}
        labels = [
            str(label.get("name"))
            for label in ((content.get("metadata") or {}).get("labels") or {}).get("results", [])
        ]
        metadata: dict[str, Any] = {
            "confluence": {"id": page.id, "space": listed.space, "version": listed.version},
            "author": ((version.get("by") or {}).get("displayName")) or None,
        }
        if labels:
            metadata["keywords"] = labels
        items: list[SourceItem] = [
            SourceDocument(
                uri=page.id,
                title=listed.title,
                url=url,
                text=text,
                metadata=metadata,
                updated_at=listed.when,
                collection=collection,
            )
        ]
        if self._settings.attachments:
            items.extend(await self._attachments(listed, url, collection))
        return items

    async def _attachments(self, page: _Listed, page_url: str, collection: str) -> list[SourceItem]:
        """The page's PDF attachments as documents of their own (`{page id}/attachments/{id}`)."""
        items: list[SourceItem] = []
        path: str | None = f"rest/api/content/{page.id}/child/attachment"
        params: dict[str, Any] | None = {"limit": self._settings.page_size, "expand": "version"}
        while path is not None:
            body = await self._get(path, params)
            for attachment in body.get("results") or []:
                item = await self._attachment(page, attachment, page_url, collection)
                if item is not None:
                    items.append(item)
            following = (body.get("_links") or {}).get("next")
            path, params = (str(following).lstrip("/"), None) if following else (None, None)
        return items

    async def _attachment(
        self, page: _Listed, attachment: Mapping[str, Any], page_url: str, collection: str
    ) -> SourceItem | None:
        media = (attachment.get("metadata") or {}).get("mediaType") or (
            attachment.get("extensions") or {}
        ).get("mediaType")
        if media != "application/pdf":
            return None
        uri = f"{page.id}{_ATTACHMENT}{attachment.get('id')}"
        title = str(attachment.get("title") or uri)
        version = int((attachment.get("version") or {}).get("number") or 0)
        stored = self.context.stored.get(uri)
        stored_version = (
            (stored.metadata.get("confluence") or {}).get("version") if stored else None
        )
        if stored is not None and stored_version == version and stored.collection == collection:
            return None
        download = str((attachment.get("_links") or {}).get("download") or "")
        try:
            data = await self._download(download)
            converted = await asyncio.to_thread(convert_pdf, data)
        except _NotFound:
            return GoneDocument(uri, "the attachment was deleted") if stored else None
        except (TransientError, DocumentError) as error:
            self._failed_when[page.id] = page.when
            return FailedDocument(uri, f"{title!r} (attached to {page.title!r}): {error}")
        return SourceDocument(
            uri=uri,
            title=converted.title or title,
            url=self._site + download.split("?")[0] if download else page_url,
            text=converted.text,
            metadata={
                **converted.metadata,
                "confluence": {
                    "id": str(attachment.get("id")),
                    "page": page.id,
                    "version": version,
                },
            },
            updated_at=_parse_when((attachment.get("version") or {}).get("when")) or page.when,
            collection=collection,
        )

    async def _reconcile(self, listed: set[str]) -> AsyncIterator[SourceItem]:
        """Settle stored pages the change feed cannot see change: deleted, moved out, or
        restricted by a restriction of their own or one set on an ancestor (neither
        changes the page's modification time). A page whose restriction moves it to
        `restricted_collection` is fetched again into it."""
        scope: dict[str, _Listed] = {}
        async for batch in self._pages(self._cql(None), expand=_SCOPE_FIELDS):
            scope.update((page.id, page) for page in batch)
        for page in scope.values():  # the whole tree first: most ancestors are in it
            self._restrictions.note(page.id, restricted=page.restricted)
        collections = {
            page.id: self._collection(page, restricted=await self._restricted(page))
            for page in scope.values()
        }
        for uri, stored in self.context.stored.items():
            page_id = uri.split(_ATTACHMENT)[0]
            if page_id in listed and uri == page_id:
                continue  # already decided by the change feed this run
            collection = collections.get(page_id)
            if collection is None:
                yield GoneDocument(uri, "no longer in the synced spaces, or restricted")
            elif uri == page_id and stored.collection != collection:
                for item in await self._page_items(scope[page_id]):
                    yield item

    async def _restricted(self, page: _Listed) -> bool:
        """Whether the page, or any page above it, has read restrictions."""
        return await self._restrictions.restricted(
            page_id=page.id, own=page.restricted, ancestors=page.ancestors
        )

    async def _own_restriction(self, page_id: str) -> bool:
        """One ancestor's own read restrictions; one the credential cannot see is taken
        as restricted (its pages are hidden from someone)."""
        try:
            content = await self._get(f"rest/api/content/{page_id}", {"expand": _RESTRICTIONS})
        except _NotFound:
            return True
        return _listed(content).restricted

    def _collection(self, page: _Listed, *, restricted: bool) -> str | None:
        """The collection a page belongs to; None when it is restricted and left out."""
        if restricted:
            return self._settings.restricted_collection
        return self._settings.collections.get(page.space) or page.space.lower()

    # -- HTTP ---------------------------------------------------------------------------

    async def _get(self, path: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
        async def once() -> dict[str, Any]:
            response = await self._request(path, params)
            try:
                body = response.json()
            except ValueError as error:
                raise ConnectorError(
                    f"Confluence sent a response that is not JSON for {path}"
                ) from error
            if not isinstance(body, dict):
                raise ConnectorError(f"Confluence sent an unexpected response for {path}")
            return body

        return await self.api.call(once)

    async def _download(self, path: str) -> bytes:
        async def once() -> bytes:
            response = await self._request(path.lstrip("/"), None)
            if len(response.content) > self._settings.max_attachment_bytes:
                raise DocumentError(
                    f"{len(response.content):,} bytes, over the max_attachment_bytes limit"
                )
            return bytes(response.content)

        return await self.api.call(once)

    async def _request(self, path: str, params: Mapping[str, Any] | None) -> requests.Response:
        try:
            response: requests.Response = await self._threads.run(
                self._client.get, path, params=dict(params or {}), advanced_mode=True
            )
        except requests.RequestException as error:
            raise TransientError(
                f"Confluence could not be reached: {type(error).__name__}"
            ) from None
        status = response.status_code
        if status == 200:
            return response
        if status == 401:
            raise CredentialRejectedError(
                source=self.name, env=self._token.env, system="Confluence"
            )
        if status == 404:
            raise _NotFound(path)
        if status == 429 or status >= 500:
            raise TransientError(
                f"Confluence answered HTTP {status}",
                retry_after=retry_after_seconds(response.headers.get("Retry-After")),
            )
        raise ConnectorError(
            f"Confluence answered HTTP {status} for {path.split('?')[0]}: {_message(response)}"
        )


def _listed(content: Mapping[str, Any]) -> _Listed:
    version = content.get("version") or {}
    read = ((content.get("restrictions") or {}).get("read") or {}).get("restrictions") or {}
    restricted = any((read.get(kind) or {}).get("results") for kind in ("user", "group"))
    return _Listed(
        id=str(content.get("id")),
        title=" ".join(str(content.get("title") or "").split()) or f"page {content.get('id')}",
        space=str((content.get("space") or {}).get("key") or ""),
        version=int(version.get("number") or 0),
        when=_parse_when(version.get("when")) or datetime.now(UTC),
        restricted=restricted,
        ancestors=tuple(str(a.get("id")) for a in content.get("ancestors") or [] if a.get("id")),
    )


def _parse_when(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _cql_list(values: Sequence[str]) -> str:
    return ", ".join(
        '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"' for value in values
    )


def _message(response: requests.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.reason or "no message"
    message = body.get("message") if isinstance(body, dict) else None
    return " ".join(str(message or response.reason or "no message").split())[:200]


def build_confluence(config: Any, context: ConnectorContext) -> ConfluenceSource:
    return ConfluenceSource(name=config.name, config=config, context=context)
