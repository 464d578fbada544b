"""Turn a fetched page body into document text: decode the bytes, keep the page's main content.

The text follows the convention of `jobs.documents.SourceDocument`, which the chunker relies on:
headings are lines starting with `# `, blocks are separated by a blank line, links are
`[text](absolute url)`, and there is no HTML markup. Main-content extraction is trafilatura's;
this module prepares the tree for it (scripts and styles removed so their text can never leak,
links made absolute, emphasis unwrapped) and tidies its Markdown afterwards.

`read_page` and `extract_page` are CPU-bound: callers on the event loop run them in a thread.
"""

from __future__ import annotations

import codecs
import re
from configparser import ConfigParser
from dataclasses import dataclass
from urllib.parse import urldefrag, urljoin

import lxml.html
import trafilatura
import trafilatura.settings
from lxml import etree

from jobs.errors import DocumentError

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain", "text/markdown"})

_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.IGNORECASE
)
_META_PRESCAN_BYTES = 1024
# Browsers decode pages labelled latin-1 or ascii as windows-1252 (WHATWG Encoding), and so
# does every page author who typed “smart quotes” into one.
_WINDOWS_1252_LABELS = frozenset({"iso8859-1", "ascii"})
_CP1252_UNDEFINED = {0xDC00 + byte: byte for byte in (0x81, 0x8D, 0x8F, 0x90, 0x9D)}

_NEVER_TEXT = ("script", "style", "noscript", "template")
_EMPHASIS = ("b", "strong", "i", "em", "u", "mark", "s", "strike", "del", "ins", "sup", "sub")
_LINK_SCHEMES = ("http:", "https:", "mailto:")

_CODE_SPANS = re.compile(r"(```.*?```|(?<!\\)`[^`\n]+`)", re.DOTALL)
_ESCAPED_INLINE = re.compile(r"(\\+)([*_`~\[\]<])")
_BLANK_RUNS = re.compile(r"\n{3,}")


class UnreadablePage(DocumentError):
    """The body cannot be turned into text; `reason` says why in words a person can act on."""


@dataclass(frozen=True, slots=True)
class PageContent:
    """The readable part of a page. `text` is empty when nothing readable remains."""

    text: str
    title: str | None
    canonical: str | None


def read_page(body: bytes, *, content_type: str, charset: str | None, url: str) -> PageContent:
    """A fetched body of one of `HTML_TYPES` or `TEXT_TYPES` as document text.

    Raises `UnreadablePage` when a declared charset does not decode it.
    """
    html = content_type in HTML_TYPES
    text = decode_body(body, header_charset=charset, html=html)
    if html:
        return extract_page(text, url=url)
    return PageContent(text=plain_text(text), title=None, canonical=None)


def decode_body(body: bytes, *, header_charset: str | None, html: bool) -> str:
    """Decode with the declared charset (BOM, then HTTP header, then `<meta>` for HTML).

    Only an undeclared charset falls back to UTF-8 with replacement characters; a declared one
    that does not decode the bytes raises `UnreadablePage`.
    """
    declared = _bom_charset(body) or header_charset or (_meta_charset(body) if html else None)
    if declared is None:
        return body.decode("utf-8", errors="replace")
    try:
        codec = codecs.lookup(declared).name
    except LookupError as exc:
        raise UnreadablePage(f"the page declares an unknown character set: {declared}") from exc
    try:
        return _decode(body, codec)
    except UnicodeDecodeError as exc:
        raise UnreadablePage(f"the page is not valid {declared} text") from exc


def _bom_charset(body: bytes) -> str | None:
    return next((name for bom, name in _BOMS if body.startswith(bom)), None)


def _meta_charset(body: bytes) -> str | None:
    match = _META_CHARSET.search(body[:_META_PRESCAN_BYTES])
    return match.group(1).decode("ascii") if match else None


def _decode(body: bytes, codec: str) -> str:
    if codec not in _WINDOWS_1252_LABELS:
        return body.decode(codec)
    # windows-1252 leaves five bytes undefined; WHATWG maps them to the same code points.
    return body.decode("cp1252", errors="surrogateescape").translate(_CP1252_UNDEFINED)


def plain_text(text: str) -> str:
    """A `text/plain` (or Markdown) body as document text: newlines normalised, edges trimmed."""
    return _tidy(text.replace("\r\n", "\n").replace("\r", "\n"))


