"""Heading-aware chunking with exact character spans.

A chunk is a contiguous span of the cleaned document text, so `text[start:end]` always
gives it back. Boundaries are anchored to the document's structure: a top-level heading
always starts a chunk, and inside a section a chunk ends at a paragraph whose content
hash says so (once the chunk is long enough), or before it grows too long. An edit to
one paragraph therefore changes its own chunk and, at most, the next one, instead of
shifting every boundary after it.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

_BLOCK_SEPARATOR = re.compile(r"\n[ \t]*\n+")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_WORD = re.compile(r"\S+")
_SENTENCE_END = re.compile(r"(?<=[.!?:;])[\"')\]]*\s+")
_FENCE = re.compile(r"^[ \t]*```.*?(?:^[ \t]*```[^\n]*$|\Z)", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True, slots=True)
class ChunkingPolicy:
    min_words: int = 150
    max_words: int = 400
    overlap_words: int = 40
    # A paragraph ends a (long enough) chunk when crc32(text) % anchor_modulus == 0.
    anchor_modulus: int = 2

    def __post_init__(self) -> None:
        if self.max_words < 1 or self.min_words < 0 or self.overlap_words < 0:
            raise ValueError("max_words must be at least 1; min_words and overlap_words ≥ 0")
        if self.anchor_modulus < 1:
            raise ValueError("anchor_modulus must be at least 1")


@dataclass(frozen=True, slots=True)
class Chunk:
    ordinal: int
    text: str
    start: int
    end: int
    heading_path: tuple[str, ...]

    def embedding_text(self) -> str:
        """What gets embedded: the section path (page title first) and the chunk's text."""
        if not self.heading_path:
            return self.text
        return " > ".join(self.heading_path) + "\n\n" + self.text


@dataclass(frozen=True, slots=True)
class _Block:
    start: int
    end: int
    words: int
    heading_level: int  # 0 for a paragraph
    heading: str


def chunk_text(text: str, policy: ChunkingPolicy | None = None) -> list[Chunk]:
    """Split cleaned document text into chunks whose spans map back to `text` exactly."""
    policy = policy or ChunkingPolicy()
    builder = _ChunkBuilder(text, policy)
    for block in _blocks(text, policy.max_words):
        builder.add(block)
    builder.flush(overlap=False)
    return builder.chunks


def _blocks(text: str, max_words: int) -> Iterator[_Block]:
    # Blank lines and '#' lines inside a ``` fence are code, not structure.
    fences = [m.span() for m in _FENCE.finditer(text)]
    separators = [
        m for m in _BLOCK_SEPARATOR.finditer(text) if not any(a < m.start() < b for a, b in fences)
    ]
    position = 0
    for separator in [*separators, None]:
        end = separator.start() if separator else len(text)
        yield from _split_block(text, position, end, max_words)
        if separator:
            position = separator.end()


def _split_block(text: str, start: int, end: int, max_words: int) -> Iterator[_Block]:
    while start < end and text[start].isspace():
        start += 1
    if start >= end:
        return
    body = text[start:end]
    heading = _HEADING.match(body) if "\n" not in body else None
    if heading:
        yield _Block(start, end, len(_WORD.findall(body)), len(heading[1]), heading[2].strip())
        return
    yield from _word_windows(text, start, end, max_words)


def _word_windows(text: str, start: int, end: int, max_words: int) -> Iterator[_Block]:
    """Pieces of an overlong paragraph, cut at sentence ends where possible."""
    words = list(_WORD.finditer(text, start, end))
    if len(words) <= max_words:
        yield _Block(start, end, len(words), 0, "")
        return
    max_words = max(1, max_words)  # every window takes at least one word, so the loop ends
    first = 0
    while first < len(words):
        last = min(first + max_words, len(words)) - 1
        if last < len(words) - 1:
            for candidate in range(last, first + max_words // 2, -1):
                if _SENTENCE_END.match(text, words[candidate].end()):
                    last = candidate
                    break
        yield _Block(words[first].start(), words[last].end(), last - first + 1, 0, "")
        first = last + 1


class _ChunkBuilder:
    def __init__(self, text: str, policy: ChunkingPolicy) -> None:
        self.text = text
        self.policy = policy
        self.chunks: list[Chunk] = []
        self.headings: list[tuple[int, str]] = []
        self.current: list[_Block] = []
        self.current_path: tuple[str, ...] = ()
        self.overlap_start: int | None = None

    @property
    def words(self) -> int:
        return sum(block.words for block in self.current)

    def add(self, block: _Block) -> None:
        if block.heading_level:
            self._add_heading(block)
            return
        if self.current and self.words + block.words > self.policy.max_words:
            self.flush(overlap=True)
        self._append(block)
        if self.words >= self.policy.min_words and self._is_anchor(block):
            self.flush(overlap=True)

    def _add_heading(self, block: _Block) -> None:
        if self.current and (block.heading_level <= 2 or self.words >= self.policy.min_words // 2):
            self.flush(overlap=False)
        self.headings = [h for h in self.headings if h[0] < block.heading_level]
        self.headings.append((block.heading_level, block.heading))
        self._append(block)

    def _append(self, block: _Block) -> None:
        if not self.current:
            self.current_path = tuple(h for _, h in self.headings)
        self.current.append(block)

    def _is_anchor(self, block: _Block) -> bool:
        digest = zlib.crc32(self.text[block.start : block.end].encode("utf-8"))
        return digest % self.policy.anchor_modulus == 0

    def flush(self, *, overlap: bool) -> None:
        if not self.current or all(b.heading_level for b in self.current):
            if not overlap:
                self.current, self.overlap_start = [], None
            return
        start = self.current[0].start
        if self.overlap_start is not None and self.overlap_start < start:
            start = self.overlap_start
        end = self.current[-1].end
        self.chunks.append(
            Chunk(len(self.chunks), self.text[start:end], start, end, self.current_path)
        )
        self.overlap_start = self._overlap_from(self.current[-1]) if overlap else None
        self.current = []

    def _overlap_from(self, block: _Block) -> int | None:
        """Start of the last sentence of `block`, if it is short enough to repeat."""
        tail = self.text[block.start : block.end]
        cuts = [m.end() for m in _SENTENCE_END.finditer(tail)]
        if not cuts:
            return None
        start = block.start + cuts[-1]
        if len(_WORD.findall(self.text, start, block.end)) > self.policy.overlap_words:
            return None
        return start if start < block.end else None
