"""The sentences a quote is read with: its list item's first sentence, and the sentence
after it when that one holds the answer (extractive reasoner).

A quote is one sentence, chosen for sharing the question's words; the answer is often in
the sentence beside it, which shares fewer of them:
- a list item of several sentences states its point first and explains it after
  ("- Ask Tech Operations before creating private repositories. We pay GitHub for … Be
  sure to include a link in your repo README …"): a later sentence quoted alone loses
  the point it explains;
- a paragraph says what applies, then what to do ("… your authorizing official is
  available to sign your completed GSA form 87. You will need to call AdTrav … and
  later submit the signed form to gvtagents@adtrav.com."): the next sentence of the same
  paragraph, when it holds a span of the asked type, is the rest of the answer.
Both hold for any knowledge base written in paragraphs and lists. They are shown beside
the quote they belong to, never in place of it, and they decide nothing about whether
the question is answered (the judge has ruled by then).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent.language.questions import AnswerType
from agent.language.spans import find_span
from agent.retrieval.reading import Passage
from agent.sentences import Sentence
from agent.state import Companion

# A list marker opening a line: what is after it is a list item's first sentence.
_ITEM_OPENS = re.compile(r"(?:^|\n)[ \t]*(?:[-*+]|\d+[.)])[ \t]+$")


def companions(
    units: Sequence[Sentence],
    passage: Passage,
    quoted: Sentence,
    answer_type: AnswerType,
    question: str,
) -> tuple[Companion, ...]:
    """The sentences of `passage` (its text split into `units`) to quote beside `quoted`:
    its list item's first sentence, then its next sentence in the same block if that
    holds a span of `answer_type` the question does not."""
    text = passage.text
    block = _block_of(units, text, quoted)
    if not block:
        return ()
    found: list[Companion] = []
    first = block[0]
    in_item = bool(_ITEM_OPENS.search(text[: first.start]))
    if in_item and first.end <= quoted.start:
        chunk = _chunk_of(passage, first)
        if chunk is not None:
            found.append(Companion(first.text, chunk))
    following = next((u for u in block if u.start >= quoted.end), None)
    if following is not None and not following.only_asks:
        span = find_span(following.text, answer_type, question)
        chunk = _chunk_of(passage, following)
        if span and chunk is not None:
            found.append(Companion(following.text, chunk, span))
    return tuple(found)


def _chunk_of(passage: Passage, unit: Sentence) -> int | None:
    """The id of the stored chunk holding `unit` whole, if any."""
    start, end = passage.char_start + unit.start, passage.char_start + unit.end
    for span in passage.spans:
        if span.char_start <= start and end <= span.char_end:
            return span.chunk_id
    return None


def _block_of(units: Sequence[Sentence], text: str, quoted: Sentence) -> list[Sentence]:
    """The units of the paragraph or list item holding `quoted` (the sentences between
    which the text has no line break), in order; [] if `quoted` is not one of them."""
    blocks: list[list[Sentence]] = []
    for unit in units:
        if unit.kind != "sentence":
            blocks.append([])  # an item or a list is a block of its own, never joined
            continue
        joined = blocks and blocks[-1] and "\n" not in text[blocks[-1][-1].end : unit.start]
        if joined:
            blocks[-1].append(unit)
        else:
            blocks.append([unit])
    for block in blocks:
        if any(u.start < quoted.end and quoted.start < u.end for u in block):
            return block
    return []
