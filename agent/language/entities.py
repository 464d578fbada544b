"""Names in a text: capitalised phrases and link texts, for the second hop of a question.

When the first hop's evidence says "…his role in Lemony Snicket's A Series of
Unfortunate Events", the film is the bridge to the page that answers "directed by
whom?": the next query is built from the names the evidence holds and the question
lacks.
"""

from __future__ import annotations

import re

from store.text_forms import MARKDOWN_LINK, plain_text

# Capitalised words, joined by short lower-case connectors ("of", "the", "de", "'s").
_PHRASE = re.compile(
    r"(?:[A-Z][\w’'.-]*|\d{4})(?:\s+(?:(?:of|the|de|la|le|von|van|for)\s+)*"
    r"(?:[A-Z][\w’'.-]*|\d+))*"
)
_LEADING = re.compile(r"^(?:The|A|An|In|On|At|He|She|It|They|His|Her|Its|This|That)\s+")


def names(text: str) -> list[str]:
    """Link texts and capitalised phrases of `text`, longest first, without repeats."""
    found = [m.group(1) for m in MARKDOWN_LINK.finditer(text) if m.group(1)]
    plain = plain_text(text)
    for match in _PHRASE.finditer(plain):
        phrase = _LEADING.sub("", match.group().strip(" .")).strip()
        if phrase and not phrase.isdigit():
            found.append(phrase)
    unique = dict.fromkeys(f for f in found if len(f) > 2)
    return sorted(unique, key=lambda n: -len(n.split()))


_DATE_LIKE = re.compile(
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b|\d"
)


def new_names(text: str, question: str) -> list[str]:
    """The names of `text` that `question` does not already hold (dates are no bridge)."""
    asked = question.casefold()
    return [n for n in names(text) if n.casefold() not in asked and not _DATE_LIKE.search(n)]
