"""Whether a sentence holds an answer of the expected type that the question does not.

A sentence that repeats the question's words but holds no date answers no "when"; one
whose only name is the question's own answers no "who". These checks are deliberately
shallow (capitalised words, digits, month and number words): they say "there is a
candidate here", not which one is right.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agent.language.questions import AnswerType

_TOKEN = re.compile(r"[\w’'-]+")
_MARKDOWN_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\s]*\)")
_URL = re.compile(r"https?://\S+")
_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
_DATE_WORDS = frozenset(
    (
        _MONTHS + " monday tuesday wednesday thursday friday saturday sunday today yesterday "
        "tomorrow spring summer autumn fall winter century centuries decade decades bc bce ad "
        "ce noon midnight daily weekly monthly annually yearly week weeks month months year "
        "years day days morning afternoon evening night"
    ).split()
)
_NUMBER_WORDS = frozenset(
    """one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy
    eighty ninety hundred hundreds thousand thousands million millions billion billions
    trillion dozen dozens half quarter twice thrice single double triple first second
    third fourth fifth sixth seventh eighth ninth tenth once several few percent""".split()
)
_ORDINAL_CENTURY = re.compile(
    r"\b(?:\d{1,2}(?:st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|"
    r"ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|"
    r"eighteenth|nineteenth|twentieth|twenty-first)\s+centur",
    re.I,
)
_YEAR = re.compile(r"\b(?:1\d{3}|20\d{2}|\d{1,4}\s?(?:BC|BCE|AD|CE)|\d{2,4}s)\b")
_CAUSE = re.compile(
    r"\b(?:because|due to|so that|in order to|since|as a result|caused|led to|reason|"
    r"therefore|thus|to)\b",
    re.I,
)
# Capitalised words that are not names.
_COMMON_CAPITALS = frozenset(
    """a an the this that these those it its he she they we you i his her their our your
    in on at of for to from by with and or but if when where while after before as
    during there here what which who how why however also some many most all any each
    one two three first second new other such""".split()
)


def plain_text(text: str) -> str:
    """Link text instead of `[text](url)`, and bare URLs dropped."""
    return _URL.sub(" ", _MARKDOWN_LINK.sub(r"\1", text))


def has_candidate(sentence: str, answer_type: AnswerType, question: str) -> bool:
    """Whether `sentence` holds something of `answer_type` that `question` does not."""
    asked = {t.casefold() for t in _TOKEN.findall(plain_text(question))}
    tokens = [t for t in _TOKEN.findall(plain_text(sentence)) if t.casefold() not in asked]
    if answer_type == "number":
        return any(_is_number(t) for t in tokens)
    if answer_type == "date":
        return _has_date(sentence, tokens)
    if answer_type in ("person", "place"):
        return bool(names(tokens, first=_first_token(sentence)))
    if answer_type == "reason":
        return bool(_CAUSE.search(sentence))
    return bool(tokens)


def names(tokens: Iterable[str], *, first: str | None = None) -> list[str]:
    """Capitalised tokens that read as names (not a sentence's capitalised first word)."""
    found = []
    for index, token in enumerate(tokens):
        acronym = len(token) > 1 and token.isupper()  # "IT", "HR": names, not pronouns
        if not token[:1].isupper() or (token.casefold() in _COMMON_CAPITALS and not acronym):
            continue
        if index == 0 and token == first and token.casefold() in _COMMON_CAPITALS:
            continue
        found.append(token)
    return found


def _first_token(sentence: str) -> str | None:
    match = _TOKEN.search(plain_text(sentence))
    return match.group() if match else None


def _is_number(token: str) -> bool:
    return any(c.isdigit() for c in token) or token.casefold() in _NUMBER_WORDS


def _has_date(sentence: str, tokens: list[str]) -> bool:
    if any(t.casefold() in _DATE_WORDS for t in tokens):
        return True
    remaining = " ".join(tokens)
    return bool(_YEAR.search(remaining) or _ORDINAL_CENTURY.search(remaining)) or any(
        t.isdigit() for t in tokens
    )
