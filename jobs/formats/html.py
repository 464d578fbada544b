"""HTML to cleaned text: local `.html` files, and the last step of the Markdown and rst converters.

`render_html` walks a parsed tree and writes the cleaned-text convention: `#` heading
lines, one line per list item and per table row (cells joined by " | "), blocks
separated by a blank line, links as `[text](absolute-url)`, `<br>` as a newline, and
`<details>` as its summary followed by its body. Scripts, styles, navigation and
media are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urljoin, urlsplit

from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.element import PreformattedString

from jobs.formats import ConvertedDocument
from jobs.formats.plaintext import tidy_text

LinkResolver = Callable[[str], str | None]
"""Maps an `href` as written to an absolute URL, or None when it cannot be made absolute."""

DROPPED = frozenset(
    {
        "script", "style", "nav", "noscript", "template", "svg", "iframe", "head",
        "img", "picture", "video", "audio", "object", "embed", "canvas", "map",
        "input", "select", "textarea", "option",
    }
)  # fmt: skip
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_CONTAINERS = frozenset(
    {
        "html", "body", "div", "section", "article", "main", "header", "footer", "aside",
        "blockquote", "details", "summary", "figure", "figcaption", "dl", "dt", "dd", "p",
        "address", "form", "fieldset", "legend", "center", "caption", "li", "hgroup",
        "search",
    }
)  # fmt: skip
_BLOCKS = _CONTAINERS | _HEADINGS.keys() | {"ul", "ol", "table", "pre", "hr"}
_SAFE_SCHEMES = frozenset({"http", "https", "mailto", "ftp", "tel"})
_SPACES = re.compile(r"\s+")


def render_html(root: Tag, *, resolve_link: LinkResolver) -> str:
    """Render the content of `root` as cleaned text (see the module docstring)."""
    return tidy_text("\n\n".join(_Renderer(resolve_link).blocks(root)))


def resolve_against(href: str, page_url: str | None) -> str | None:
    """Make `href` absolute against the page's URL; None if it cannot be, or is unsafe.

    A malformed address (`http://[x`, which urllib rejects as an invalid IPv6 host)
    gives None: the link's text stays, the link goes.
    """
    scheme = url_scheme(href)
    if scheme is None:
        return None
    if scheme:
        return href if scheme in _SAFE_SCHEMES else None
    if href.startswith("//"):
        return "https:" + href
    try:
        return urljoin(page_url, href) if page_url else None
    except ValueError:
        return None


def url_scheme(url: str) -> str | None:
    """The URL's scheme, lower-cased ("" for a relative URL), or None if it is malformed."""
    try:
        return urlsplit(url).scheme.lower()
    except ValueError:
        return None


def convert_html(raw: str, *, page_url: str | None) -> ConvertedDocument:
    """Convert an HTML file; relative links are resolved against `page_url` (or `<base>`)."""
    soup = BeautifulSoup(raw, "lxml")
    base = soup.find("base", href=True)
    if isinstance(base, Tag):
        page_url = resolve_against(str(base["href"]), page_url) or page_url
    body = soup.body or soup
    text = render_html(body, resolve_link=lambda href: resolve_against(href, page_url))
    return ConvertedDocument(title=_html_title(soup), text=text, metadata=_html_metadata(soup))


def _html_title(soup: BeautifulSoup) -> str:
    for candidate in (soup.title, soup.find("h1")):
        if candidate is not None:
            title = _SPACES.sub(" ", candidate.get_text()).strip()
            if title:
                return title
    return ""


def _html_metadata(soup: BeautifulSoup) -> dict[str, str]:
    meta = soup.find("meta", attrs={"name": "description"})
    if isinstance(meta, Tag) and meta.get("content"):
        return {"description": _SPACES.sub(" ", str(meta["content"])).strip()}
    return {}


