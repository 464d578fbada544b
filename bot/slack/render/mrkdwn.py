"""Slack mrkdwn from untrusted text: escaping, checked links, mentions, and cutting at boundaries.

Every string a document, a user or the agent wrote goes through `escape` or `inline` before
it enters a text object. Slack treats `&`, `<` and `>` as control characters, so they become
`&amp;`, `&lt;` and `&gt;`; after that no text can form `<!channel>`, `<!here>`,
`<!everyone>`, `<@U…>`, `<#C…>`, `<!subteam^…>`, `<!date…>` or a `<url|label>` link. The
only control sequences in a message are the ones built here:

- links (`link`): http, https or mailto targets only, with `|`, `<`, `>` and `"`
  percent-encoded and `&` escaped; a label that names another place than the target
  (`[https://bank.example](https://evil.example)`) is replaced by the target itself, and a
  `|` in a label becomes `｜` (U+FF5C) so it can never be read as the separator; in
  document text, a label that reads as a citation marker (`[1](https://evil.example)`)
  is replaced by the target too, so only the bot's own `[n]` links look like citations;
- mentions (`user_mention`, `channel_mention`, `group_mention`) of ids that look like Slack
  ids, which callers take from Slack payloads or configuration, never from text.

Lengths are counted in UTF-16 code units (`slack_len`): never fewer than Python's code
points, so a text within our count is within Slack's however it counts.
"""

from __future__ import annotations

import bisect
import re
from urllib.parse import urlsplit

# C0 and C1 controls (but tab and newline), bidirectional overrides and isolates (they can
# make text read other than it is), and lone surrogates (they cannot be sent as UTF-8).
_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_URL_QUOTES = str.maketrans({"|": "%7C", "<": "%3C", ">": "%3E", '"': "%22"})
_SCHEMES = frozenset({"http", "https", "mailto"})
# A Markdown link, allowing one level of parentheses inside the target (Wikipedia-style).
_MARKDOWN_LINK = re.compile(r"\[([^\[\]\n]+)\]\(((?:[^()\s]|\([^()\s]*\))+)\)")
# What looks like a place: a URL, or a bare domain such as "bank.example.com/login".
_PLACE = re.compile(
    r"^(?:(?:[a-z][a-z0-9+.-]*://|mailto:)\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
    r"|(?:[\w-]+\.)+[a-z]{2,}(?:[/:?#]\S*)?)$"
)
# Pieces a cut may never fall inside: entities and the links built here.
_ATOMS = re.compile(r"&(?:amp|lt|gt);|<[^<>\n]*>")
_SENTENCE_END = re.compile(r"[.!?。！？…][)\]\"'”’»]*\s+")
_SLACK_ID = re.compile(r"^[A-Z0-9]{3,30}$")
# A label that would pass for one of the bot's citations: 1, [1], (2), ^3.
_CITATION_MARK = re.compile(r"^\^?[\[(]?\d{1,4}[\])]?$")

MAX_URL = 2000  # escaped; Block Kit allows 3,000 in a button URL, sections hold 3,000 in all
MAX_LABEL = 150  # raw characters of a link label; escaped it stays under 750
ELLIPSIS = "…"


