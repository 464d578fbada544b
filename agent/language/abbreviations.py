"""Abbreviations a text defines ("the Employee Assistance Program (EAP)"), so that a
sentence under the heading "Employee Assistance Program" is read as speaking of the EAP a
question names, and a sentence saying "EAP" as speaking of the program's full name.

Only a definition the text itself makes counts, and only when the abbreviation's letters
are the initials of the words just before it (function words skipped): no list of
abbreviations, nothing guessed.
"""

from __future__ import annotations

import re

from store.text_forms import link_text

_DEFINED = re.compile(r"\(([A-Z][A-Z0-9&]{1,7})\)")
_NAME_WORD = re.compile(r"[A-Za-z][\w'’-]*")
_SKIPPED = frozenset("of and for the to in on at a an &".split())
_REACH = 120  # characters before the parenthesis where the full name may stand


def defined_abbreviations(text: str) -> dict[str, str]:
    """`{abbreviation: full name}` for each "Full Name (FN)" in `text`."""
    plain = link_text(text)
    found: dict[str, str] = {}
    for match in _DEFINED.finditer(plain):
        abbreviation = match.group(1)
        letters = [c for c in abbreviation if c.isalpha()]
        words = _NAME_WORD.findall(plain[max(0, match.start() - _REACH) : match.start()])
        named = [w for w in words if w.casefold() not in _SKIPPED]
        if len(named) < len(letters) or not letters:
            continue
        initials = [w[0].upper() for w in named[-len(letters) :]]
        if initials == letters:
            found.setdefault(abbreviation, " ".join(named[-len(letters) :]))
    return found
