"""Mechanical grounding: a quote counts only if it occurs in the chunk it cites, as stored.

`quote_occurs` is the check; `GroundingVerifier` applies it after synthesis to every
claim, against the cited chunk's text fetched from Postgres by chunk id, so what is
verified is the store and never the string the quote was cut from (nor whatever a
reasoner says the chunk holds).

The comparison forgives what a faithful quote may change and nothing else: case, white
space (line wrapping, indentation), punctuation (curly or straight quotes, dashes, list
markers, emphasis marks) and Markdown link syntax (`[text](url)` reads as `text`, so a
quote may keep or drop the link). It matches whole words: "4 hours" does not verify
against "14 hours". A link the quote carries (a Markdown link's target or a bare URL)
must be in the chunk too: a reasoner cannot dress the chunk's words in a link of its own.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from store.corpus import ChunkText
from store.text_forms import link_text

_LINK_TARGET = re.compile(
    r"\]\(([^)\s]+)\)|\b((?:https?|ftp|mailto|javascript|data):[^\s<>()\[\]]+)", re.I
)


def normalise(text: str) -> str:
    """Link text for links, case folded, punctuation as space, white space collapsed."""
    text = unicodedata.normalize("NFKC", link_text(text)).casefold()
    # Each distinct character is looked up once (a chunk has a few dozen), not each one.
    spaced = text.translate({ord(c): " " for c in set(text) if _is_separator(c)})
    return " ".join(spaced.split())


def _is_separator(char: str) -> bool:
    # Punctuation, white space, control characters and modifier symbols (the backticks
    # of `code`) separate words; currency and maths symbols stay part of their word.
    category = unicodedata.category(char)
    return category[0] in "PZC" or category == "Sk"


def quote_occurs(quote: str, chunk_text: str) -> bool:
    """True when `quote` (with at least one word) occurs, as whole words, in `chunk_text`."""
    needle = normalise(quote)
    if not needle or f" {needle} " not in f" {normalise(chunk_text)} ":
        return False
    return all(target in chunk_text for target in _link_targets(quote))


def _link_targets(text: str) -> list[str]:
    """The URLs `text` links to: Markdown link targets and bare `scheme:` URLs."""
    return [m[1] or m[2].rstrip(".,;:!?'\"") for m in _LINK_TARGET.finditer(text)]


class ChunkTexts(Protocol):
    """Where stored chunk texts come from (store.corpus.CorpusReader)."""

    async def chunk_texts(self, chunk_ids: Sequence[int]) -> dict[int, ChunkText]: ...


@dataclass(frozen=True, slots=True)
class QuoteCheck:
    chunk_id: int
    quote: str


@dataclass(frozen=True, slots=True)
class Verdict:
    verified: bool
    reason: Literal["verified", "quote_not_in_chunk", "chunk_not_stored", "empty_quote"]


class GroundingVerifier:
    def __init__(self, corpus: ChunkTexts) -> None:
        self._corpus = corpus

    async def verify(self, checks: Sequence[QuoteCheck]) -> list[Verdict]:
        """One verdict per check, from the chunk texts as stored now (one query)."""
        stored = await self._corpus.chunk_texts(sorted({c.chunk_id for c in checks}))
        return [_verdict(check, stored.get(check.chunk_id)) for check in checks]


def _verdict(check: QuoteCheck, chunk: ChunkText | None) -> Verdict:
    if not normalise(check.quote):
        return Verdict(False, "empty_quote")
    if chunk is None:
        return Verdict(False, "chunk_not_stored")
    if quote_occurs(check.quote, chunk.text):
        return Verdict(True, "verified")
    return Verdict(False, "quote_not_in_chunk")