def slack_len(text: str) -> int:
    """Length in UTF-16 code units, the most any Slack limit can count."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def clean(text: str) -> str:
    """`text` without the invisible characters that could hide or reorder what it says."""
    return _INVISIBLE.sub("", text)


def escape(text: str) -> str:
    """Untrusted text as inert mrkdwn: `&`, `<`, `>` as entities, invisible controls gone."""
    return clean(text).translate(_ESCAPES)


def safe_url(url: str | None) -> str | None:
    """`url` as it may stand inside a Slack link, or None when it must not be linked."""
    if not url:
        return None
    url = url.strip()
    if _INVISIBLE.search(url) or any(ch.isspace() for ch in url):
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _SCHEMES or (scheme == "mailto" and not parts.path):
        return None
    if scheme != "mailto" and not host:
        return None
    quoted = url.translate(_URL_QUOTES).replace("&", "&amp;")
    return quoted if len(quoted) <= MAX_URL else None


def link(url: str | None, label: str, *, show_host: bool = False) -> str:
    """A Slack link to `url` showing `label`; just the escaped label when `url` is unsafe.

    A label that is itself another place is replaced by the target; a label that merely
    mentions another place keeps its words and is followed by the target's host, and so
    is any label other than the URL itself with `show_host` (document text: a document
    must not dress `evil.example` as "the HR portal").
    """
    target = safe_url(url)
    shown = clean(label).strip()
    if target is None or len(shown) > MAX_LABEL:
        return escape(label)
    url = (url or "").strip()
    if not shown or _names_another_place(shown, url):
        shown = url if len(url) <= MAX_LABEL else url[: MAX_LABEL - 1] + ELLIPSIS
    words = [word.strip(".,;:!?()\"'“”") for word in shown.split()]
    mentioned = len(words) > 1 and any(_names_another_place(word, url) for word in words)
    hidden = show_host and shown != url and _host(shown) != _host(url)
    suffix = f" ({escape(_host(url) or url)})" if mentioned or hidden else ""
    return f"<{target}|{escape(shown).replace('|', '｜')}>{suffix}"


def inline(text: str) -> str:
    """Document text as mrkdwn: escaped, with its Markdown links made real, checked links."""
    pieces: list[str] = []
    done = 0
    for match in _MARKDOWN_LINK.finditer(text):
        pieces.append(escape(text[done : match.start()]))
        label = "" if _CITATION_MARK.match(match[1].strip()) else match[1]
        # An empty label shows the target itself; any other shows the target's host too.
        pieces.append(link(match[2], label, show_host=True))
        done = match.end()
    pieces.append(escape(text[done:]))
    return "".join(pieces)


def plain(text: str) -> str:
    """Document text for a terminal or a notification: Markdown links as their labels."""
    return clean(_MARKDOWN_LINK.sub(lambda match: match[1], text))


def excerpt(text: str, limit: int) -> str:
    """A short, single-line, escaped excerpt of document text (links as their labels)."""
    return escape(shorten(plain(text), limit))


def user_mention(user_id: str | None) -> str | None:
    """`<@U…>` for a Slack user id (U… or W…), None for anything that is not one."""
    return f"<@{user_id}>" if _is_id(user_id, "UW") else None


def channel_mention(channel_id: str | None) -> str | None:
    return f"<#{channel_id}>" if _is_id(channel_id, "CG") else None


def group_mention(group_id: str | None) -> str | None:
    """`<!subteam^S…>`: the one ping the bot may send, for the configured user group."""
    return f"<!subteam^{group_id}>" if _is_id(group_id, "S") else None


def _is_id(value: str | None, prefixes: str) -> bool:
    return value is not None and value[:1] in tuple(prefixes) and bool(_SLACK_ID.match(value))


def _names_another_place(label: str, url: str) -> bool:
    """Whether `label` reads as a URL or domain other than where `url` goes."""
    if not _PLACE.match(label.lower()):
        return False
    if label.strip() == url.strip():
        return False
    return _host(label) != _host(url)


def _host(place: str) -> str:
    """The host a place names; for an email address, the address."""
    lowered = place.lower().removeprefix("mailto:")
    if "@" in lowered and "/" not in lowered:
        return lowered.split("?")[0]
    candidate = place if "://" in place else f"//{place}"
    try:
        host = urlsplit(candidate).hostname or ""
    except ValueError:
        return ""
    return host.removeprefix("www.")


def shorten(text: str, limit: int) -> str:
    """Plain `text` cut to `limit` characters at a word boundary, with an ellipsis."""
    text = " ".join(clean(text).split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip() + ELLIPSIS


def split(text: str, limit: int, *, first: int | None = None) -> list[str]:
    """Cut mrkdwn into pieces of at most `limit` (slack_len), never inside an entity or a link;
    the first piece at most `first` when given (to fill what is left of a section).

    Each cut falls at the last sentence end that leaves the piece at least a third full,
    else at the last space or line break, else (one unbroken word) at any safe place.
    """
    units = [0]
    for ch in text:
        units.append(units[-1] + (2 if ord(ch) > 0xFFFF else 1))
    blocked = _inside_atoms(text)
    pieces: list[str] = []
    start = 0
    room = limit if first is None else first
    while units[-1] - units[start] > room:
        end = max(start + 1, bisect.bisect_right(units, units[start] + room) - 1)
        cut = _cut(text, blocked, start, end, minimum=start + max(1, (end - start) // 3))
        piece = text[start:cut].strip()
        if piece or pieces:
            pieces.append(piece)
        start, room = cut, limit
    pieces.append(text[start:].strip())
    return [piece for piece in pieces if piece] or [""]


def _inside_atoms(text: str) -> set[int]:
    """String positions a cut may not fall at: strictly inside an entity or a link."""
    return {i for m in _ATOMS.finditer(text) for i in range(m.start() + 1, m.end())}


def _cut(text: str, blocked: set[int], start: int, end: int, *, minimum: int) -> int:
    window = text[start:end]
    for pattern in (_SENTENCE_END, re.compile(r"\s+")):
        for match in reversed(list(pattern.finditer(window))):
            at = start + match.end()
            if at >= minimum and at not in blocked:
                return at
    for at in range(end, start, -1):
        if at not in blocked:
            return at
    return end  # unreachable while atoms are shorter than `limit`
