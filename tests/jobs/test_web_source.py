"""WebSource against local web servers on ephemeral ports, every request recorded.

Two servers on one machine differ only by port, which is what "another host" means here: the
host rule compares host and port (a URL's netloc).
"""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from multidict import CIMultiDict, CIMultiDictProxy

from jobs.documents import (
    FailedDocument,
    GoneDocument,
    SourceDocument,
    SourceItem,
    UnchangedDocument,
)
from jobs.web import HttpValidators, WebSource

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
ServerFactory = Callable[[web.Application], Awaitable[TestServer]]
StartSite = Callable[[], Awaitable["FakeSite"]]

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: CIMultiDictProxy[str]


@dataclass
class FakeSite:
    """One local web server whose routes each test sets; unknown paths answer 404."""

    server: TestServer | None = None
    routes: dict[str, Handler] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)
    release: asyncio.Event = field(default_factory=asyncio.Event)  # frees parked handlers

    @property
    def host(self) -> str:
        assert self.server is not None
        return f"127.0.0.1:{self.server.port}"

    def url(self, path: str) -> str:
        return f"http://{self.host}{path}"

    def paths(self) -> list[str]:
        return [request.path for request in self.requests]

    def serve(
        self,
        path: str,
        body: str | bytes,
        *,
        content_type: str = "text/html",
        charset: str | None = "utf-8",
        status: int = 200,
        headers: dict[str, str] | None = None,
    ) -> None:
        data = body.encode(charset or "utf-8") if isinstance(body, str) else body
        type_header = f"{content_type}; charset={charset}" if charset else content_type

        async def handler(request: web.Request) -> web.StreamResponse:
            all_headers = {"Content-Type": type_header, **(headers or {})}
            return web.Response(body=data, status=status, headers=all_headers)

        self.routes[path] = handler

    def redirect(self, path: str, location: str, *, status: int = 302) -> None:
        async def handler(request: web.Request) -> web.StreamResponse:
            return web.Response(status=status, headers={"Location": location})

        self.routes[path] = handler

    async def dispatch(self, request: web.Request) -> web.StreamResponse:
        headers = CIMultiDictProxy(CIMultiDict(request.headers))
        self.requests.append(Recorded(request.method, request.path_qs, headers))
        handler = self.routes.get(request.path)
        if handler is None:
            raise web.HTTPNotFound()
        return await handler(request)


@pytest.fixture
async def start_site(aiohttp_server: ServerFactory) -> AsyncIterator[StartSite]:
    started: list[FakeSite] = []

    async def start() -> FakeSite:
        site = FakeSite()
        app = web.Application()
        app.router.add_route("*", "/{path:.*}", site.dispatch)
        site.server = await aiohttp_server(app)
        started.append(site)
        return site

    yield start
    for site in started:
        site.release.set()


@pytest.fixture
async def site(start_site: StartSite) -> FakeSite:
    return await start_site()


@pytest.fixture
async def other_site(start_site: StartSite) -> FakeSite:
    return await start_site()


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        yield client


def web_source(session: aiohttp.ClientSession, **options: Any) -> WebSource:
    options.setdefault("validators", {})
    return WebSource(name="web", session=session, **options)


async def collect(source: WebSource) -> dict[str, SourceItem]:
    items = [item async for item in source.documents()]
    by_uri = {item.uri: item for item in items}
    assert len(by_uri) == len(items), "one item per uri"
    return by_uri


def page(heading: str, *paragraphs: str, title: str = "A page", head: str = "") -> str:
    body = "".join(f"<p>{text}</p>" for text in paragraphs)
    return (
        f"<!doctype html><html><head><title>{title}</title>{head}</head>"
        f"<body><nav><a href='/'>Home</a></nav><main><h1>{heading}</h1>{body}</main></body></html>"
    )


def urlset(*urls: str) -> str:
    entries = "".join(f"<url><loc>{url}</loc></url>" for url in urls)
    return f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{SITEMAP_NS}">{entries}</urlset>'


def sitemap_index(*urls: str) -> str:
    entries = "".join(f"<sitemap><loc>{url}</loc></sitemap>" for url in urls)
    return f'<?xml version="1.0"?><sitemapindex xmlns="{SITEMAP_NS}">{entries}</sitemapindex>'


