"""A "which/what NOUN" question asks for a thing, a person or a place, not a number.

"Which film was Oscar nominated?" is answered by a film's name, and "… is based in what
New York city?" by a city's; a quote that holds only a year ("Gimme Shelter … was released
in 1971") or a count names neither, however many of the question's words it repeats. In
any English text a thing, a person or a place is named with words (a name that holds
digits, "Apollo 11", "Windows 10", opens with one); a span that holds digits without
opening with a capitalised word is a quantity or a date said about the thing, so it is no
answer to which thing. The rule stands down when the wh-phrase names a measure ("which
year", "what score", "during what timeframe": agent/language/rules.py MEASURE_NOUNS),
which digits do answer.
"""

from __future__ import annotations

import re

from agent.language.rules import MEASURE_NOUNS, NUMBER_WORDS

# "which/what" and the words of its noun phrase, up to the first word that opens the rest
# of the question (an auxiliary, a preposition, a pronoun) or punctuation: "what New York
# city", "which Eminem album", "which film".
_WH_PHRASE = re.compile(r"\b(?:which|what)\s+((?:[\w'’-]+\s*){1,4})", re.I)
_PHRASE_END = frozenset(
    """is are was were be been being do does did can could should must will would has have
    had may might shall of in on at for to from by with as about into than that who which
    whose i you he she it we they my your his her its our their a an the this these those
    and or but not""".split()
)
_DIGIT = re.compile(r"\d")
# A span opening with a number written as a word ("three", "six thousand … acres").
_NUMBER_WORD = re.compile(rf"^\W*{NUMBER_WORDS}\b")  # lower case: "Three Rivers" is a name


def wh_phrase(question: str) -> list[str]:
    """The words of the question's first "which/what NOUN …" phrase ([] when "which" or
    "what" is followed by an auxiliary or a pronoun: "what is …", "what did they …")."""
    match = _WH_PHRASE.search(question)
    if not match:
        return []
    words = []
    for word in re.findall(r"[\w'’-]+", match.group(1)):
        if word.casefold() in _PHRASE_END:
            break
        words.append(word)
    return words


def asks_for_a_thing(question: str) -> bool:
    """Whether the question's wh-phrase names a thing, a person or a place (no measure
    noun in it): then a bare number or date is no answer."""
    words = wh_phrase(question)
    return bool(words) and not any(w.casefold() in MEASURE_NOUNS for w in words)


def names_a_thing(span: str) -> bool:
    """Whether `span` can name a thing: it holds no digits, or it opens with a capitalised
    word as names do ("Apollo 11"); "1971", "2008 while attending" and "a hit in 1971" are
    what was said about a thing, not which; so is a span opening with a number word
    ("three", "six thousand one hundred acres")."""
    if _NUMBER_WORD.match(span):
        return False
    if not _DIGIT.search(span):
        return True
    first = span.lstrip(" \"'“‘(")[:1]
    return first.isalpha() and first.isupper()
