"""Web pages and sitemaps as a knowledge-base source, fetched politely over aiohttp.

A run lists pages (configured URLs, then sitemaps and nested sitemap indexes), then fetches
them a few at a time: a conditional GET from the previous run's validators, redirects followed
by hand so every hop is checked against the host rule and robots.txt, a size cap enforced while
streaming, and main-content extraction (`jobs.web_html`) in a thread.

"Host" means host *and port*, as in a URL's netloc, with the scheme's default port left out (so
an http → https upgrade stays on the host, while two servers on one machine are two hosts).
With `same_host`, pages are fetched only from the hosts of the configured URLs and sitemaps,
and a redirect must stay on the host it started from.

Whatever cannot be read is yielded as a `FailedDocument` and the run goes on. When a sitemap
or robots.txt could not be read, or the page cap cut the list short, pages may be missing from
the run: `WebSource.listing_complete` is then False, so the indexer must not treat absent pages
as deleted.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime

import aiohttp
from protego import Protego
from yarl import URL

from jobs.documents import (
    FailedDocument,
    GoneDocument,
    SourceDocument,
    SourceItem,
    UnchangedDocument,
)
from jobs.errors import DocumentError, DocumentGone
from jobs.isolation import ConversionBudget, IsolatedRunner, one_line_reason
from jobs.sitemaps import Sitemap, parse_sitemap
from jobs.web_html import HTML_TYPES, TEXT_TYPES, read_page

logger = logging.getLogger(__name__)

DEFAULT_USER_AGENT = "slack-kb/0.1 (+https://github.com/slack-kb)"

_MAX_REDIRECTS = 5
_MAX_SITEMAP_DEPTH = 3  # a configured sitemap is depth 0; the protocol itself allows 1
_MAX_SITEMAP_BYTES = 50 * 1024 * 1024  # the sitemap protocol's own limit
_MAX_ROBOTS_BYTES = 500 * 1024  # RFC 9309: parse at least the first 500 KiB
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_CHUNK_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class HttpValidators:
    """What the server said last time about a page, for a conditional GET."""

    etag: str | None
    last_modified: str | None


class WebSource:
    """Pages from a list of URLs and sitemaps; implements `jobs.documents.Source`.

    `validators` maps a document uri from the previous run to its `metadata["http"]` values.
    The caller owns `session`. See the module docstring for the host rule and completeness.
    """

    def __init__(
        self,
        *,
        name: str,
        urls: Sequence[str] = (),
        sitemaps: Sequence[str] = (),
        validators: Mapping[str, HttpValidators],
        session: aiohttp.ClientSession,
        same_host: bool = True,
        respect_robots: bool = True,
        user_agent: str = DEFAULT_USER_AGENT,
        timeout_seconds: float = 20,
        max_bytes: int = 5_000_000,
        concurrency: int = 4,
        max_pages: int = 5000,
        budget: ConversionBudget | None = None,
    ) -> None:
        if concurrency < 1 or max_pages < 1 or max_bytes < 1 or timeout_seconds <= 0:
            raise ValueError("concurrency, max_pages, max_bytes and timeout_seconds must be > 0")
        self.name = name
        self._settings = _Settings(
            urls=tuple(urls),
            sitemaps=tuple(sitemaps),
            same_host=same_host,
            respect_robots=respect_robots,
            user_agent=user_agent,
            timeout_seconds=timeout_seconds,
            max_bytes=max_bytes,
            concurrency=concurrency,
            max_pages=max_pages,
        )
        self._validators = validators
        self._session = session
        self._budget = budget or ConversionBudget()
        self._listing_complete = False

    @property
    def listing_complete(self) -> bool:
        """True once a `documents()` run has finished having listed every page of the source.

        False before a run finishes, and after one where a sitemap or robots.txt could not be
        read or `max_pages` cut the list: absent pages must then not be taken as deleted.
        """
        return self._listing_complete

    async def documents(self) -> AsyncIterator[SourceItem]:
        """Yield one item per listed page (and a `FailedDocument` per unreadable sitemap)."""
        self._listing_complete = False
        async with IsolatedRunner(self._budget) as runner:
            crawl = _Crawl(
                self._settings, session=self._session, validators=self._validators, runner=runner
            )
            async with aclosing(crawl.items()) as items:  # stops in-flight fetches if we stop
                async for item in items:
                    yield item
        self._listing_complete = crawl.listing_complete


@dataclass(frozen=True, slots=True)
class _Settings:
    urls: tuple[str, ...]
    sitemaps: tuple[str, ...]
    same_host: bool
    respect_robots: bool
    user_agent: str
    timeout_seconds: float
    max_bytes: int
    concurrency: int
    max_pages: int


@dataclass(frozen=True, slots=True)
class _Kind:
    """What is being fetched, and so how: pages are conditional and must be text."""

    name: str
    accept: str
    types: frozenset[str] | None
    conditional: bool


_PAGE = _Kind(
    name="page",
    accept="text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1",
    types=HTML_TYPES | TEXT_TYPES,
    conditional=True,
)
_SITEMAP = _Kind(
    name="sitemap",
    accept="application/xml,text/xml;q=0.9,text/plain;q=0.5,*/*;q=0.1",
    types=None,
    conditional=False,
)


@dataclass(frozen=True, slots=True)
class _Response:
    """One HTTP response, its body read (only for 2xx)."""

    url: URL
    status: int
    content_type: str = ""
    charset: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    location: str | None = None
    body: bytes = b""


class _Crawl:
    """One `documents()` run: its robots.txt cache, request limit and completeness."""

    def __init__(
        self,
        settings: _Settings,
        *,
        session: aiohttp.ClientSession,
        validators: Mapping[str, HttpValidators],
        runner: IsolatedRunner,
    ) -> None:
        self._s = settings
        self._session = session
        self._validators = validators
        self._runner = runner
        self._requests = asyncio.Semaphore(settings.concurrency)
        self._timeout = aiohttp.ClientTimeout(total=settings.timeout_seconds)
        self._robots: dict[URL, Protego] = {}
        self._robots_locks: dict[URL, asyncio.Lock] = {}
        configured = (_http_url(raw) for raw in (*settings.urls, *settings.sitemaps))
        self._hosts = {_host(url) for url in configured if url is not None}
        self.listing_complete = True

    # -- listing ---------------------------------------------------------------------------

    async def items(self) -> AsyncGenerator[SourceItem]:
        pages: dict[URL, None] = {}  # an ordered set
        for raw in self._s.urls:
            url = _http_url(raw)
            if url is None:
                yield FailedDocument(uri=raw, reason="not an http(s) URL")
            else:
                pages[url] = None
        async for failure in self._walk_sitemaps(pages):
            yield failure
        if len(pages) > self._s.max_pages:
            logger.warning(
                "%s pages listed, only the first %s fetched", len(pages), self._s.max_pages
            )
            self.listing_complete = False
        seen: set[str] = set()
        fetched = self._fetch_pages(itertools.islice(pages, self._s.max_pages))
        async with aclosing(fetched):
            async for item in fetched:
                if item.uri not in seen:  # two listed URLs can redirect to one page
                    seen.add(item.uri)
                    yield item

    async def _walk_sitemaps(self, pages: dict[URL, None]) -> AsyncIterator[FailedDocument]:
        """Read sitemaps breadth-first into `pages`; nested indexes are followed, once each."""
        queue: deque[tuple[URL, int]] = deque()
        for raw in self._s.sitemaps:
            url = _http_url(raw)
            if url is None:
                self.listing_complete = False
                yield FailedDocument(uri=raw, reason="not an http(s) URL")
            else:
                queue.append((url, 0))
        visited: set[URL] = set()
        while queue and len(pages) <= self._s.max_pages:
            url, depth = queue.popleft()
            if url in visited:
                continue
            visited.add(url)
            try:
                sitemap = await self._read_sitemap(url, depth=depth)
            except DocumentError as failure:
                self.listing_complete = False
                yield FailedDocument(uri=str(url), reason=failure.reason)
                continue
            listed = self._listed(url, sitemap)
            if sitemap.kind == "pages":
                pages.update(dict.fromkeys(listed))
            else:
                queue.extend((child, depth + 1) for child in listed)
        if queue:  # stopped by max_pages
            self.listing_complete = False

    async def _read_sitemap(self, url: URL, *, depth: int) -> Sitemap:
        if depth > _MAX_SITEMAP_DEPTH:
            raise DocumentError(f"sitemap indexes are nested more than {_MAX_SITEMAP_DEPTH} deep")
        response = await self._fetch(url, kind=_SITEMAP, limit=_MAX_SITEMAP_BYTES)
        return await asyncio.to_thread(  # raises InvalidSitemap, a DocumentError
            parse_sitemap,
            response.body,
            content_type=response.content_type,
            max_bytes=_MAX_SITEMAP_BYTES,
        )

    def _listed(self, sitemap_url: URL, sitemap: Sitemap) -> list[URL]:
        """The sitemap's http(s) locations on an allowed host; the others are skipped."""
        urls = [_http_url(loc, base=sitemap_url) for loc in sitemap.locations]
        allowed = [url for url in urls if url is not None and self._allowed(url)]
        if len(allowed) < len(urls):
            logger.info(
                "sitemap %s: skipped %d entries not on a configured host",
                sitemap_url,
                len(urls) - len(allowed),
            )
        return allowed

    def _allowed(self, url: URL) -> bool:
        return not self._s.same_host or _host(url) in self._hosts

    # -- pages -----------------------------------------------------------------------------

    async def _fetch_pages(self, pages: Iterable[URL]) -> AsyncGenerator[SourceItem]:
        """Fetch with at most `concurrency` pages in flight, yielding in completion order.

        Pages are started only as results are taken, so a slow consumer (the embedder) holds
        back the fetching instead of piling up pages in memory.
        """
        todo = iter(pages)
        running: set[asyncio.Task[SourceItem]] = set()
        try:
            while True:
                for url in itertools.islice(todo, self._s.concurrency - len(running)):
                    running.add(asyncio.create_task(self._page(url)))
                if not running:
                    return
                done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    yield task.result()
        finally:
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)

    async def _page(self, url: URL) -> SourceItem:
        try:
            return await self._read_page(url)
        except DocumentGone as gone:
            return GoneDocument(uri=str(url), reason=gone.reason)
        except DocumentError as failure:  # includes UnreadablePage
            return FailedDocument(uri=str(url), reason=failure.reason)
        except Exception as error:
            logger.debug("could not read %s", url, exc_info=True)
            return FailedDocument(uri=str(url), reason=one_line_reason(error))

    async def _read_page(self, url: URL) -> SourceItem:
        response = await self._fetch(url, kind=_PAGE, limit=self._s.max_bytes)
        if response.status == 304:
            return UnchangedDocument(uri=str(response.url))
        # Extraction runs in a worker within its time and memory budget (jobs.isolation).
        content = await self._runner.run(
            read_page,
            response.body,
            content_type=response.content_type,
            charset=response.charset,
            url=str(response.url),
        )
        if not content.text:
            raise DocumentError("no readable text on the page")
        uri = str(_canonical(response.url, content.canonical))
        return SourceDocument(
            uri=uri,
            title=content.title or _title_from_url(response.url),
            url=uri,
            text=content.text,
            metadata={"http": {"etag": response.etag, "last_modified": response.last_modified}},
            updated_at=_http_date(response.last_modified),
        )

    # -- HTTP ------------------------------------------------------------------------------

    async def _fetch(self, start: URL, *, kind: _Kind, limit: int) -> _Response:
        """GET `start`, following up to five redirects on the same host; 2xx or 304 only."""
        url = start
        for _ in range(_MAX_REDIRECTS + 1):
            await self._check_robots(url, what=kind.name)
            response = await self._request(url, kind=kind, limit=limit)
            if response.status not in _REDIRECT_STATUSES:
                return response
            url = self._redirect_target(response)
        raise DocumentError(f"more than {_MAX_REDIRECTS} redirects")

    def _redirect_target(self, response: _Response) -> URL:
        if not response.location:
            raise DocumentError(f"HTTP {response.status} redirect without a Location header")
        target = _http_url(response.location, base=response.url)
        if target is None:
            raise DocumentError(f"redirected to a URL that is not http(s): {response.location}")
        if self._s.same_host and _host(target) != _host(response.url):
            raise DocumentError(f"redirected to another host: {_host(target)}")
        return target

    async def _request(self, url: URL, *, kind: _Kind, limit: int) -> _Response:
        conditional = self._conditional_headers(url) if kind.conditional else {}
        headers = {"User-Agent": self._s.user_agent, "Accept": kind.accept, **conditional}
        try:
            async with (
                self._requests,
                self._session.get(
                    url, headers=headers, allow_redirects=False, timeout=self._timeout
                ) as resp,
            ):
                return await _response(
                    resp, url=url, kind=kind, conditional=bool(conditional), limit=limit
                )
        except TimeoutError as exc:
            raise DocumentError(
                f"no complete response within {self._s.timeout_seconds:g} s"
            ) from exc
        except aiohttp.ClientError as exc:
            reason = str(exc) or type(exc).__name__
            raise DocumentError(f"could not fetch the {kind.name}: {reason}") from exc

    def _conditional_headers(self, url: URL) -> dict[str, str]:
        validators = self._validators.get(str(url))
        headers: dict[str, str] = {}
        if validators is not None and validators.etag:
            headers["If-None-Match"] = validators.etag
        if validators is not None and validators.last_modified:
            headers["If-Modified-Since"] = validators.last_modified
        return headers

    # -- robots.txt ------------------------------------------------------------------------

    async def _check_robots(self, url: URL, *, what: str) -> None:
        if not self._s.respect_robots:
            return
        rules = await self._robots_for(url.origin())
        if not rules.can_fetch(str(url), self._s.user_agent):
            raise DocumentError(f"robots.txt of {_host(url)} does not allow fetching this {what}")

    async def _robots_for(self, origin: URL) -> Protego:
        """The origin's rules, read once per run even when many pages ask at the same time."""
        async with self._robots_locks.setdefault(origin, asyncio.Lock()):
            if origin not in self._robots:
                self._robots[origin] = await self._read_robots(origin)
            return self._robots[origin]

    async def _read_robots(self, origin: URL) -> Protego:
        """RFC 9309: 4xx means no rules; 5xx or no answer means nothing may be fetched.
        Protego follows RFC 9309's matching (`*` and `$` patterns, the longest rule wins),
        which the standard library's robotparser does not."""
        try:
            status, body = await self._get_robots_txt(origin / "robots.txt")
        except aiohttp.TooManyRedirects:
            status, body = 404, b""
        except (TimeoutError, aiohttp.ClientError) as exc:
            logger.warning("robots.txt of %s unreachable: %r", _host(origin), exc)
            status, body = 503, b""
        if status >= 500:
            logger.warning(
                "robots.txt of %s: HTTP %s, fetching nothing there", _host(origin), status
            )
            self.listing_complete = False
            return Protego.parse("User-agent: *\nDisallow: /\n")
        # A body only comes with a 200.
        return Protego.parse(body.decode("utf-8", errors="replace"))

    async def _get_robots_txt(self, url: URL) -> tuple[int, bytes]:
        headers = {"User-Agent": self._s.user_agent, "Accept": "text/plain"}
        async with (
            self._requests,
            self._session.get(
                url, headers=headers, max_redirects=_MAX_REDIRECTS, timeout=self._timeout
            ) as resp,
        ):
            if resp.status != 200:
                return resp.status, b""
            return resp.status, await _read_prefix(resp, limit=_MAX_ROBOTS_BYTES)