def serve_xml(site: FakeSite, path: str, xml: str) -> None:
    site.serve(path, xml, content_type="application/xml")


def failed(item: SourceItem | None) -> FailedDocument:
    assert isinstance(item, FailedDocument), item
    return item


def document(item: SourceItem | None) -> SourceDocument:
    assert isinstance(item, SourceDocument), item
    return item


# -- pages and their text -------------------------------------------------------------------


async def test_a_listed_page_becomes_markdown_text_with_its_validators(
    site: FakeSite, session: aiohttp.ClientSession
) -> None:
    html = page(
        "Deploying",
        "Run the <a href='scripts/deploy.html'>deploy script</a> from the <b>repo</b> root.",
        "It uses snake_case names.",
        title="Deploy guide",
    )
    modified = "Tue, 01 Jul 2025 10:00:00 GMT"
    site.serve("/docs/deploy", html, headers={"ETag": '"v2"', "Last-Modified": modified})
    source = web_source(session, urls=[site.url("/docs/deploy")])

    doc = document((await collect(source)).get(site.url("/docs/deploy")))

    assert doc.url == doc.uri == site.url("/docs/deploy")
    assert doc.title == "Deploy guide"
    assert doc.text.startswith("# Deploying\n\nRun the ")
    assert f"[deploy script]({site.url('/docs/scripts/deploy.html')})" in doc.text
    assert "from the repo root." in doc.text and "snake_case" in doc.text
    assert "<" not in doc.text and "Home" not in doc.text
    assert doc.metadata == {"http": {"etag": '"v2"', "last_modified": modified}}
    assert doc.updated_at is not None and doc.updated_at.year == 2025
    assert source.listing_complete
    assert site.requests[-1].headers["User-Agent"].startswith("slack-kb/")


async def test_script_text_never_reaches_the_document(
    site: FakeSite, session: aiohttp.ClientSession
) -> None:
    scripts = "".join(
        f"<script>var secret{i} = 'SCRIPT-TEXT-{i}'; document.write('<p>WRITTEN</p>');</script>"
        for i in range(50)
    )
    json_ld = '<script type="application/ld+json">{"name": "LD-JSON-TEXT"}</script>'
    body = f"{scripts}<p>The only readable sentence on this page.</p>{scripts}"
    site.serve("/mixed", page("Mixed", body, head=scripts + json_ld + "<style>p{}</style>"))
    site.serve("/only-scripts", f"<html><head>{scripts}</head><body>{scripts}</body></html>")
    source = web_source(session, urls=[site.url("/mixed"), site.url("/only-scripts")])

    items = await collect(source)

    text = document(items[site.url("/mixed")]).text
    assert "The only readable sentence on this page." in text
    for leaked in ("SCRIPT-TEXT", "secret", "WRITTEN", "LD-JSON-TEXT", "p{}"):
        assert leaked not in text
    assert failed(items[site.url("/only-scripts")]).reason == "no readable text on the page"


@pytest.mark.parametrize(
    ("content_type", "head", "encoding"),
    [
        ("text/html; charset=iso-8859-1", "", "latin-1"),
        ("text/html", '<meta charset="windows-1252">', "cp1252"),
    ],
    ids=["latin-1 in the header", "windows-1252 in a meta tag"],
)
async def test_a_page_in_a_declared_8_bit_charset_decodes_correctly(
    site: FakeSite, session: aiohttp.ClientSession, content_type: str, head: str, encoding: str
) -> None:
    html = page("Café crème", "Déjà vu, naïve façade, brûlée.", head=head)
    site.serve("/fr", html.encode(encoding), content_type=content_type, charset=None)

    items = await collect(web_source(session, urls=[site.url("/fr")]))

    text = document(items[site.url("/fr")]).text
    assert "# Café crème" in text and "Déjà vu, naïve façade, brûlée." in text


async def test_a_declared_charset_that_does_not_decode_fails_the_page(
    site: FakeSite, session: aiohttp.ClientSession
) -> None:
    site.serve("/broken", b"<p>caf\xc3\x28 and \xff</p>", charset="utf-8")

    items = await collect(web_source(session, urls=[site.url("/broken")]))

    assert failed(items[site.url("/broken")]).reason == "the page is not valid utf-8 text"


