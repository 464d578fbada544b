"""Candidate quotes: the sentences of a text, and its lists quoted with their lead-in.

The text is the cleaned Markdown-flavoured text the indexer stores (headings are lines
starting with `#`, list items start with `-`, `*`, `+` or `1.`, links are `[text](url)`).
It is first cut into blocks by that structure; paragraphs are then split into sentences
by syntok (a maintained rule-based segmenter), with the inside of every link masked so a
sentence never ends inside `[text](url)`. A sentence ending in ':' that is followed by a
list becomes one unit with the list's items ("Annual leave accrues …:" and its three
lines), because alone it answers nothing and the items alone lack their subject.

Every unit carries its exact span in the text (`text[start:end] == unit.text`) and the
nearest heading above it. Splitting is cached per block, since the same chunks come back
question after question.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import syntok.segmenter as segmenter

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_LIST_MARKER = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+")
_WORD = re.compile(r"\w+")
_MARKDOWN_LINK = re.compile(r"\[[^\]\n]*\]\([^)\s]*\)")
_NAME_SUFFIX = re.compile(r"\b(?:Jr|Sr)\.$")

UnitKind = Literal["sentence", "item", "list"]


@dataclass(frozen=True, slots=True)
class Sentence:
    """A quotable unit: a sentence, one list item, or a lead-in with its list."""

    text: str
    start: int
    end: int
    kind: UnitKind = "sentence"
    heading: str = ""  # the nearest heading above it in the text, '' when none

    @property
    def lead_in(self) -> bool:
        return self.kind == "sentence" and self.text.endswith(":")

    @property
    def only_asks(self) -> bool:
        """A sentence of a page that is itself a question ("What factors will you take
        into consideration?", an FAQ's "Can I carry leave over?"): it states nothing, so
        it is never read beside a quote as the rest of its answer."""
        return self.kind == "sentence" and self.text.rstrip().endswith("?")


@dataclass(frozen=True, slots=True)
class _Block:
    kind: Literal["heading", "item", "paragraph"]
    start: int
    end: int
    depth: int = 0  # indentation of a list item


@dataclass(frozen=True, slots=True)
class SplitOptions:
    # Units with fewer words are fragments (a bare link, "OPM Policy:").
    min_words: int = 4
    # A list quoted with its lead-in keeps at most this many items.
    max_list_items: int = 12
    # Blocks whose sentence spans are remembered.
    cache_blocks: int = 50_000


class SentenceSplitter:
    """Splits texts into quotable units; one per process, since it caches blocks."""

    def __init__(self, options: SplitOptions | None = None) -> None:
        self._options = options or SplitOptions()
        self._cache: OrderedDict[str, tuple[tuple[int, int], ...]] = OrderedDict()

    def split(self, text: str) -> list[Sentence]:
        """Sentences, list items and lead-in + list units of `text`, in reading order."""
        floor = self._options.min_words
        return [u for u in self._units(text) if u.kind == "list" or visible_words(u.text) >= floor]

    def sentences(self, text: str, *, min_words: int) -> list[Sentence]:
        """The sentences and list items of `text` (no lead-in units) of at least
        `min_words` words, from this splitter's cache of blocks."""
        return [
            u for u in self._units(text) if u.kind != "list" and visible_words(u.text) >= min_words
        ]

    def _units(self, text: str) -> list[Sentence]:
        units: list[Sentence] = []
        heading = ""
        blocks = list(_blocks(text))
        for index, block in enumerate(blocks):
            if block.kind == "heading":
                match = _HEADING.match(text[block.start : block.end])
                heading = match.group(2) if match else heading
                continue
            if block.kind == "item":
                units += self._item_units(text, block, heading)
                continue
            for start, end in self._sentences(text, block):
                units.append(self._unit(text, start, end, "sentence", heading))
            list_unit = self._list_after(text, blocks, index, heading)
            if list_unit is not None:
                units.append(list_unit)
        return units

    def _item_units(self, text: str, block: _Block, heading: str) -> list[Sentence]:
        marker = _LIST_MARKER.match(text[block.start : block.end])
        start = block.start + (marker.end() if marker else 0)
        body = _Block("paragraph", start, block.end)
        spans = list(self._sentences(text, body))
        if len(spans) <= 1:
            return [self._unit(text, start, block.end, "item", heading)] if spans else []
        return [self._unit(text, a, b, "sentence", heading) for a, b in spans]

    def _list_after(
        self, text: str, blocks: list[_Block], index: int, heading: str
    ) -> Sentence | None:
        """The paragraph's last sentence with the list that follows it, if it ends in ':'."""
        block = blocks[index]
        if not text[block.start : block.end].rstrip().endswith(":"):
            return None
        end, count, top = None, 0, None
        for item in blocks[index + 1 :]:
            if item.kind != "item":
                break
            top = item.depth if top is None else top
            if item.depth < top:
                break  # the list it belongs to has ended
            if item.depth == top:
                count += 1
                if count > self._options.max_list_items:
                    break
            end = item.end  # sub-items travel with their item
        if end is None:
            return None
        spans = list(self._sentences(text, block))
        lead_start = spans[-1][0] if spans else block.start
        return self._unit(text, lead_start, end, "list", heading)

    def _sentences(self, text: str, block: _Block) -> Iterator[tuple[int, int]]:
        piece = text[block.start : block.end]
        cached = self._cache.get(piece)
        if cached is None:
            cached = tuple(_segment(piece))
            self._cache[piece] = cached
            if len(self._cache) > self._options.cache_blocks:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(piece)
        for start, end in cached:
            yield block.start + start, block.start + end

    @staticmethod
    def _unit(text: str, start: int, end: int, kind: UnitKind, heading: str) -> Sentence:
        return Sentence(text[start:end], start, end, kind, heading)


def _blocks(text: str) -> Iterator[_Block]:
    """Headings, list items (with their continuation lines) and paragraphs, in order."""
    open_block: _Block | None = None
    offset = 0
    for raw in text.splitlines(keepends=True):
        start, offset = offset, offset + len(raw)
        line = raw.rstrip("\r\n")
        end = start + len(line)
        marker = _LIST_MARKER.match(line)
        if not line.strip() or marker or _HEADING.match(line):
            if open_block is not None:
                yield open_block
            open_block = None
            if marker:
                open_block = _Block("item", start, end, len(marker.group(1).expandtabs()))
            elif line.strip():
                yield _Block("heading", start, end)
        elif open_block is None:
            open_block = _Block("paragraph", start, end)
        else:  # a continuation line of the paragraph or list item
            open_block = _Block(open_block.kind, open_block.start, end, open_block.depth)
    if open_block is not None:
        yield open_block


def _segment(piece: str) -> Iterator[tuple[int, int]]:
    """Sentence spans of one block, by syntok, never ending inside a Markdown link."""
    # One word-like token of the same length per link: offsets stay put, and syntok
    # neither ends a sentence inside it nor takes its brackets for a boundary.
    masked = _MARKDOWN_LINK.sub(lambda m: "L" + "x" * (len(m.group()) - 1), piece)
    held: tuple[int, int] | None = None
    for paragraph in segmenter.analyze(masked):
        for sentence in paragraph:
            tokens = list(sentence)
            if not tokens:
                continue
            start = held[0] if held else tokens[0].offset
            end = tokens[-1].offset + len(tokens[-1].value)
            # syntok ends a sentence at a name's suffix ("Martin Luther King Jr. Day"),
            # which in English stands inside a name far more often than at a sentence's
            # end; a real end ("led by Bob Smith Jr.") only makes the quote one longer.
            held = (start, end) if _NAME_SUFFIX.search(masked, 0, end) else None
            if held is None:
                yield start, end
    if held is not None:
        yield held


def visible_words(text: str) -> int:
    """Words a reader sees: a link counts its text, not its URL."""
    return len(_WORD.findall(_MARKDOWN_LINK.sub(lambda m: m.group().split("](")[0], text)))


def sentences(text: str, *, min_words: int = 4) -> Iterator[Sentence]:
    """The sentences and list items of `text` (no lead-in units): for one-off callers."""
    yield from SentenceSplitter(SplitOptions(cache_blocks=0)).sentences(text, min_words=min_words)