# -- helpers over one response ---------------------------------------------------------------


async def _response(
    resp: aiohttp.ClientResponse, *, url: URL, kind: _Kind, conditional: bool, limit: int
) -> _Response:
    """Turn a response into a `_Response`, reading the body of a 2xx; fail on anything else."""
    status = resp.status
    if status in _REDIRECT_STATUSES:
        return _Response(url=url, status=status, location=resp.headers.get("Location"))
    if status == 304 and conditional:
        return _Response(url=url, status=status)
    if status in (404, 410):
        raise DocumentGone(f"HTTP {status}: the page is gone")
    if not 200 <= status < 300:
        raise DocumentError(f"HTTP {status} from server")
    if kind.types is not None and resp.content_type not in kind.types:
        raise DocumentError(f"unsupported content type {resp.content_type}")
    return _Response(
        url=url,
        status=status,
        content_type=resp.content_type,
        charset=resp.charset,
        etag=resp.headers.get("ETag"),
        last_modified=resp.headers.get("Last-Modified"),
        body=await _read_capped(resp, limit=limit, what=kind.name),
    )


async def _read_capped(resp: aiohttp.ClientResponse, *, limit: int, what: str) -> bytes:
    """The whole body, or `DocumentError` as soon as it is known to be over `limit` bytes."""
    too_large = f"{what} is over the {limit / 1_000_000:.1f} MB limit"
    if resp.content_length is not None and resp.content_length > limit:
        raise DocumentError(too_large)
    body = bytearray()
    async for chunk in resp.content.iter_chunked(_CHUNK_BYTES):
        body += chunk
        if len(body) > limit:
            resp.close()  # drop the connection rather than drain the rest
            raise DocumentError(too_large)
    return bytes(body)


