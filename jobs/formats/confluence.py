"""Confluence storage format (XHTML with `ac:` and `ri:` elements) to cleaned text.

The storage format is what `GET /rest/api/content/{id}?expand=body.storage` returns
(https://confluence.atlassian.com/doc/confluence-storage-format-790796544.html): XHTML
whose macros are `<ac:structured-macro ac:name="...">` elements, whose links to other
pages are `<ac:link><ri:page .../></ac:link>`, and whose code bodies are CDATA. The
macros are rewritten into plain HTML (a code macro into `<pre>`, a panel into its title
and body, a page link into `<a href>` with an absolute URL), then the shared HTML
renderer (`jobs.formats.html.render_html`) writes the cleaned text.

The page is parsed with Python's `html.parser`, which keeps `ac:`/`ri:` names, CDATA
and self-closing elements as written. Hostile pages fail that page only: a body over
`max_chars`, or XHTML nested deeper than `MAX_DEPTH` (the renderer walks the tree
recursively), raises DocumentError with one line.
"""

from __future__ import annotations

from urllib.parse import quote, quote_plus

from bs4 import BeautifulSoup, NavigableString, Tag

from jobs.errors import DocumentError
from jobs.formats.html import render_html, resolve_against

# Real pages nest a few dozen levels (tables in panels in layouts); the renderer's
# recursion stays far below Python's limit at this depth.
MAX_DEPTH = 120
DEFAULT_MAX_CHARS = 4_000_000

# Macros whose body is prose worth indexing, shown under their title when they have one.
_PANELS = frozenset(
    {"info", "note", "warning", "tip", "panel", "expand", "details", "section", "column",
     "excerpt", "status-panel", "ui-expand"}
)  # fmt: skip
_CODE = frozenset({"code", "noformat"})
_LABELS = {"info": "Info", "note": "Note", "warning": "Warning", "tip": "Tip"}