async def test_plain_text_is_read_as_is_and_other_content_types_fail(
    site: FakeSite, session: aiohttp.ClientSession
) -> None:
    site.serve("/notes.txt", "Line one\r\n\r\n\r\nLine two\r\n", content_type="text/plain")
    site.serve("/report.pdf", b"%PDF-1.4", content_type="application/pdf", charset=None)
    source = web_source(session, urls=[site.url("/notes.txt"), site.url("/report.pdf")])

    items = await collect(source)

    notes = document(items[site.url("/notes.txt")])
    assert (notes.text, notes.title) == ("Line one\n\nLine two", "notes.txt")
    reason = failed(items[site.url("/report.pdf")]).reason
    assert reason == "unsupported content type application/pdf"


async def test_a_canonical_link_names_the_document_only_on_the_same_host(
    site: FakeSite, other_site: FakeSite, session: aiohttp.ClientSession
) -> None:
    site.serve("/print", page("Guide", "Text.", head="<link rel='canonical' href='/guide#top'>"))
    elsewhere = f"<link rel='canonical' href='{other_site.url('/guide')}'>"
    site.serve("/copy", page("Copy", "Text.", head=elsewhere))
    source = web_source(session, urls=[site.url("/print"), site.url("/copy")])

    items = await collect(source)

    assert set(items) == {site.url("/guide"), site.url("/copy")}
    assert document(items[site.url("/guide")]).url == site.url("/guide")


async def test_a_short_page_without_main_keeps_its_headings_and_drops_its_menu(
    site: FakeSite, session: aiohttp.ClientSession
) -> None:
    html = (
        "<html><head><title>On-call</title></head><body>"
        "<div class='menu'><a href='/'>Home</a> <a href='/about'>About</a></div>"
        "<h1 id='on-call'><a href='#on-call'>On-call</a></h1><p>Rotation changes on Mondays.</p>"
        "<h2>Escalation</h2><pre><code>page --primary\npage --secondary</code></pre>"
        "<p>Then wait.</p><footer>Copyright 2025 ACME</footer></body></html>"
    )
    site.serve("/on-call", html)

    items = await collect(web_source(session, urls=[site.url("/on-call")]))

    assert document(items[site.url("/on-call")]).text == (
        "# On-call\n\nRotation changes on Mondays.\n\n## Escalation\n\n"
        "```\npage --primary\npage --secondary\n```\n\nThen wait."
    )


# -- sitemaps -------------------------------------------------------------------------------


async def test_pages_are_listed_from_a_sitemap_index_and_its_nested_sitemaps(
    site: FakeSite, session: aiohttp.ClientSession
) -> None:
    serve_xml(site, "/sitemap.xml", sitemap_index(site.url("/pages-a.xml"), "/nested.xml.gz"))
    nested = sitemap_index(site.url("/pages-b.xml"), site.url("/sitemap.xml"))  # a cycle
    site.serve("/nested.xml.gz", gzip.compress(nested.encode()), content_type="application/gzip")
    serve_xml(site, "/pages-a.xml", urlset(site.url("/a1"), site.url("/a2")))
    serve_xml(site, "/pages-b.xml", urlset(site.url("/b1"), site.url("/a1")))
    for path in ("/a1", "/a2", "/b1"):
        site.serve(path, page(f"Page {path}", "Some text."))
    source = web_source(session, sitemaps=[site.url("/sitemap.xml")])

    items = await collect(source)

    assert set(items) == {site.url("/a1"), site.url("/a2"), site.url("/b1")}
    assert all(isinstance(item, SourceDocument) for item in items.values())
    assert source.listing_complete
    fetched = [path for path in site.paths() if path != "/robots.txt"]
    assert sorted(fetched) == sorted(set(fetched)), "each sitemap and page fetched once"