async def _read_prefix(resp: aiohttp.ClientResponse, *, limit: int) -> bytes:
    """At most the first `limit` bytes of the body; the rest is ignored."""
    body = bytearray()
    async for chunk in resp.content.iter_chunked(_CHUNK_BYTES):
        body += chunk
        if len(body) >= limit:
            resp.close()
            break
    return bytes(body[:limit])


# -- URL helpers -----------------------------------------------------------------------------


def _http_url(raw: str, *, base: URL | None = None) -> URL | None:
    """An absolute http(s) URL without fragment, or None for anything else."""
    try:
        url = URL(raw.strip())
        if base is not None:
            url = base.join(url)
    except ValueError:
        return None
    if url.scheme not in ("http", "https") or not url.host:
        return None
    return url.with_fragment(None)


def _host(url: URL) -> str:
    """host[:port], the port left out when it is the scheme's default."""
    host = (url.host or "").lower()
    return host if url.is_default_port() else f"{host}:{url.port}"


def _canonical(final: URL, declared: str | None) -> URL:
    """The page's `<link rel=canonical>` if it is on the page's own host, else `final`."""
    canonical = _http_url(declared, base=final) if declared else None
    if canonical is None or _host(canonical) != _host(final):
        return final
    return canonical


def _title_from_url(url: URL) -> str:
    return next((part for part in reversed(url.parts) if part and part != "/"), _host(url))


def _http_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
