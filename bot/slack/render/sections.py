"""Lines of mrkdwn packed into section-sized texts, and the lines several messages share."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime

from agent.answer import Citation, PageRead
from bot.slack.render.limits import SECTION_TEXT
from bot.slack.render.mrkdwn import escape, link, shorten, slack_len, split


def line_sections(lines: Iterable[str], *, limit: int = SECTION_TEXT) -> list[str]:
    """Join lines into as few texts of at most `limit` as keep every line whole; a line
    longer than `limit` alone is cut (bot.slack.render.mrkdwn.split) across texts of its own."""
    texts: list[str] = []
    current = ""
    for line in lines:
        for piece in split(line, limit) if slack_len(line) > limit else [line]:
            joined = f"{current}\n{piece}" if current else piece
            if slack_len(joined) <= limit:
                current = joined
                continue
            texts.append(current)
            current = piece
    if current:
        texts.append(current)
    return texts


def source_line(citation: Citation) -> str:
    """`[1] <url|Title> · Section · updated 2024-05-01`, the title linked when it can be."""
    title = shorten(citation.title, 150) or shorten(citation.uri, 150) or "untitled"
    parts = [f"[{citation.number}] {link(citation.url, title)}"]
    if citation.section:
        parts.append(escape(shorten(citation.section, 150)))
    updated = cited_date(citation.updated_at)
    if updated:
        parts.append(f"updated {updated}")
    return " · ".join(parts)


CLOSEST_TITLE = "*Pages that came closest* (not enough to answer from)"


def closest_lines(pages: Iterable[PageRead]) -> list[str]:
    """The pages that came closest to an unanswered question, as `• <url|Title> · Section`
    under their title line; none when there are none."""
    lines = []
    for page in pages:
        title = shorten(page.title, 150) or shorten(page.uri, 150) or "untitled"
        section = f" · {escape(shorten(page.section, 150))}" if page.section else ""
        lines.append(f"• {link(page.url, title)}{section}")
    return [CLOSEST_TITLE, *lines] if lines else []


def cited_date(when: object) -> str | None:
    """The day a source was last updated, from a datetime or its ISO text (stored runs)."""
    if isinstance(when, str):
        try:
            when = datetime.fromisoformat(when)
        except ValueError:
            return None
    if isinstance(when, datetime):
        return when.date().isoformat()
    if isinstance(when, date):
        return when.isoformat()
    return None


def capped_lines(lines: list[str], *, limit: int, more: str = "… and {count} more") -> str:
    """As many whole lines as fit in `limit` (the first is the title), then how many did not."""
    kept: list[str] = []
    for index, line in enumerate(lines):
        rest = len(lines) - index - 1
        tail = [more.format(count=rest)] if rest else []
        if slack_len("\n".join([*kept, line, *tail])) <= limit:
            kept.append(line)
            continue
        kept.append(more.format(count=len(lines) - index))
        break
    return "\n".join(kept)
