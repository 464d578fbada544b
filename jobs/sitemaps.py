"""Read sitemap files: a page list (`<urlset>`), an index of sitemaps, or a plain-text URL list.

Parsing only; fetching, nesting and host rules live in `jobs.web`. XML is parsed by lxml with
entity expansion, DTD loading and network access off, so a hostile sitemap cannot expand into
gigabytes or reach other hosts; gzip bodies are inflated with a hard cap for the same reason.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Literal

from lxml import etree

from jobs.errors import DocumentError

SitemapKind = Literal["pages", "index"]

_GZIP_MAGIC = b"\x1f\x8b"
_ROOTS: dict[str, SitemapKind] = {"urlset": "pages", "sitemapindex": "index"}
_ENTRIES: dict[SitemapKind, str] = {"pages": "url", "index": "sitemap"}


class InvalidSitemap(DocumentError):
    """The body is not a sitemap; `reason` says why in words a person can act on."""


@dataclass(frozen=True, slots=True)
class Sitemap:
    """What one sitemap file lists: page URLs, or (for an index) more sitemap URLs.

    `locations` are the `<loc>` values as written (stripped), in document order.
    """

    kind: SitemapKind
    locations: tuple[str, ...]


def parse_sitemap(body: bytes, *, content_type: str, max_bytes: int) -> Sitemap:
    """Parse a sitemap body; raise `InvalidSitemap` when it is not one.

    A `text/plain` body is the protocol's text format (one URL per line); anything else must be
    sitemap XML, possibly gzip-compressed, inflated to at most `max_bytes`.
    """
    if body.startswith(_GZIP_MAGIC):
        body = _gunzip(body, max_bytes=max_bytes)
    if content_type == "text/plain":
        return _parse_text(body)
    return _parse_xml(body)


def _gunzip(body: bytes, *, max_bytes: int) -> bytes:
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(body, max_bytes)
    except zlib.error as exc:
        raise InvalidSitemap(f"sitemap is not valid gzip ({exc})") from exc
    if inflater.unconsumed_tail:
        raise InvalidSitemap(f"sitemap is over the {max_bytes / 1_000_000:.1f} MB limit")
    return data


def _parse_text(body: bytes) -> Sitemap:
    lines = body.decode("utf-8", errors="replace").splitlines()
    return Sitemap(kind="pages", locations=tuple(line.strip() for line in lines if line.strip()))


def _parse_xml(body: bytes) -> Sitemap:
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True
    )
    try:
        root = etree.fromstring(body, parser=parser)
    except etree.XMLSyntaxError as exc:
        raise InvalidSitemap(f"sitemap is not valid XML ({exc.msg})") from exc
    kind = _ROOTS.get(etree.QName(root).localname)
    if kind is None:
        raise InvalidSitemap(
            f"not a sitemap: the root element is <{etree.QName(root).localname}>, "
            "expected <urlset> or <sitemapindex>"
        )
    return Sitemap(kind=kind, locations=tuple(_locations(root, entry=_ENTRIES[kind])))


def _locations(root: etree._Element, *, entry: str) -> list[str]:
    """`<loc>` texts of the root's entries, matched by local name so any namespace works."""
    found: list[str] = []
    for element in root:
        if not isinstance(element.tag, str) or etree.QName(element).localname != entry:
            continue
        for child in element:
            if isinstance(child.tag, str) and etree.QName(child).localname == "loc":
                text = (child.text or "").strip()
                if text:
                    found.append(text)
    return found