@pytest.mark.parametrize(
    ("body", "reason_start"),
    [
        ("<?xml version='1.0'?><urlset><url><loc>/x</loc></url>", "sitemap is not valid XML"),
        ("<html><body><p>Not found</p></body></html>", "not a sitemap: the root element is <html>"),
    ],
    ids=["truncated XML", "an HTML page"],
)
async def test_an_invalid_sitemap_fails_alone_and_marks_the_listing_incomplete(
    site: FakeSite, session: aiohttp.ClientSession, body: str, reason_start: str
) -> None:
    serve_xml(site, "/bad.xml", body)
    serve_xml(site, "/good.xml", urlset(site.url("/page")))
    site.serve("/page", page("Page", "Text."))
    source = web_source(session, sitemaps=[site.url("/bad.xml"), site.url("/good.xml")])

    items = await collect(source)

    assert failed(items[site.url("/bad.xml")]).reason.startswith(reason_start)
    assert isinstance(items[site.url("/page")], SourceDocument)
    assert not source.listing_complete


async def test_sitemaps_nested_too_deep_fail_and_mark_the_listing_incomplete(
    site: FakeSite, session: aiohttp.ClientSession
) -> None:
    for level in range(5):
        serve_xml(site, f"/s{level}.xml", sitemap_index(site.url(f"/s{level + 1}.xml")))
    serve_xml(site, "/s5.xml", urlset(site.url("/deep")))
    source = web_source(session, sitemaps=[site.url("/s0.xml")])

    items = await collect(source)

    assert list(items) == [site.url("/s4.xml")]
    reason = failed(items[site.url("/s4.xml")]).reason
    assert reason == "sitemap indexes are nested more than 3 deep"
    assert "/s4.xml" not in site.paths()
    assert not source.listing_complete


async def test_sitemap_entries_on_another_host_are_not_fetched(
    site: FakeSite, other_site: FakeSite, session: aiohttp.ClientSession
) -> None:
    serve_xml(site, "/sitemap.xml", urlset(site.url("/here"), other_site.url("/there")))
    site.serve("/here", page("Here", "Text."))
    other_site.serve("/there", page("There", "Text."))
    source = web_source(session, sitemaps=[site.url("/sitemap.xml")])

    items = await collect(source)

    assert list(items) == [site.url("/here")]
    assert other_site.requests == []
    assert source.listing_complete


# -- conditional GET ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("validators", "request_header", "value"),
    [
        (HttpValidators(etag='"v1"', last_modified=None), "If-None-Match", '"v1"'),
        (
            HttpValidators(etag=None, last_modified="Tue, 01 Jul 2025 10:00:00 GMT"),
            "If-Modified-Since",
            "Tue, 01 Jul 2025 10:00:00 GMT",
        ),
    ],
    ids=["etag", "last-modified"],
)
async def test_an_unchanged_page_answers_304_and_yields_unchanged_document(
    site: FakeSite,
    session: aiohttp.ClientSession,
    validators: HttpValidators,
    request_header: str,
    value: str,
) -> None:
    async def conditional(request: web.Request) -> web.StreamResponse:
        if request.headers.get(request_header) == value:
            return web.Response(status=304)
        return web.Response(text=page("Changed", "New text."), content_type="text/html")

    site.routes["/guide"] = conditional
    url = site.url("/guide")

    items = await collect(web_source(session, urls=[url], validators={url: validators}))

    assert items == {url: UnchangedDocument(uri=url)}
    assert site.requests[-1].headers[request_header] == value


async def test_a_changed_page_carries_its_new_validators(
    site: FakeSite, session: aiohttp.ClientSession
) -> None:
    site.serve("/guide", page("Guide", "New text."), headers={"ETag": '"v2"'})
    url = site.url("/guide")
    old = HttpValidators(etag='"v1"', last_modified=None)

    items = await collect(web_source(session, urls=[url], validators={url: old}))

    assert document(items[url]).metadata["http"] == {"etag": '"v2"', "last_modified": None}
    assert site.requests[-1].headers["If-None-Match"] == '"v1"'


# -- redirects and hosts --------------------------------------------------------------------


async def test_redirects_on_the_same_host_are_followed_to_one_document(
    site: FakeSite, session: aiohttp.ClientSession
) -> None:
    site.redirect("/old", "/older", status=301)
    site.redirect("/older", site.url("/new"), status=308)
    site.redirect("/alias", "new")
    site.serve("/new", page("New home", "Moved here."))
    source = web_source(session, urls=[site.url("/old"), site.url("/alias")])

    items = await collect(source)

    assert list(items) == [site.url("/new")]
    assert document(items[site.url("/new")]).url == site.url("/new")