def extract_page(html: str, *, url: str) -> PageContent:
    """The main content of an HTML page at `url`, with its title and declared canonical URL."""
    tree = _parse(html)
    if tree is None:
        return PageContent(text="", title=None, canonical=None)
    _prepare(tree, url=url, base=_base_url(tree, url))
    title, canonical = _title(tree), _canonical(tree)
    _wrap_bare_body(tree)
    markdown = trafilatura.extract(
        tree,
        url=url,
        output_format="markdown",
        include_formatting=True,  # needed for `#` headings; emphasis was unwrapped in _prepare
        include_links=True,
        include_tables=True,
        include_images=False,
        include_comments=False,
        favor_recall=True,  # a knowledge base would rather keep a stray line than lose one
        config=_trafilatura_config(),
    )
    return PageContent(
        text=_tidy(_unescape_prose(markdown or "")), title=title, canonical=canonical
    )


def _parse(html: str) -> lxml.html.HtmlElement | None:
    # Re-encoded with an explicit parser encoding so a stale <meta charset> cannot override
    # the charset already used to decode the body.
    parser = lxml.html.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True)
    try:
        return lxml.html.document_fromstring(html.encode("utf-8"), parser=parser)
    except etree.ParserError:  # "Document is empty"
        return None


def _base_url(tree: lxml.html.HtmlElement, url: str) -> str:
    base = tree.find(".//base[@href]")
    if base is None:
        return url
    try:
        return urljoin(url, base.get("href", ""))
    except ValueError:  # a malformed <base href>: resolve against the page itself
        return url


def _prepare(tree: lxml.html.HtmlElement, *, url: str, base: str) -> None:
    """Remove what must never become text, make links absolute, keep links to elsewhere.

    Links within the page (a heading's own `#anchor`) and `javascript:` links become plain
    text: as `[text](url)` they would only add noise to the chunk.
    """
    etree.strip_elements(tree, *_NEVER_TEXT, with_tail=False)
    etree.strip_tags(tree, *_EMPHASIS)
    tree.make_links_absolute(base, resolve_base_href=False, handle_failures="discard")
    page = urldefrag(url).url
    for anchor in list(tree.iter("a")):
        href = anchor.get("href", "")
        if not href.lower().startswith(_LINK_SCHEMES) or urldefrag(href).url == page:
            anchor.drop_tag()


def _wrap_bare_body(tree: lxml.html.HtmlElement) -> None:
    """Put a page without `<main>`/`<article>` into a `<main>`.

    trafilatura's main extractor looks for such a container; without one it falls back to
    heuristics that drop the headings (or keep the menu) of short pages, which team docs are.
    """
    if tree.xpath("//main|//article|//*[@role='main']"):
        return
    body = tree.find("body")
    if body is None:
        return
    main = lxml.html.Element("main")
    main.text, body.text = body.text, None
    main.extend(list(body))
    body.append(main)


def _trafilatura_config() -> ConfigParser:
    """trafilatura's defaults, except that a short main text is kept as it is.

    By default an extraction under 250 characters is replaced by a dump of the whole page,
    menus included; a two-line page is still a document here.
    """
    config = trafilatura.settings.use_config()
    config.set("DEFAULT", "MIN_EXTRACTED_SIZE", "1")
    return config


def _title(tree: lxml.html.HtmlElement) -> str | None:
    candidates = (
        tree.xpath("//meta[@property='og:title']/@content"),
        tree.xpath("//title//text()"),
        tree.xpath("(//h1)[1]//text()"),
    )
    for texts in candidates:
        title = " ".join(" ".join(str(text) for text in texts).split())
        if title:
            return title
    return None


def _canonical(tree: lxml.html.HtmlElement) -> str | None:
    for link in tree.iter("link"):
        if "canonical" in link.get("rel", "").lower().split() and link.get("href"):
            return link.get("href")
    return None


def _unescape_prose(markdown: str) -> str:
    """Undo trafilatura's backslash escapes of `* _ ` ~ [ ] <` outside code.

    The words must read as they do on the page: quotes are checked verbatim against chunk text
    and shown in Slack, where `snake\\_case` would be wrong. Escapes of block markers at a line
    start (`\\#`, `\\-`) stay, so a paragraph is never mistaken for a heading or a list.
    """
    parts = _CODE_SPANS.split(markdown)
    parts[::2] = [
        _ESCAPED_INLINE.sub(lambda m: "\\" * (len(m[1]) // 2) + m[2], part) for part in parts[::2]
    ]
    return "".join(parts)


def _tidy(text: str) -> str:
    """Trailing spaces off, code fences set apart by blank lines, at most one blank line."""
    lines: list[str] = []
    in_code = False
    for line in text.split("\n"):
        line = line.rstrip()
        fence = line.startswith("```")
        if fence and not in_code and lines and lines[-1]:
            lines.append("")  # before an opening fence
        if not fence and lines and lines[-1] == "```" and not in_code and line:
            lines.append("")  # after a closing fence
        in_code ^= fence
        lines.append(line)
    return _BLANK_RUNS.sub("\n\n", "\n".join(lines)).strip()
