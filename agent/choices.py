"""When a choice question ("Who was born first, A or B?") is settled.

Its options are sub-questions, none of them key. One option's own answer does not pick
between them: "Marco da Silva (born 10 April 1992) …" says when one of the two was born,
not who was born first, and a reply leading with it answers a question nobody asked. In
any knowledge base a pick is made either by comparing what the pages say of every option
(each option's sub-question answered by a quote that names that option, in its words or
its page's title: the comparison settled from two quotes) or by a quote whose answer span
names another option than its own ("A is older than B" read for B). Anything less is a
gap, and the reply offers a human. Sub-questions that stand for no option (a reasoner that
decomposed otherwise) keep the rule of any one of them answering.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from agent.state import PlannedQuestion
from store.text_forms import fold, plain_title


@dataclass(frozen=True, slots=True)
class Found:
    """A quote found for a sub-question: its words with its page's title, its span, and the
    title alone."""

    text: str
    span: str = ""
    title: str = ""


def choice_settled(
    sub_questions: Sequence[PlannedQuestion],
    answered: Collection[int],
    found: Mapping[int, Sequence[Found]],
) -> bool:
    """Whether the choice among `sub_questions` (none of them key) is settled, given the
    answered sub-questions and what was found for each."""
    options = [(i, q.option) for i, q in enumerate(sub_questions) if q.option]
    if len(options) < 2:
        return bool(answered) or not sub_questions
    each = all(
        i in answered and any(_names_option(f, option) for f in found.get(i, ()))
        for i, option in options
    )
    return each or any(
        _names(f.span, option)
        for i in answered
        for f in found.get(i, ())
        for j, option in options
        if j != i
    )


def found_by_question(
    items: Iterable[tuple[int, str, str, str]],
) -> dict[int, list[Found]]:
    """(sub-question, quote, span, page title) grouped by sub-question."""
    grouped: dict[int, list[Found]] = {}
    for index, quote, span, title in items:
        grouped.setdefault(index, []).append(Found(f"{title}\n{quote}", span, title))
    return grouped


def _names_option(found: Found, option: str) -> bool:
    """Whether the quote or its page names `option`: the option's words in the quote or
    the title, or the page's title opening or ending the option ("Manon" for "Manon by Massenet",
    "White Zombie" for "Rob Zombie's band White Zombie": a question often says more of an
    option than the page's name)."""
    if _names(found.text, option):
        return True
    title = _WORDS.findall(fold(plain_title(found.title)))
    words = _WORDS.findall(fold(option))
    # The page's name opens or ends the option, as a name does in a noun phrase.
    return (
        bool(title)
        and len(title) < len(words)
        and title
        in (
            words[: len(title)],
            words[-len(title) :],
        )
    )


def _names(text: str, option: str) -> bool:
    """Whether `text` names `option` (its words in order, case and accents folded)."""
    words = _WORDS.findall(fold(option))
    return bool(words) and f" {' '.join(words)} " in f" {' '.join(_WORDS.findall(fold(text)))} "


_WORDS = re.compile(r"\w+")
