"""Candidate quotes: the sentences of a chunk, with their character spans in it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_LINE = re.compile(r"[^\n]+")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
# A sentence ends at . ! ? (optionally followed by a closing quote or bracket) and a space,
# unless the word before it is a common abbreviation.
_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|etc|vs|Mr|Ms|Mrs|Dr|St|No|U\.S|approx)\.$", re.I)
_WORD = re.compile(r"\w+")
_MARKDOWN_LINK = re.compile(r"\[[^\]\n]*\]\([^)\s]*\)")


@dataclass(frozen=True, slots=True)
class Sentence:
    text: str
    start: int
    end: int


def sentences(text: str, *, min_words: int = 4) -> Iterator[Sentence]:
    """Sentences of `text`, skipping headings and fragments shorter than `min_words`."""
    for line in _LINE.finditer(text):
        if line.group().lstrip().startswith("#"):
            continue
        marker = _LIST_MARKER.match(line.group())
        start = line.start() + (marker.end() if marker else 0)
        for piece_start, piece_end in _split_line(text, start, line.end()):
            piece = text[piece_start:piece_end].strip()
            if len(_WORD.findall(piece)) >= min_words:
                offset = text.index(piece, piece_start)
                yield Sentence(piece, offset, offset + len(piece))


def _split_line(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    links = [m.span() for m in _MARKDOWN_LINK.finditer(text, start, end)]
    position = start
    for match in _END.finditer(text, start, end):
        if _ABBREVIATION.search(text, position, match.start()):
            continue
        if any(a < match.start() < b for a, b in links):
            continue  # never cut inside a [text](url) link
        yield position, match.start()
        position = match.end()
    if position < end:
        yield position, end
