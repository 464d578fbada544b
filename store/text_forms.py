"""Text as a reader sees it: link text for Markdown links, accents and case folded, a
title without its trailing parenthetical. One module, so the keyword index, the
question analysis, the evidence checks and grounding all read text the same way.
"""

from __future__ import annotations

import re
import unicodedata

# `[text](target)`: a reader sees `text`. Empty link texts (`[](x)`) count too, so a
# quote can be checked against a chunk whatever its links look like.
MARKDOWN_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\s]*\)")
BARE_URL = re.compile(r"https?://\S+")
# A title's trailing parenthetical ("Leave (LWOP)", "Mercury (planet)", "Report (2025)")
# qualifies it; texts name the thing without it.
TRAILING_PARENTHETICAL = re.compile(r"\s*\([^)]*\)\s*$")
# A word as a reader counts it: letters and digits, with its apostrophes and hyphens
# ("don't", "part-time", "Rely’s").
WORD = re.compile(r"[\w’'-]+")
# Letters NFKD leaves whole, though a reader types them without the stroke.
_STROKED = str.maketrans({"ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D"})


def link_text(text: str) -> str:
    """`text` with each Markdown link replaced by its link text."""
    return MARKDOWN_LINK.sub(r"\1", text)


def plain_text(text: str) -> str:
    """Link text instead of `[text](url)`, and bare URLs dropped."""
    return BARE_URL.sub(" ", link_text(text))


def fold_accents(text: str) -> str:
    """ "Rély" as "Rely", "Øresund" as "Oresund": a Slack user rarely types the accent."""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text.translate(_STROKED))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def fold(text: str) -> str:
    """Case and accents folded."""
    return fold_accents(text.casefold())


def plain_title(title: str) -> str:
    """A title as texts name it, without its trailing parenthetical."""
    return TRAILING_PARENTHETICAL.sub("", title).strip()