def convert_confluence_storage(
    storage: str,
    *,
    base_url: str,
    page_url: str | None,
    page_id: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> str:
    """The page body as cleaned text; DocumentError (one line) when it cannot be read.

    `base_url` is the site's root (`https://x.atlassian.net/wiki` on Cloud,
    `https://confluence.example.com` on Data Center); links to other pages and to
    attachments are made absolute against it, other relative links against `page_url`.
    """
    if len(storage) > max_chars:
        raise DocumentError(
            f"page body is {len(storage):,} characters, over the {max_chars:,} limit "
            "(max_page_chars)"
        )
    soup = BeautifulSoup(storage, "html.parser")
    depth = _max_depth(soup)
    if depth > MAX_DEPTH:
        raise DocumentError(f"page XHTML is nested {depth} levels deep, over the {MAX_DEPTH} limit")
    site = base_url.rstrip("/")
    _rewrite(soup, site=site, page_id=page_id)
    return render_html(soup, resolve_link=lambda href: resolve_against(href, page_url or site))


def page_link(site: str, space_key: str, title: str) -> str:
    """A page's address by space and title (`/display/KEY/Title`, on Cloud and Data Center)."""
    return f"{site}/display/{quote(space_key)}/{quote_plus(title)}"


def _max_depth(soup: BeautifulSoup) -> int:
    deepest = 0
    stack: list[tuple[Tag, int]] = [(soup, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            break  # no need to walk the rest of a hostile tree
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, Tag))
    return deepest


def _rewrite(soup: BeautifulSoup, *, site: str, page_id: str | None) -> None:
    """Replace Confluence elements with the plain HTML that says the same thing."""
    # Innermost first (reversed document order), so a macro inside a macro is already
    # plain HTML when its parent is rewritten. Parameters, bodies and `ri:` resources
    # are read by the element that owns them, then the leftovers are cleaned up.
    for element in reversed(soup.find_all(_OWNERS)):
        name = element.name
        if name in ("ac:structured-macro", "ac:macro"):
            _macro(soup, element)
        elif name == "ac:link":
            _link(soup, element, site=site, page_id=page_id)
        elif name == "ac:task-list":
            element.name = "ul"
        elif name == "ac:task":
            _task(soup, element)
        elif name == "ac:emoticon":
            element.replace_with(str(element.get("ac:emoji-fallback") or ""))
        else:
            element.decompose()  # images and placeholders: no text of their own
    for element in reversed(soup.find_all(_is_confluence)):
        if element.name.startswith("ri:") or element.name == "ac:parameter":
            element.decompose()  # a resource outside a link names nothing readable
        else:
            element.unwrap()  # layouts, stray bodies: keep the content
    for time in soup.find_all("time"):
        if time.get("datetime") and not time.get_text(strip=True):
            time.replace_with(str(time["datetime"]))


_OWNERS = [
    "ac:structured-macro", "ac:macro", "ac:link", "ac:task-list", "ac:task", "ac:emoticon",
    "ac:image", "ac:placeholder",
]  # fmt: skip


def _is_confluence(element: Tag) -> bool:
    return bool(element.name) and element.name.startswith(("ac:", "ri:"))


def _task(soup: BeautifulSoup, task: Tag) -> None:
    status = task.find("ac:task-status")
    done = isinstance(status, Tag) and status.get_text(strip=True) == "complete"
    body = task.find("ac:task-body")
    item = soup.new_tag("li")
    item.append(NavigableString("[x] " if done else "[ ] "))
    if isinstance(body, Tag):
        for child in list(body.children):
            item.append(child.extract())
    task.replace_with(item)


def _macro(soup: BeautifulSoup, macro: Tag) -> None:
    kind = str(macro.get("ac:name") or "").lower()
    title = _parameter(macro, "title")
    body = macro.find(["ac:rich-text-body", "ac:plain-text-body"], recursive=False)
    if kind in _CODE:
        pre = soup.new_tag("pre")
        pre.string = _plain_text(body) if isinstance(body, Tag) else ""
        if title:
            block = soup.new_tag("div")
            block.append(_paragraph(soup, title))
            block.append(pre)
            macro.replace_with(block)
        else:
            macro.replace_with(pre)
        return
    if not isinstance(body, Tag):
        macro.decompose()  # toc, children, attachments, jira, ...: no prose of their own
        return
    block = soup.new_tag("div")
    heading = title or (_LABELS.get(kind) if kind in _PANELS else None)
    if heading:
        block.append(_paragraph(soup, heading + ("" if title else ":")))
    if body.name == "ac:plain-text-body":
        pre = soup.new_tag("pre")
        pre.string = _plain_text(body)
        block.append(pre)
    else:
        for child in list(body.children):
            block.append(child.extract())
    macro.replace_with(block)


def _parameter(macro: Tag, name: str) -> str:
    for parameter in macro.find_all("ac:parameter", recursive=False):
        if str(parameter.get("ac:name") or "").lower() == name:
            return " ".join(parameter.get_text().split())
    return ""


def _plain_text(body: Tag) -> str:
    # A plain-text body is one CDATA section; entities in it are meant literally.
    parts = [str(child) for child in body.children if isinstance(child, NavigableString)]
    return "".join(parts)


def _paragraph(soup: BeautifulSoup, text: str) -> Tag:
    paragraph = soup.new_tag("p")
    paragraph.string = text
    return paragraph


def _link(soup: BeautifulSoup, link: Tag, *, site: str, page_id: str | None) -> None:
    target = link.find(lambda tag: tag.name.startswith("ri:"))
    url: str | None = None
    fallback = ""
    if isinstance(target, Tag):
        url, fallback = _resource(target, site=site, page_id=page_id)
    body = link.find(["ac:plain-text-link-body", "ac:link-body"])
    anchor = soup.new_tag("a")
    if url:
        anchor["href"] = url
    if isinstance(body, Tag) and body.get_text(strip=True):
        if body.name == "ac:plain-text-link-body":
            anchor.string = _plain_text(body)
        else:
            for child in list(body.children):
                anchor.append(child.extract())
    else:
        anchor.string = fallback
    link.replace_with(anchor)


def _resource(target: Tag, *, site: str, page_id: str | None) -> tuple[str | None, str]:
    """The absolute URL a `ri:` resource names, and the text to show when the link has none."""
    name = target.name
    if name == "ri:page":
        title = str(target.get("ri:content-title") or "")
        space = str(target.get("ri:space-key") or "")
        return (page_link(site, space, title) if title and space else None), title
    if name == "ri:url":
        value = str(target.get("ri:value") or "")
        return value or None, value
    if name == "ri:attachment":
        filename = str(target.get("ri:filename") or "")
        owner = target.find("ri:page")
        if owner is None and page_id and filename:
            return f"{site}/download/attachments/{quote(page_id)}/{quote(filename)}", filename
        return None, filename
    if name == "ri:user":
        who = target.get("ri:username") or target.get("ri:userkey") or "user"
        return None, f"@{who}"
    if name == "ri:space":
        key = str(target.get("ri:space-key") or "")
        return (f"{site}/display/{quote(key)}" if key else None), key
    if name == "ri:blog-post":
        return None, str(target.get("ri:content-title") or "")
    return None, ""


__all__ = ["MAX_DEPTH", "convert_confluence_storage", "page_link"]
