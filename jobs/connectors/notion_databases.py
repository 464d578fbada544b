"""A Notion database as one document: its title, description and a table of its rows.

Rows are pages and are documents of their own; this document is what answers "what is
in the Projects database" or "which projects are blocked": the database's description,
then one table line per row (its title and its other properties as plain text), capped
at `max_rows` rows and `MAX_COLUMNS` columns. Pure functions over the API's objects:
the data source (https://developers.notion.com/reference/data-source) and the pages a
query returns (https://developers.notion.com/reference/page-property-values).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jobs.connectors.notion_blocks import rich_text

MAX_COLUMNS = 8  # the title and the first seven other properties, in schema order
MAX_CELL = 200  # characters of one cell


def plain(parts: Sequence[Mapping[str, Any]] | None) -> str:
    return "".join(str(part.get("plain_text") or "") for part in parts or ())


def columns(schema: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The property names shown: the title property first, then the schema's order."""
    title = [name for name, prop in schema.items() if prop.get("type") == "title"]
    others = [name for name, prop in schema.items() if prop.get("type") != "title"]
    return (title + others)[:MAX_COLUMNS]


def property_text(value: Mapping[str, Any]) -> str:
    """One property value as a reader would say it; empty for what has no plain form."""
    kind = str(value.get("type") or "")
    inner = value.get(kind)
    if inner is None:
        return ""
    if kind in ("title", "rich_text"):
        return plain(inner)
    if kind in ("select", "status"):
        return str(inner.get("name") or "")
    if kind == "multi_select":
        return ", ".join(str(option.get("name") or "") for option in inner)
    if kind == "date":
        end = inner.get("end")
        return str(inner.get("start") or "") + (f" to {end}" if end else "")
    if kind == "checkbox":
        return "yes" if inner else "no"
    if kind in ("people", "created_by", "last_edited_by"):
        people = inner if isinstance(inner, list) else [inner]
        return ", ".join(str(person.get("name") or "") for person in people if person.get("name"))
    if kind == "unique_id":
        prefix = inner.get("prefix")
        return f"{prefix}-{inner.get('number')}" if prefix else str(inner.get("number") or "")
    if kind == "formula":
        return property_text(inner)
    if kind in ("number", "url", "email", "phone_number", "created_time", "last_edited_time"):
        return str(inner)
    if kind in ("string", "boolean"):  # a formula's result
        return str(inner) if kind == "string" else ("yes" if inner else "no")
    return ""  # relations, rollups, files: not plain text


def row_lines(properties: Mapping[str, Any]) -> list[str]:
    """A row's properties besides its title, one "Name: value" line each (empty ones left
    out), for the row's own document."""
    lines = []
    for name, value in list(properties.items())[: MAX_COLUMNS * 4]:
        if not isinstance(value, dict) or value.get("type") == "title":
            continue
        shown = _cell(property_text(value))
        if shown:
            lines.append(f"{_cell(name)}: {shown}")
    return lines


def database_text(
    *,
    title: str,
    description: Sequence[dict[str, Any]] | None,
    schema: Mapping[str, Mapping[str, Any]],
    rows: Sequence[Mapping[str, Any]],
    more: bool,
) -> str:
    """The document's text. `more`: the database has rows beyond `rows` (the cap)."""
    lines = [f"# {title}", ""]
    about = rich_text(description)
    if about.strip():
        lines += [about.strip(), ""]
    shown = columns(schema)
    count = f"{len(rows)}{'+' if more else ''}"
    lines += [f"{title} is a database of {count} row(s); columns: {', '.join(shown)}.", ""]
    if rows and shown:
        lines.append("| " + " | ".join(_cell(name) for name in shown) + " |")
        lines.append("|" + "---|" * len(shown))
        for row in rows:
            values = row.get("properties") or {}
            cells = [_cell(property_text(values.get(name) or _title_of(values, name, schema)))
                     for name in shown]  # fmt: skip
            lines.append("| " + " | ".join(cells) + " |")
    if more:
        lines += ["", f"(The first {len(rows)} rows are shown.)"]
    return "\n".join(lines).strip() + "\n"


def _title_of(
    values: Mapping[str, Any], name: str, schema: Mapping[str, Mapping[str, Any]]
) -> Mapping[str, Any]:
    """A row's title value, which the API keys by the title property's name; tolerate a
    row keyed by the property id `title`."""
    if (schema.get(name) or {}).get("type") != "title":
        return {}
    for value in values.values():
        if isinstance(value, dict) and value.get("type") == "title":
            return value
    return {}


def _cell(text: str) -> str:
    flat = " ".join(text.split()).replace("|", "\\|")
    return flat if len(flat) <= MAX_CELL else flat[: MAX_CELL - 1] + "…"
