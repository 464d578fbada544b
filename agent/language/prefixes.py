"""Opposites written with a prefix: "non-local" and "uncommon" name what "local" and
"common" are not (the prefixes in agent/language/rules.py NEGATING_PREFIXES).

A sentence that says the bare word ("interethnic marriage became common") and never the
prefixed one answers a question about the other thing ("what marriage became
uncommon?"), in any knowledge base: the pair is spelled into the word, so no table of
opposites needs to list it.
"""

from __future__ import annotations

import re

from agent.language.rules import NEGATING_PREFIXES, NOT_PREFIXED

_PREFIXED = re.compile(
    r"\b(" + "|".join(re.escape(p) for p, _why in NEGATING_PREFIXES) + r")-?([a-z]{4,})\b",
    re.I,
)


def prefixed_opposites(question: str) -> list[tuple[str, str]]:
    """(prefixed word, bare word) for each word of `question` written with a negating
    prefix: [("non-local", "local")] for "How were non-local networks set up?"."""
    found = []
    for match in _PREFIXED.finditer(question):
        word = match.group(0).casefold()
        if word.replace("-", "") in NOT_PREFIXED:
            continue
        found.append((word, match.group(2).casefold()))
    return found


def says_the_opposite(question: str, sentence: str) -> bool:
    """Whether `sentence` holds the bare word of a prefixed word of `question` and never
    the prefixed word itself (written with or without its hyphen)."""
    text = sentence.casefold()
    for word, bare in prefixed_opposites(question):
        prefix = word[: len(word) - len(bare)].rstrip("-")
        said = re.search(rf"\b{re.escape(prefix)}[-\s]?{re.escape(bare)}", text)
        if not said and re.search(rf"\b{re.escape(bare)}", text):
            return True
    return False
