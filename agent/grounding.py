"""Mechanical grounding: a quote counts only if it occurs in the chunk it cites."""

from __future__ import annotations

import re

_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Whitespace collapsed and case folded, so line wrapping or case never fails a quote."""
    return _SPACE.sub(" ", text).strip().casefold()


def quote_occurs(quote: str, chunk_text: str) -> bool:
    """True when `quote` (non-empty) occurs in `chunk_text` after normalisation."""
    needle = normalise(quote)
    return bool(needle) and needle in normalise(chunk_text)