async def test_a_redirect_to_another_host_fails_without_fetching_there(
    site: FakeSite, other_site: FakeSite, session: aiohttp.ClientSession
) -> None:
    site.redirect("/moved", other_site.url("/landing"))
    other_site.serve("/landing", page("Landing", "Text."))

    items = await collect(web_source(session, urls=[site.url("/moved")]))

    reason = failed(items[site.url("/moved")]).reason
    assert reason == f"redirected to another host: {other_site.host}"
    assert other_site.requests == []


async def test_a_redirect_loop_fails_after_five_hops(
    site: FakeSite, session: aiohttp.ClientSession
) -> None:
    site.redirect("/ping", "/pong")
    site.redirect("/pong", "/ping")

    items = await collect(web_source(session, urls=[site.url("/ping")]))

    assert failed(items[site.url("/ping")]).reason == "more than 5 redirects"
    assert len([path for path in site.paths() if path != "/robots.txt"]) == 6


# -- robots.txt -----------------------------------------------------------------------------


async def test_robots_txt_disallowed_pages_are_not_fetched(
    site: FakeSite, session: aiohttp.ClientSession
) -> None:
    site.serve("/robots.txt", "User-agent: *\nDisallow: /private\n", content_type="text/plain")
    site.serve("/public", page("Public", "Text."))
    site.serve("/private/plans", page("Private", "Text."))
    source = web_source(session, urls=[site.url("/public"), site.url("/private/plans")])

    items = await collect(source)

    assert isinstance(items[site.url("/public")], SourceDocument)
    reason = failed(items[site.url("/private/plans")]).reason
    assert reason == f"robots.txt of {site.host} does not allow fetching this page"
    assert sorted(site.paths()) == ["/public", "/robots.txt"]
    assert source.listing_complete


async def test_robots_txt_wildcards_and_the_longest_rule_are_honoured(
    site: FakeSite, session: aiohttp.ClientSession
) -> None:
    # RFC 9309: `*` matches any run of characters, `$` ends the path, and when an allow
    # and a disallow rule both match, the longer one wins (whatever their order).
    site.serve(
        "/robots.txt",
        "User-agent: *\nDisallow: /*.txt$\nDisallow: /team\nAllow: /team/handbook\n",
        content_type="text/plain",
    )
    for path in ("/notes.txt", "/notes.txt.html", "/team/salaries", "/team/handbook/leave"):
        site.serve(path, page(path, "Text."))
    urls = [site.url(p) for p in ("/notes.txt", "/notes.txt.html")]
    urls += [site.url(p) for p in ("/team/salaries", "/team/handbook/leave")]

    items = await collect(web_source(session, urls=urls))

    assert "robots.txt" in failed(items[site.url("/notes.txt")]).reason
    assert "robots.txt" in failed(items[site.url("/team/salaries")]).reason
    assert isinstance(items[site.url("/notes.txt.html")], SourceDocument)
    assert isinstance(items[site.url("/team/handbook/leave")], SourceDocument)
    assert sorted(site.paths()) == ["/notes.txt.html", "/robots.txt", "/team/handbook/leave"]


async def test_a_robots_txt_server_error_disallows_the_host_and_marks_the_listing_incomplete(
    site: FakeSite, session: aiohttp.ClientSession
) -> None:
    site.serve("/robots.txt", "down", status=503, content_type="text/plain")
    site.serve("/page", page("Page", "Text."))
    source = web_source(session, urls=[site.url("/page")])

    items = await collect(source)

    assert "robots.txt" in failed(items[site.url("/page")]).reason
    assert site.paths() == ["/robots.txt"]
    assert not source.listing_complete


async def test_robots_txt_is_ignored_when_asked(
    site: FakeSite, session: aiohttp.ClientSession
) -> None:
    site.serve("/robots.txt", "User-agent: *\nDisallow: /\n", content_type="text/plain")
    site.serve("/page", page("Page", "Text."))

    items = await collect(web_source(session, urls=[site.url("/page")], respect_robots=False))

    assert isinstance(items[site.url("/page")], SourceDocument)
    assert site.paths() == ["/page"]


# -- failures and limits --------------------------------------------------------------------


