"""Notion blocks → the Markdown-flavoured text the indexer chunks (pure functions, no I/O).

Block objects are as GET /v1/blocks/{id}/children returns them
(https://developers.notion.com/reference/block); rich text as in
https://developers.notion.com/reference/rich-text. A mention keeps its `plain_text` (the
mentioned page's title, a user's name, a date) and links to its `href`: mentions are
never followed, so a cycle of pages mentioning each other costs nothing. Child pages and
child databases are their own documents: here they are one link line each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Block = dict[str, Any]


@dataclass(slots=True)
class BlockNode:
    block: Block
    children: list[BlockNode] = field(default_factory=list)


def rich_text(parts: Sequence[dict[str, Any]] | None) -> str:
    """Rich text as Markdown: links and mentions as [text](href), code as `code`."""
    out = []
    for part in parts or ():
        text = str(part.get("plain_text") or "")
        if not text:
            continue
        if (part.get("annotations") or {}).get("code"):
            text = f"`{text}`"
        href = part.get("href")
        out.append(f"[{text}]({absolute(href)})" if href else text)
    return "".join(out)


def absolute(href: str) -> str:
    # Links between Notion pages can come as paths ("/0f3a...").
    return f"https://www.notion.so{href}" if href.startswith("/") else href


def page_url(page_id: str) -> str:
    return f"https://www.notion.so/{page_id.replace('-', '')}"


def render(nodes: Sequence[BlockNode]) -> str:
    """The blocks of one page as text: headings start with #, blocks are paragraphs."""
    lines: list[str] = []
    _render(nodes, lines, indent=0)
    text = "\n".join(lines)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.strip() + "\n" if text.strip() else ""


_HEADINGS = {"heading_1": "#", "heading_2": "##", "heading_3": "###"}


def _render(nodes: Sequence[BlockNode], lines: list[str], *, indent: int) -> None:
    pad = "  " * indent
    number = 0
    for node in nodes:
        kind = str(node.block.get("type", ""))
        body = node.block.get(kind) or {}
        number = number + 1 if kind == "numbered_list_item" else 0
        text = rich_text(body.get("rich_text")) if isinstance(body, dict) else ""
        if kind in _HEADINGS:
            lines += ["", f"{_HEADINGS[kind]} {text}", ""]
            _render(node.children, lines, indent=indent)  # toggleable headings
        elif kind in ("bulleted_list_item", "numbered_list_item", "to_do"):
            mark = {"bulleted_list_item": "-", "numbered_list_item": f"{number}."}.get(kind)
            if kind == "to_do":
                mark = "- [x]" if body.get("checked") else "- [ ]"
            lines.append(f"{pad}{mark} {text}")
            _render(node.children, lines, indent=indent + 1)
        elif kind == "code":
            language = body.get("language") or ""
            lines += ["", f"```{language}", _plain(body.get("rich_text")), "```", ""]
        elif kind == "table":
            lines += ["", *_table(node, header=bool(body.get("has_column_header"))), ""]
        elif kind in ("child_page", "child_database"):
            title = body.get("title") or "Untitled"
            lines += ["", f"[{title}]({page_url(str(node.block.get('id', '')))})", ""]
        elif kind in ("bookmark", "embed", "link_preview", "file", "pdf", "image", "video"):
            lines += ["", _linked(kind, body), ""]
        elif kind == "equation":
            lines += ["", f"$${body.get('expression', '')}$$", ""]
        elif kind == "divider":
            lines += ["", "---", ""]
        else:  # paragraph, quote, callout, toggle, containers, and types we do not know
            prefix = "> " if kind in ("quote", "callout") else ""
            icon = (body.get("icon") or {}).get("emoji", "") if kind == "callout" else ""
            if text:
                lines += ["", f"{pad}{prefix}{icon + ' ' if icon else ''}{text}", ""]
            _render(node.children, lines, indent=indent)


def _plain(parts: Sequence[dict[str, Any]] | None) -> str:
    return "".join(str(p.get("plain_text") or "") for p in parts or ())


def _linked(kind: str, body: dict[str, Any]) -> str:
    url = body.get("url") or (body.get("external") or {}).get("url") or ""
    caption = rich_text(body.get("caption")) or kind.replace("_", " ")
    return f"[{caption}]({url})" if url else caption


def _table(node: BlockNode, *, header: bool) -> list[str]:
    rows = [
        [
            rich_text(cell).replace("|", "\\|")
            for cell in (c.block.get("table_row") or {}).get("cells", [])
        ]
        for c in node.children
        if c.block.get("type") == "table_row"
    ]
    if not rows:
        return []
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    head, body = (rows[0], rows[1:]) if header else ([""] * width, rows)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * width]
    return lines + ["| " + " | ".join(r) + " |" for r in body]


def page_title(page: dict[str, Any]) -> str:
    """A page's title: its `title` property (every page has exactly one)."""
    for prop in (page.get("properties") or {}).values():
        if isinstance(prop, dict) and prop.get("type") == "title":
            return _plain(prop.get("title")).strip() or "Untitled"
    return "Untitled"
