"""The noun of a "which …" phrase names the kind of answer asked, not what it is about.

"Which system must travel be booked through?" is answered by "Travel must be booked
through Concur.": pages name the system, the tool, the form, the app; they rarely call it
one in the same sentence. In a knowledge base that never writes "system" the word is the
rarest of the question's terms, so coverage without this rule holds it against the very
sentence that answers. It is carried only with strong evidence that the sentence is about
the question: it holds a name the question does not, and every other key term of the
question (two at least). "Which airline do we use?" keeps "airline" as its topic: a
question with nothing else to be about is about its noun, and a page naming some
booking tool is no answer to it.
"""

from __future__ import annotations

import re

# "which/what NOUN" followed by the auxiliary that opens the rest of the question: the
# noun is the head of the wh-phrase ("which app do I use", "what form must I sign").
_WH_HEAD = re.compile(
    r"\b(?:which|what)\s+([a-z][\w-]*)\s+(?=(?:do|does|did|is|are|was|were|can|could|"
    r"should|must|will|would|has|have|had|may|might|shall)\b)",
    re.I,
)
# Fewest other key terms a unit must cover, all of them, to carry the kind noun.
MIN_OTHER_TERMS = 2


def kind_nouns(question: str) -> list[str]:
    """The head nouns of the question's "which/what NOUN <auxiliary> …" phrases."""
    return [m.group(1) for m in _WH_HEAD.finditer(question)]


def carries_kind(
    kind: frozenset[str], terms: frozenset[str], covered: frozenset[str], names_answer: bool
) -> bool:
    """Whether a unit carries the kind nouns it lacks: it names an answer the question does
    not (`names_answer`) and covers every other key term, of which there are at least
    `MIN_OTHER_TERMS`."""
    others = terms - kind
    return (
        bool(kind & terms - covered)
        and names_answer
        and len(others) >= MIN_OTHER_TERMS
        and others <= covered
    )
