"""A quantity the question states, held by a range or a bound a page states.

"how many pto days do i get after 4 years?" is answered by "3 to 6 years of service: 20
days a year": the page never writes "4", it writes the band the asker's 4 falls in, as
pay scales, accrual tables, notice periods and price tiers do in any knowledge base. The
asker's number is a constraint on which band answers, so the band that holds it meets
the constraint and a band that doesn't ("More than 6 years") does not.

Only a number followed by the same unit word on both sides ("4 years", "6 years") is
compared, so "3 to 6 years" never holds "4 weeks", and a bare number (an identifier, a
grade, a year) is never read as a quantity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent.language.rules import NUMBER_WORDS

_NUMBER = rf"\d+(?:\.\d+)?|{NUMBER_WORDS}"
_UNIT = r"(?P<unit>[a-z]{3,})"
# A quantity the question states: a number and the word after it ("4 years", "10 people").
_ASKED = re.compile(rf"(?<![\w.$£€-])(?P<n>\d+(?:\.\d+)?)\+?\s+{_UNIT}\b", re.I)
# "3 to 6 years", "3-6 years", "3–6 years", "between 3 and 6 years".
_BAND = re.compile(
    rf"\b(?P<low>{_NUMBER})\s*(?:to|-|–|—|and)\s*(?P<high>{_NUMBER})\s+(?:[a-z-]+\s+)?{_UNIT}\b",
    re.I,
)
# "more than 6 years", "at least 2 years", "6+ years" (from below); "fewer than 3 years",
# "up to 5 days" (from above). Whether the bound itself is included, as the words say.
_FROM_BELOW = re.compile(
    rf"\b(?P<word>more than|over|greater than|above|beyond|after|at least|no less than|"
    rf"no fewer than|a minimum of|minimum of|from)\s+(?P<n>{_NUMBER})\s+{_UNIT}\b",
    re.I,
)
_PLUS = re.compile(rf"\b(?P<n>\d+(?:\.\d+)?)\+\s+{_UNIT}\b", re.I)
# "3 years or more", "30 hours or less": the bound after the unit, itself included.
_OR_MORE = re.compile(
    rf"\b(?P<n>{_NUMBER})\s+{_UNIT}\s+(?:or|and)\s+(?P<word>more|longer|over|above|less|fewer|"
    rf"under|below|shorter)\b",
    re.I,
)
# "10 or more years of service", "5 or fewer absences": the same bound before its unit.
_OR_MORE_BEFORE = re.compile(
    rf"\b(?P<n>{_NUMBER})\s+(?:or|and)\s+(?P<word>more|longer|over|above|less|fewer|under|"
    rf"below|shorter)\s+{_UNIT}\b",
    re.I,
)
# The words that bound a quantity ("after 10 years", "over $500", "within 30 days"): in a
# question they are part of the asker's quantity, said of it, not of the topic.
_BOUND_WORDS = frozenset(
    "after over under above below beyond within more less fewer least most up from".split()
)
# A bound word and the number it bounds, as a question writes them ("more than $500").
_BOUNDING = re.compile(
    rf"\b(?P<w>{'|'.join(sorted(_BOUND_WORDS))})\s+(?:than\s+|to\s+|of\s+)?[$£€]?\s?"
    rf"(?P<n>\d+(?:,\d{{3}})*(?:\.\d+)?)(?![\d.,]*\d)",
    re.I,
)
_BELOW_WORDS = frozenset("less fewer under below shorter".split())
# Sums of money, the currency before the number: "$8" asked ("my drawer was $8 short")
# is held by "more than $5" or "up to $50", as a page's thresholds for approval,
# reporting and sign-off are written in any knowledge base.
_SUM = r"(?P<cur>[$£€])\s?(?P<n>\d[\d,]*(?:\.\d+)?)"
_ASKED_SUM = re.compile(rf"(?<![\w.]){_SUM}(?![\d,]*\d)")
_SUM_FROM_BELOW = re.compile(
    rf"\b(?P<word>more than|over|greater than|above|beyond|exceeding|in excess of|at least|"
    rf"no less than|a minimum of|minimum of|from)\s+{_SUM}",
    re.I,
)
_SUM_FROM_ABOVE = re.compile(
    rf"\b(?P<word>less than|under|below|up to|at most|no more than|a maximum of|"
    rf"maximum of)\s+{_SUM}",
    re.I,
)
_SUM_OR_MORE = re.compile(
    rf"{_SUM}\s+(?:or|and)\s+(?P<word>more|over|above|less|under|below)\b", re.I
)
_FROM_ABOVE = re.compile(
    rf"\b(?P<word>fewer than|less than|under|below|up to|at most|no more than|within|"
    rf"a maximum of|maximum of)\s+(?P<n>{_NUMBER})\s+{_UNIT}\b",
    re.I,
)
# "After 5 years' service: 27 days" is a milestone, reached on the day the fifth year
# is completed: "after 5 years" includes 5, as the asker who writes it means too.
_INCLUSIVE = frozenset(
    "at least,no less than,no fewer than,a minimum of,minimum of,from,after,up to,at most,"
    "no more than,within,a maximum of,maximum of".split(",")
)
_WORD_VALUES = {
    w: float(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
} | {"thirty": 30.0, "forty": 40.0, "fifty": 50.0, "sixty": 60.0, "seventy": 70.0}


@dataclass(frozen=True, slots=True)
class AskedQuantity:
    written: str  # as the question writes the number ("4")
    value: float
    unit: str  # singular, lower case ("year")


def asked_quantities(question: str) -> tuple[AskedQuantity, ...]:
    """The quantities a question states with a unit word after them, and its sums of
    money (the currency, "$" or "£", their unit)."""
    found = [
        AskedQuantity(m["n"], float(m["n"]), _singular(m["unit"]))
        for m in _ASKED.finditer(question)
    ]
    for m in _ASKED_SUM.finditer(question):
        value = number_value(m["n"])
        if value is not None:
            found.append(AskedQuantity(m["n"], value, m["cur"]))
    return tuple(found)


def bounding_words(asked: tuple[AskedQuantity, ...], question: str) -> frozenset[str]:
    """The words of `question` that bound one of its `asked` quantities ("after" of "after
    10 yrs", "more" of "more than $500"), lower case. One pass over the question."""
    written = {q.written for q in asked}
    if not written:
        return frozenset()
    return frozenset(m["w"].casefold() for m in _BOUNDING.finditer(question) if m["n"] in written)


def held(asked: tuple[AskedQuantity, ...], text: str) -> frozenset[str]:
    """The numbers of `asked` (as written) that a range or bound in `text` holds, in the
    same unit."""
    if not asked:
        return frozenset()
    found = set()
    for _start, _end, low, high, unit in _bands(text):
        found |= {q.written for q in asked if q.unit == unit and low <= q.value <= high}
    return frozenset(found)


def bounded(asked: tuple[AskedQuantity, ...], text: str) -> frozenset[str]:
    """The numbers of `asked` (as written) in a unit that `text` bounds, holding them or
    not: a page stating its own bound ("courses over £500") answers the asker's sum by
    it, so whether it holds the sum tells whether it speaks of the asker's case."""
    if not asked:
        return frozenset()
    units = {unit for *_span, unit in _bands(text)}
    return frozenset(q.written for q in asked if q.unit in units)


def tightest(asked: tuple[AskedQuantity, ...], text: str) -> tuple[float, float]:
    """How closely `text` bounds one of `asked`, for ordering lines that all hold it:
    (width, -low) of its narrowest band that does, smaller first. "From 7 years" bounds
    the asker's 7 years more closely than "From 3 years" does."""
    return min(
        (
            (high - low, -low)
            for _start, _end, low, high, unit in _bands(text)
            if any(q.unit == unit and low <= q.value <= high for q in asked)
        ),
        default=(float("inf"), float("inf")),
    )


def without_held(asked: tuple[AskedQuantity, ...], text: str) -> str:
    """`text` with every range or bound that holds one of `asked` blanked out: on the line
    "3 to 6 years of service: 20 days a year", what is left to answer "after 4 years?"."""
    for start, end, low, high, unit in _bands(text):
        if any(q.unit == unit and low <= q.value <= high for q in asked):
            text = text[:start] + " " * (end - start) + text[end:]
    return text


def _bands(text: str) -> list[tuple[int, int, float, float, str]]:
    """Every range and bound `text` states, as (start, end, low, high, unit), the bounds
    inclusive."""
    bands = []
    for m in _BAND.finditer(text):
        low, high = number_value(m["low"]), number_value(m["high"])
        if low is not None and high is not None and low < high:
            bands.append((m.start(), m.end(), low, high, _singular(m["unit"])))
    for m in (*_FROM_BELOW.finditer(text), *_SUM_FROM_BELOW.finditer(text)):
        n = number_value(m["n"])
        if n is not None:
            low = n if m["word"].casefold() in _INCLUSIVE else _just_above(n)
            bands.append((m.start(), m.end(), low, float("inf"), _unit_of(m)))
    for m in _PLUS.finditer(text):
        bands.append((m.start(), m.end(), float(m["n"]), float("inf"), _unit_of(m)))
    for m in (
        *_OR_MORE.finditer(text),
        *_OR_MORE_BEFORE.finditer(text),
        *_SUM_OR_MORE.finditer(text),
    ):
        n = number_value(m["n"])
        if n is not None:
            below = m["word"].casefold() in _BELOW_WORDS
            low, high = (float("-inf"), n) if below else (n, float("inf"))
            bands.append((m.start(), m.end(), low, high, _unit_of(m)))
    for m in (*_FROM_ABOVE.finditer(text), *_SUM_FROM_ABOVE.finditer(text)):
        n = number_value(m["n"])
        if n is not None:
            high = n if m["word"].casefold() in _INCLUSIVE else _just_below(n)
            bands.append((m.start(), m.end(), float("-inf"), high, _unit_of(m)))
    return bands


def _unit_of(match: re.Match[str]) -> str:
    """A bound's unit: the currency of a sum ("over $5"), else the word after its number."""
    return match.groupdict().get("cur") or _singular(match["unit"])


def number_value(number: str) -> float | None:
    """The value of a figure ("7", "1,500") or a number word ("seven"), else None."""
    try:
        return float(number.replace(",", ""))
    except ValueError:
        return _WORD_VALUES.get(number.casefold())


def _just_above(n: float) -> float:
    return n + 1e-9


def _just_below(n: float) -> float:
    return n - 1e-9


def _singular(unit: str) -> str:
    unit = unit.casefold()
    unit = unit[:-1] if unit.endswith("s") and not unit.endswith("ss") else unit
    unit = _CHAT_UNITS.get(unit, unit)
    return "person" if unit in _HEAD_COUNTS else unit


# How chat clips a unit ("7 yrs", "8 hrs", "2 wks"): the unit the pages write.
_CHAT_UNITS = {"yr": "year", "hr": "hour", "wk": "week"}
# Words that count people, one unit for all: "my crew is 12 people" is read against "a
# crew of 3 to 10 workers", "a team of 8" against "teams of 5 or more employees".
_HEAD_COUNTS = frozenset(
    "person people worker employee staff member participant attendee individual".split()
)
