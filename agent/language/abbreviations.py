"""Abbreviations a text defines ("the Employee Assistance Program (EAP)"), so that a
sentence under the heading "Employee Assistance Program" is read as speaking of the EAP a
question names, and a sentence saying "EAP" as speaking of the program's full name.

Only a definition the text itself makes counts, and only when the abbreviation's letters
are the initials of the words just before it (function words skipped): no list of
abbreviations, nothing guessed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from store.text_forms import link_text

_DEFINED = re.compile(r"\(([A-Z][A-Z0-9&]{1,7})s?\)")  # "(RNs)" defines RN too
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


_WRITTEN_INITIALISM = re.compile(r"\b([A-Z]{3,6})s?\b")
_USED_INITIALISM = re.compile(r"\b([A-Z]{2,6})s?\b")
_CHAT_INITIALISM = re.compile(r"\b([a-z]{3,6})\b")
# Words no name is made of: "How to request" (twice, in headings) is no "HR".
_NOT_NAME_WORDS = _SKIPPED | frozenset(
    """how what when where who why which this that these those with from your you our
    their there here have has are was were will can may must not all any each""".split()
)


def used_abbreviations(text: str) -> dict[str, str]:
    """`{initialism: full name}` for each initialism `text` writes in capitals ("PD
    Request form") without defining it, whose letters begin consecutive words it also
    writes at least twice ("Professional Development and Licensing", "a yearly
    professional development budget").

    A page that says "professional development" in its title and prose and then "PD" is
    speaking of one thing; a question saying "pd budget" asks of the sentences that spell
    it out. The name's words are words of three letters or more, none a function word:
    two letters begin too many pairs of small words ("in the", "of it") otherwise."""
    plain = link_text(text)
    words = _NAME_WORD.findall(plain)
    # A run of initials starts at a word of its first letter: only those are tried.
    starts: dict[str, list[int]] = {}
    for index, word in enumerate(words):
        starts.setdefault(word[0].upper(), []).append(index)
    found: dict[str, str] = {}
    for short in dict.fromkeys(_USED_INITIALISM.findall(plain)):
        name = repeated_name(words, short, starts.get(short[0], ()))
        if name:
            found[short] = name
    return found


def repeated_name(words: list[str], short: str, starts: Iterable[int]) -> str | None:
    """The first name (folded) whose initials spell `short`, made of words of three
    letters or more, none a function word, that `words` write at least twice, a run
    starting at one of `starts`; None if there is none."""
    seen: dict[str, int] = {}
    for start in starts:
        name = _initials_run(words, start, short)
        if name is None or name.upper() == short:
            continue
        if any(len(w) < 3 or w.casefold() in _NOT_NAME_WORDS for w in name.split()):
            continue
        seen[name.casefold()] = seen.get(name.casefold(), 0) + 1
    return next((name for name, count in seen.items() if count >= 2), None)


def implied_abbreviations(
    asked: str, text: str, *, is_word: Callable[[str], bool] | None = None
) -> dict[str, str]:
    """`{initialism: full name}` for each initialism `asked` writes ("PTO") that `text`
    neither writes nor defines, but whose letters begin consecutive words it repeats
    ("paid time off", function words skipped as in a definition).

    People ask in the initialisms they use every day; a page written for everyone spells
    the name out. Three letters at least (two-letter initials begin too many word pairs),
    and the name must stand twice in `text` (its title counts): a thing a page is about
    is named more than once, a chance run of initials ("please turn off") rarely is.

    Chat writes initialisms in lower case too ("how much lsl do I get?"): with `is_word`,
    a lower-case word of three to six letters that is no word counts as one.
    """
    plain = link_text(text)
    words = _NAME_WORD.findall(plain)
    found: dict[str, str] = {}
    chat = [w.upper() for w in _CHAT_INITIALISM.findall(asked) if not is_word(w)] if is_word else []
    for short in dict.fromkeys([*_WRITTEN_INITIALISM.findall(asked), *chat]):
        if re.search(rf"\b{short}\b", plain, re.IGNORECASE):
            continue  # written out as is: nothing to imply
        seen: dict[str, int] = {}
        for start in range(len(words)):
            name = _initials_run(words, start, short)
            if name is not None:
                seen[name.casefold()] = seen.get(name.casefold(), 0) + 1
        repeated = [name for name, count in seen.items() if count >= 2]
        if repeated:
            found[short] = repeated[0]
    return found


def _initials_run(words: list[str], start: int, letters: str) -> str | None:
    """The words from `start` whose initials spell `letters` (skipped words allowed
    between, never first or last), or None."""
    taken: list[str] = []
    index = start
    while index < len(words) and len(taken) < len(letters):
        word = words[index]
        if word.casefold() in _SKIPPED and taken:
            index += 1
            continue
        if word[0].upper() != letters[len(taken)]:
            return None
        taken.append(word)
        index += 1
    return " ".join(taken) if len(taken) == len(letters) else None