async def test_a_server_error_fails_the_page_and_a_404_marks_it_gone(
    site: FakeSite, session: aiohttp.ClientSession
) -> None:
    site.serve("/boom", "Internal error", status=500)

    items = await collect(web_source(session, urls=[site.url("/boom"), site.url("/missing")]))

    assert failed(items[site.url("/boom")]).reason == "HTTP 500 from server"
    gone = items[site.url("/missing")]
    assert isinstance(gone, GoneDocument)
    assert gone.reason == "HTTP 404: the page is gone"


@pytest.mark.parametrize("stall", ["before headers", "mid-body"])
async def test_a_page_slower_than_the_timeout_fails(
    site: FakeSite, session: aiohttp.ClientSession, stall: str
) -> None:
    async def parked(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        if stall == "mid-body":
            await response.prepare(request)
            await response.write(b"<html><body><p>The start of a page")
        await site.release.wait()  # set only when the test is over
        return response

    site.routes["/slow"] = parked
    site.serve("/fast", page("Fast", "Text."))
    source = web_source(session, urls=[site.url("/slow"), site.url("/fast")], timeout_seconds=0.2)

    items = await collect(source)

    assert failed(items[site.url("/slow")]).reason == "no complete response within 0.2 s"
    assert isinstance(items[site.url("/fast")], SourceDocument)


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
async def test_a_page_over_the_size_limit_fails_without_being_read_whole(
    site: FakeSite, session: aiohttp.ClientSession, declared: bool
) -> None:
    total, chunk = 50_000_000, b"<p>" + b"a" * (64 * 1024 - 3)
    sent: list[int] = []
    finished = asyncio.Event()

    async def huge(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        if declared:
            response.content_length = total
        await response.prepare(request)
        written = 0
        try:
            while written < total:
                await response.write(chunk)
                written += len(chunk)
        except ConnectionResetError:
            pass  # the client hung up, as it should
        finally:
            sent.append(written)
            finished.set()
        return response

    site.routes["/huge"] = huge
    source = web_source(session, urls=[site.url("/huge")], max_bytes=1_000_000)

    items = await collect(source)

    assert failed(items[site.url("/huge")]).reason == "page is over the 1.0 MB limit"
    await asyncio.wait_for(finished.wait(), timeout=5)
    assert sent[0] < total


async def test_max_pages_caps_the_fetches_and_marks_the_listing_incomplete(
    site: FakeSite, session: aiohttp.ClientSession
) -> None:
    for name in ("one", "two", "three"):
        site.serve(f"/{name}", page(name, "Text."))
    urls = [site.url("/one"), site.url("/two"), site.url("/three")]
    source = web_source(session, urls=urls, max_pages=2)

    items = await collect(source)

    assert set(items) == set(urls[:2])
    assert "/three" not in site.paths()
    assert not source.listing_complete


async def test_no_more_than_concurrency_pages_are_fetched_at_once(
    site: FakeSite, session: aiohttp.ClientSession
) -> None:
    in_flight, peak = 0, 0
    two_in_flight = asyncio.Event()

    async def gated(request: web.Request) -> web.StreamResponse:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        if in_flight == 2:
            two_in_flight.set()
        await two_in_flight.wait()
        in_flight -= 1
        return web.Response(text=page("Page", "Text."), content_type="text/html")

    urls = []
    for number in range(6):
        site.routes[f"/p{number}"] = gated
        urls.append(site.url(f"/p{number}"))

    items = await collect(web_source(session, urls=urls, concurrency=2))

    assert len(items) == 6
    assert peak == 2


async def test_stopping_early_cancels_the_fetches_in_flight(
    site: FakeSite, session: aiohttp.ClientSession
) -> None:
    async def parked(request: web.Request) -> web.StreamResponse:
        await site.release.wait()  # set only when the test is over
        return web.Response(text="too late")

    site.serve("/fast", page("Fast", "Text."))
    site.routes["/slow-1"] = site.routes["/slow-2"] = parked
    urls = [site.url("/fast"), site.url("/slow-1"), site.url("/slow-2")]
    source = web_source(session, urls=urls, concurrency=3)
    run = source.documents()

    first = await anext(run)
    await run.aclose()  # type: ignore[attr-defined]

    assert first.uri == site.url("/fast")
    fetching = [task for task in asyncio.all_tasks() if "_page" in repr(task.get_coro())]
    assert fetching == []
    assert not source.listing_complete