class _Renderer:
    """One walk over a tree; block methods return finished blocks, inline ones strings."""

    def __init__(self, resolve_link: LinkResolver) -> None:
        self._resolve_link = resolve_link

    def blocks(self, element: Tag) -> list[str]:
        """The element's content as blocks; loose inline content becomes a paragraph."""
        blocks: list[str] = []
        pending: list[str] = []
        for child in element.children:
            if isinstance(child, Tag) and child.name in _BLOCKS:
                _flush_paragraph(pending, blocks)
                blocks.extend(self._block(child))
            else:
                pending.append(self.inline(child))
        _flush_paragraph(pending, blocks)
        return [block for block in blocks if block]

    def _block(self, element: Tag) -> list[str]:
        name = element.name
        if name in _HEADINGS:
            text = _one_line(self.inline(element))
            return [f"{'#' * _HEADINGS[name]} {text}"] if text else []
        if name in ("ul", "ol"):
            return [self._list(element, ordered=name == "ol")]
        if name == "table":
            return [self._table(element)]
        if name == "pre":
            return [_fenced(element.get_text())]
        if name == "hr":
            return []
        return self.blocks(element)

    def _list(self, element: Tag, *, ordered: bool) -> str:
        number = _list_start(element)
        items: list[str] = []
        for item in element.find_all("li", recursive=False):
            body = "\n".join(self.blocks(item))
            if not body.strip():
                continue
            marker = f"{number}. " if ordered else "- "
            items.append(_indent_item(marker, body))
            number += 1
        return "\n".join(items)

    def _table(self, table: Tag) -> str:
        rows: list[str] = []
        for row in table.find_all("tr"):
            if row.find_parent("table") is not table:
                continue  # a nested table's rows are rendered inside their cell
            cells = [self._cell(cell) for cell in row.find_all(["th", "td"], recursive=False)]
            if any(cells):
                rows.append(" | ".join(cells))
        return "\n".join(rows)

    def _cell(self, cell: Tag) -> str:
        return _one_line(" ".join(self.blocks(cell)))

    def inline(self, node: object) -> str:
        """The node as inline text: whitespace collapsed, `<br>` as a newline."""
        if isinstance(node, PreformattedString):
            return ""  # comments, CDATA, doctypes, processing instructions
        if isinstance(node, NavigableString):
            return _SPACES.sub(" ", str(node))
        if not isinstance(node, Tag) or node.name in DROPPED:
            return ""
        if node.name == "br":
            return "\n"
        if node.name == "a":
            return self._link(node)
        return "".join(self.inline(child) for child in node.children)

    def _link(self, anchor: Tag) -> str:
        text = "".join(self.inline(child) for child in anchor.children)
        label = _one_line(text)
        if not label:
            return ""
        href = str(anchor.get("href") or "").strip()
        url = self._resolve_link(href) if href else None
        rendered = label if url is None else _markdown_link(label, url)
        # Spaces inside the anchor's edges belong to the sentence around it.
        lead = " " if text[0].isspace() else ""
        trail = " " if text[-1].isspace() else ""
        return f"{lead}{rendered}{trail}"


def _markdown_link(label: str, url: str) -> str:
    """`[label](url)`, or just the address when the label already is the address."""
    label = label.removeprefix("mailto:")
    if url.startswith("mailto:") and label == url.removeprefix("mailto:").split("?", 1)[0]:
        return label
    if label == url:
        return url
    # A space or a parenthesis would end a Markdown link early.
    escaped = url.replace(" ", "%20").replace("(", "%28").replace(")", "%29")
    return f"[{label}]({escaped})"


def _flush_paragraph(pending: list[str], blocks: list[str]) -> None:
    lines = (_SPACES.sub(" ", line).strip() for line in "".join(pending).split("\n"))
    paragraph = "\n".join(line for line in lines if line)
    if paragraph:
        blocks.append(paragraph)
    pending.clear()


def _one_line(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def _indent_item(marker: str, body: str) -> str:
    first, *rest = body.split("\n")
    pad = " " * len(marker)
    return "\n".join([marker + first, *(pad + line if line else line for line in rest)])


def _list_start(element: Tag) -> int:
    try:
        return int(str(element.get("start", "1")))
    except ValueError:
        return 1


def _fenced(code: str) -> str:
    lines = [line.rstrip() for line in code.strip("\n").split("\n")]
    return "```\n" + "\n".join(lines) + "\n```" if any(lines) else ""
