"""The answer inside a quote: a span of the type the question asks for, not in the question.

"How many credit hours can I have banked?" is answered by "up to 24 credit hours", not by a
sentence that merely speaks of credit hours; a quote holds the answer only if such a span
is in it. Spans are found by shallow, general patterns (numbers with their units, dates
and durations, capitalised names and roles, emails, links and channels, the verb a step
opens with, the complement of "X is …"), and always cut from the quote itself, so the
span a reply leads with is as verbatim as the quote. `constraints_met` checks the
question's qualifiers ("monthly", "maximum", "part-time") against the quote's context.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator, Sequence

from agent.language.questions import AnswerType, is_negated
from agent.language.ranges import (
    AskedQuantity,
    asked_quantities,
    held,
    number_value,
    tightest,
    without_held,
)
from agent.language.rules import (
    ACTION_VERBS,
    AMOUNT_ANSWERS,
    CAUSE,
    DEFINES,
    FREQUENCY,
    FREQUENCY_ASKED,
    LOCATIVE_PREPOSITIONS,
    MONEY_WRITTEN,
    MONTHS,
    NAME_ABBREVIATIONS,
    NUMBER_LEADS,
    NUMBER_WORDS,
    ORDINALS,
    ORGANISATION_NOUNS,
    PERCENT_WRITTEN,
    POLARITY,
    PREPOSITIONS,
    QUALIFIERS,
    REFINEMENTS,
    ROLE_MODIFIERS,
    ROLE_NOUNS,
    SHARE_ASKED,
    SHARE_WRITTEN,
    STARTS,
    SUBJECT_OPENERS,
    THING_NOUNS,
    TIME_UNITS,
    WEEKDAYS,
    Qualifier,
)
from store.text_forms import MARKDOWN_LINK, WORD, fold

_MAX_WORDS = 25  # a longer span is a passage, not an answer; lists excepted
_NUMERAL = (
    r"(?:[$€£]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:million|billion|thousand|k)\b)?|"
    # "18F" and "P2" are names, not numbers; "10:00" is a clock time, not a count of 10
    r"(?<![\d:])\d[\d,]*(?:\.\d+)?)(?![A-Za-z0-9]|:\d)"
)
_NOT_UNIT = (
    r"(?:and|or|to|of|in|on|at|for|the|a|an|is|are|if|per|into|from|with|by|when|until|"
    r"after|before|that|which|you|your|we|our|it|they|their|there|will|can|may|must|"
    r"should|be|was|were|has|have|had|each|every|this|these|those|than|as)"
)
_NUMBER = re.compile(
    # "one of our teams" names a member, not a quantity
    rf"{NUMBER_LEADS}?(?:{_NUMERAL}|\b{NUMBER_WORDS}\b(?!\s+of\b)"
    # a length of time said roughly ("usually takes a few days") is how long it takes
    rf"|\b(?:a\s+few|a\s+couple\s+of|several)\b(?=\s+{TIME_UNITS}\b))"
    r"(?:\s?(?:%|percent\b|percentage points?\b))?"
    r"(?:\s*\([^()\n]{1,30}\))?"  # "13 days (104 hours)"
    # its unit, up to four words ("56 more annual leave hours"), not the clause after it
    rf"(?:[ \t]+(?!{_NOT_UNIT}\b)[a-z][\w-]*){{0,4}}"
    r"(?:\s*\([^()\n]{1,30}\))?"
    r"(?:[ \t]+(?:per|a|an|each|every|of)[ \t]+(?:(?:the|your|their|its)[ \t]+)?[\w-]+"
    r"(?:[ \t]+(?!(?:and|or|to|of|in|on|at|for|the|if|is|are)\b)[a-z][\w-]*)?)?",
    re.I,
)
_DATE = re.compile(
    rf"\b(?:{WEEKDAYS}s?(?:,?\s+{MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?)?|"
    rf"{MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?|"
    rf"\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTHS}(?:\s+\d{{4}})?|"
    rf"{MONTHS}\s+\d{{4}}|"
    r"\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?|"
    r"\d{1,2}(?::\d{2})?\s?(?:[ap]\.?m\.?)(?=\W|$)|\d{1,2}:\d{2}|noon|midnight|"
    # a duration or a deadline relative to something ("within 3 business days of")
    rf"(?:(?:within|after|before|for|up to|at least|every|each|by|until)\s+)?"
    rf"(?:\d+|{NUMBER_WORDS}|a|an)(?:\s*\(\d+\))?[\s-]+{TIME_UNITS}"
    r"(?:\s+(?:after|before|of|from|prior to|following|in advance)(?:\s+[\w'-]+){1,3})?|"
    r"(?:the\s+)?(?:end|start|beginning|close) of (?:the |each |every |your )?(?:[\w-]+\s+)?"
    r"(?:day|week|month|year|quarter|pay ?period|leave year|fiscal year|business day)|"
    r"(?:every|each) (?:other )?(?:day|week|month|year|pay ?period)|"
    # a period named from another ("roll into the following month", "paid in the next
    # pay run") and a day of every month ("by the 20th of the month"), as payroll and
    # leave rules in any workplace name their dates
    r"(?:the\s+)?(?:following|next|same) (?:business |working )?(?:day|week|month|year|"
    r"quarter|pay ?period|pay ?run|payroll)|"
    r"(?:the\s+)?\d{1,2}(?:st|nd|rd|th) of (?:the|each|every)"
    r"(?: previous| prior| next| following| same| current)? month|"
    # a point counted in days: "from the fourth consecutive day of sickness" answers
    # "when do I need a doctor's note?" as a date would (h22)
    rf"(?:from|on|after|by|until|before|starting(?: on| from)?) (?:the|your|their|its) "
    rf"{ORDINALS}\s+{TIME_UNITS}|"
    r"(?:daily|weekly|biweekly|monthly|quarterly|annually|yearly|immediately|"
    r"today|tomorrow|yesterday)|"
    r"(?:1[5-9]\d{2}|20\d{2})(?:s)?|"
    # an earlier year, told from a count by the word that introduces it ("in 1206",
    # "until 1368", "by 1271,"): histories of any century put a year there, and a count
    # after "in" ("in 1200 stores") goes on with the thing counted, which rules it out
    r"(?:(?<=\bin )|(?<=\bby )|(?<=\bsince )|(?<=\buntil )|(?<=\bfrom )|(?<=\bafter )|"
    r"(?<=\bbefore )|(?<=\baround )|(?<=\bcirca )|(?<=\bduring ))"
    r"1[0-4]\d{2}(?=[ \t]*(?:[,.;:)\n]|$|[-–]\d|[ \t]+(?:(?-i:[A-Z])|(?:and|or|to|when|the|"
    r"a|an|he|she|it|they|as|with|after|before|until|while)\b)))|"
    # a century, the date a "what century" question asks for ("the 10th century",
    # "the late eighteenth century"), as any history or company timeline writes it
    rf"(?:(?:early|mid|late)[ -])?(?:{ORDINALS}|thirteenth|fourteenth|fifteenth|sixteenth|"
    r"seventeenth|eighteenth|nineteenth|twentieth|twenty-first)[ -]century|"
    # years of an era, as histories write them
    r"\d{1,4}\s?(?:BC|BCE|AD|CE))(?:\b|(?<=\.))",
    re.I,
)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(r"https?://[^\s<>()\[\]]+[^\s<>()\[\].,;:!?'\"]")
_CHANNEL = re.compile(r"(?<![\w&])#[a-z0-9][\w.-]*[a-z0-9]", re.I)
_HANDLE = re.compile(r"(?<![\w.])@[\w.-]*\w")
_PHONE = re.compile(
    r"(?<!\w)\+?\(?\d{3}\)?[\s.-]\d{3}[\s.-]\d{4}(?!\w)|"
    # an international number, written with its country code ("+31 20 555 0199",
    # "+44 20 7946 0958"): a "+", the country code, then groups of digits (h22)
    r"(?<![\w+])\+\d{1,3}[\s.-]?\(?\d{1,4}\)?(?:[\s.-]?\d{2,4}){2,4}(?!\w)|"
    # a local number ("the staff information line, 555-0142") and a national free-call
    # one ("the card hotline, 1800 555 017", "1300 …")
    # (an exchange opens with 2-9: "100-1000 staff" is a range)
    r"(?<![\w$£€.,-])[2-9]\d{2}-\d{4}(?![\w-])|"
    r"(?<![\w.,-])1[38]00[\s-]\d{3}[\s-]\d{3,4}(?![\w-])|"
    # an internal line ("call the staffing office at ext. 4410", "extension 2200"): the
    # number a workplace's own phones dial
    r"(?<!\w)(?:ext\.?|extension)\s?\d{2,6}(?!\w)"
)
# The contact type nouns (agent/language/rules.py TYPE_NOUNS, as stemmed; "e-mail" is
# read as "mail") that name one medium, and how that medium is written.
_MEDIA: dict[str, re.Pattern[str]] = {
    "email": _EMAIL,
    "mail": _EMAIL,
    "phone": _PHONE,
    "link": _URL,
    "url": _URL,
    "websit": _URL,
    "channel": _CHANNEL,
}
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(.+)$", re.M)
_CAPITALISED = re.compile(
    r"(?:[A-Z][\w’'.&-]*|\d+[A-Z][\w-]*)(?:\s+(?:(?:of|the|for|and|de|la|von|van|&)\s+)*"
    r"(?:[A-Z][\w’'.&-]*|\d+[A-Z]?\w*))*"
)
# A word ending in a full stop followed by space, inside a capitalised run.
_SENTENCE_STOP = re.compile(r"([\w’'.&-]*?\w)\.\s+(?=\S)")
# (The full stop of a dotted initialism ends no clause: "the D.C. office", "e.g. a").
_BREAK = (
    # A full stop ends a clause, after Markdown's closing emphasis too ("**Lock your
    # computer before leaving it.** Press …"), not after a dotted initialism ("D.C.").
    r"(?:[;:—–]|,\s+(?:but|and|or|so|which|unless|if)\b|(?<!\b[^\W\d_]\.[^\W\d_])\.[*_]*\s|\n)"
)
# The spaces before a break are taken only from where their run starts: tried from
# inside a run of thousands, they were retried at every one of them, quadratically.
_CLAUSE_BREAK = re.compile(rf"(?:(?<!\s)\s*{_BREAK}|(?<=\s){_BREAK})\s*")


def _links_masked(text: str) -> str:
    """`text` with each Markdown link blanked to as many "x", so that positions found in
    it are positions in `text` and nothing inside a link is found."""
    return MARKDOWN_LINK.sub(lambda m: "x" * len(m.group(0)), text)


def _clauses(text: str) -> list[str]:
    """`text` cut at its clause breaks, never inside a link's `[text](address)`: the ':'
    of "https://" and the dots of a host end no clause, in any knowledge base (as a
    sentence never ends inside a link, agent/sentences.py), so a span is never cut to
    "see [the guide](https"."""
    masked = _links_masked(text)
    pieces, start = [], 0
    for found in _CLAUSE_BREAK.finditer(masked):
        pieces.append(text[start : found.start()])
        start = found.end()
    return [*pieces, text[start:]]


# Capitalised words that are not names when they open a sentence or stand alone.
_COMMON = frozenset(
    """a an the this that these those it its he she they we you i his her their our your
    in on at of for to from by with and or but if when where while after before as during
    there here what which who how why however also some many most all any each one two
    first second new other such no yes not please note see if once then for example""".split()
)


def find_span(quote: str, kind: AnswerType, question: str) -> str:
    """The first span of `quote` of the type `kind` that `question` does not hold, or "".

    A question stating a quantity ("after 4 years") of a quote of bands, a line each ("3
    to 6 years of service: 20 days a year"), is answered on the line whose band holds it,
    by a span other than that band (agent/language/ranges.py)."""
    quantities = asked_quantities(question)
    if quantities and "\n" in quote:
        # The line bounding the asker's number most closely first: "From 7 years" before
        # "From 3 years" for "after 7 years".
        lines = [line for line in quote.splitlines() if held(quantities, line)]
        for line in sorted(lines, key=lambda line: tightest(quantities, line)):
            blanked = without_held(quantities, line)
            span = _first_span(blanked, kind, question, quantities, verbatim_in=line)
            if span:
                return span
    return _first_span(quote, kind, question, quantities)


def _first_span(
    quote: str,
    kind: AnswerType,
    question: str,
    quantities: tuple[AskedQuantity, ...],
    verbatim_in: str | None = None,
) -> str:
    """The first span of `quote` of the type `kind`; with `verbatim_in`, the text `quote`
    was blanked from, only a span written there as it is (none across a blank)."""
    said = _said(question)
    wanted = [s for q, s, _why in REFINEMENTS if q.search(question) and _narrows(s, kind)]
    if PERCENT_WRITTEN in wanted:
        # "what percentage is the service charge?": "22% of the food and beverage total",
        # a share of the sum, with no currency of its own.
        wanted = [w for w in wanted if w is not MONEY_WRITTEN]
    elif SHARE_ASKED.search(question):
        wanted = [SHARE_WRITTEN if w is MONEY_WRITTEN else w for w in wanted]
    if FREQUENCY_ASKED.search(question):
        wanted.append(FREQUENCY)
    # A yes/no question's own words with a "not" it lacks are its answer ("Your Sick
    # Leave **will not** be paid out" for "will my sick leave be paid out?"), though
    # they add no other word to it.
    denied = kind == "yes_no" and not is_negated(question)
    for finder in _FINDERS.get(kind, (_entity,)):
        for span in finder(quote, question):
            span = span.strip(" ,;:—–-*")
            short = len(span.split()) <= _MAX_WORDS or _LIST_ITEM.search(span)
            refined = all(w.search(span) for w in wanted)
            # A figure asked for is not the asker's own band ("more than 3 years" for
            # "after 4 years"); a yes/no clause may hold it as its condition.
            restated = kind in ("number", "date") and bool(held(quantities, span))
            verbatim = verbatim_in is None or span in verbatim_in
            new = _new(span, said) or (denied and is_negated(span))
            if span and new and short and refined and not restated and verbatim:
                return span
    return ""


# One answer of each kind that a refinement of that kind accepts (agent/language/rules.py
# REFINEMENTS): money and percentages narrow a number, a clock time narrows a date.
_REFINED_KINDS = {"number": "$5, 5 percent", "date": "at 9:00 am"}


def _narrows(refined: re.Pattern[str], kind: AnswerType) -> bool:
    """Whether a refinement applies to a question asking for `kind`: it narrows that kind,
    or the kind is open (an entity); a person, a place, a contact or steps it does not.
    "When is salary paid?" names salary as its topic but asks for a date ("monthly"),
    which no amount of money answers. A yes or no is never narrowed:
    "does the studio cover the fee?" is answered by "there is no fee" as by "50% of the
    fee", neither of which is written with a currency."""
    if kind == "yes_no":
        return False
    if kind != "entity" and kind not in _REFINED_KINDS:
        # "who signs off a course that costs £800?" asks for a person: the sum is its
        # condition, and no name or role is written with a currency.
        return False
    example = _REFINED_KINDS.get(kind)
    return example is None or bool(refined.search(example))


def spells_its_type(
    span: str,
    kind: AnswerType,
    *,
    unit: str = "",
    start: bool = False,
    nouns: Iterable[str] = (),
    whom: bool = False,
) -> bool:
    """Whether `span` is itself what the question's type nouns name (agent/language/rules.py
    TYPE_NOUNS): for "who should I email?" an address, a link, a channel or a number to
    call (a role such as "the payroll team" says whom, not where to write, unless the
    question asks `whom` and names no medium: "who do I contact?"); a number or a
    date span is the measure or the date asked. When the noun is a start ("when does the
    leave year start?"), only in a `unit` that says something starts ("runs from 1
    April"): "approved within two working days" is a date, but of no start."""
    if kind == "date" and start:
        return bool(STARTS.search(unit))
    if kind != "contact":
        return True
    # A medium named (the type `nouns`, stemmed: "what's the email for X?") is answered in
    # that medium: an extension to call is no email address, in any knowledge base.
    media = [_MEDIA[n] for n in nouns if n in _MEDIA]
    # Asked `whom` to contact or reach, naming no medium, a role or a name is the answer
    # ("who do I contact?" "raise it with your outlet manager").
    if whom and not media:
        return True
    return any(p.search(span) for p in (media or (_EMAIL, _URL, _CHANNEL, _HANDLE, _PHONE)))


def names_an_answer(quote: str, question: str) -> bool:
    """Whether `quote` holds a name (a capitalised phrase, not a sentence's first word) that
    `question` does not: what a "which system" or "which app" question is answered by."""
    said = _said(question)
    return any(_new(name, said) for name in _names(quote, question))


def asked_qualifiers(question: str, kind: AnswerType) -> list[Qualifier]:
    """The qualifiers `question` carries that constrain an answer of type `kind`."""
    return [
        q
        for q in QUALIFIERS
        if q.asked.search(question) and (not q.amount or kind in AMOUNT_ANSWERS)
    ]


def unmet_qualifiers(question: str, context: str, kind: AnswerType) -> list[Qualifier]:
    """The qualifiers `question` carries that `context` (the sentence, its heading path and
    its document's title) does not say."""
    return [q for q in asked_qualifiers(question, kind) if not q.met.search(context)]


def constraints_met(question: str, context: str, kind: AnswerType) -> bool:
    return not unmet_qualifiers(question, context, kind)


def _said(question: str) -> frozenset[str]:
    """The question's words as said (`_as_said`), each part of a hyphenated word apart:
    what `_new` compares a span against, computed once per question and quote."""
    return frozenset(_as_said(part) for w in WORD.findall(question) for part in fold(w).split("-"))


def _new(span: str, said: frozenset[str]) -> bool:
    """The span says something the question does not: a word of it is not asked. Words
    are compared part by part of a hyphenated word and as said: "seven" restates the
    asker's "7" (the "7 day rotating roster" a page writes "seven-day"), "part-time"
    their "part time". A plural is not read as its singular: measured, "Fridays" for a
    question about a friday still told something (bench/results/answer_eval.md)."""
    words = [fold(w) for w in WORD.findall(span)]
    content = [w for w in words if w not in _COMMON]
    return any(
        any(_as_said(part) not in said for part in w.split("-") if part) for w in content or words
    )


def _as_said(word: str) -> str:
    """A folded word as it is said: a number word as its figure."""
    value = number_value(word)
    if value is not None and value.is_integer():
        return str(int(value))
    return word


# --- finders, each yielding candidate spans in the quote's order -------------------------

Finder = Callable[[str, str], Iterable[str]]


# A link's address, or a bare one up to the next space: wider than `_URL` (the span of
# an address a reply shows), since every digit of "…?via_email=1" or "…/x9\">" is the
# address's, not a quantity; an email address's digits too ("hspd12.security@gsa.gov").
# (An email address starts where a word does: tried from inside a 100,000-character
# word, its first part would be retried at every character, quadratically.)
_ADDRESS = re.compile(
    r"\]\([^)\s]*\)|\bhttps?://\S+|\bwww\.\S+|(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.I
)


def _numbers(quote: str, question: str) -> list[str]:
    return [m.group() for m in _ranked_numbers(quote, question)]


def _ranked_numbers(quote: str, question: str) -> list[re.Match[str]]:
    # A digit inside an address ("trello.com/b/b1xsDX88") counts nothing.
    addresses = [m.span() for m in _ADDRESS.finditer(quote)]
    found = [
        m
        for m in _NUMBER.finditer(quote)
        if not _list_marker(quote, m) and not any(a <= m.start() < b for a, b in addresses)
    ]
    asked = {fold(w) for w in WORD.findall(question)}

    def shared(text: str) -> int:
        words = {fold(w) for w in WORD.findall(text) if not any(c.isdigit() for c in w)}
        return len((words - _COMMON) & asked)

    stretches = _stretches(quote, found)
    # A span that shares a unit word with the question ("credit hours") comes first; then
    # the one whose stretch names the question's case. A sentence giving a value for each
    # case ("$75 per day for domestic travel and $95 per day for international travel")
    # answers "… for international trips?" with the value of the case it names, in any
    # knowledge base that words its figures so.
    ranked = sorted(
        zip(found, stretches, strict=True),
        key=lambda pair: (-shared(pair[0].group()), -shared(pair[1])),
    )
    return [m for m, _stretch in ranked]


def _quantities(quote: str, question: str) -> list[str]:
    """The numbers of `quote` that can answer "how many / how much": a number written as
    part of a calendar date ("Today, January 25th, 2022, you have …", "On 31 December
    1687", "(born 1920)", "about 1820", "in 1806-07") dates something, and one of a
    phone number ("line, 555-0142") is dialled: neither counts anything, whatever the
    knowledge base ("what year" asks for a date, not a number). A year-shaped figure
    with its unit ("2000 employees") counts."""
    dated = sorted(m.span() for pattern in (_DATED, _PHONE) for m in pattern.finditer(quote))
    starts = [a for a, _b in dated]

    def in_a_date(number: re.Match[str]) -> bool:
        numeral = _NUMERAL_IN.search(number.group())
        if numeral is None:
            return False  # a number word ("two")
        at = number.start() + numeral.start()
        # The dated stretch starting last at or before it (they may overlap: look back
        # over every one that starts there or before, nearest first, until one holds it).
        for k in range(bisect.bisect_right(starts, at) - 1, -1, -1):
            if dated[k][0] <= at < dated[k][1]:
                return True
            if at - dated[k][0] > _LONGEST_DATED:
                break
        return False

    return [m.group() for m in _ranked_numbers(quote, question) if not in_a_date(m)]


# No date or phone number written is longer: the look-back above stops there.
_LONGEST_DATED = 40
_NUMERAL_IN = re.compile(r"\d")
# Month names written as names (capitalised, whole or cut): "5 may be" and "3 Marketing
# staff" are no dates.
_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\b\.?"
)
_YEAR = r"(?:1[6-9]|20)\d\d"
_DATED = re.compile(
    rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}(?:,?\s+{_YEAR}\b)?"  # 31 December 1687
    rf"|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?:,?\s+{_YEAR}\b)?"  # January 25th, 2022
    # a year with no unit after it ("in 1806-07", "born 1920)", "In 2019 the office");
    # "2000 employees" counts
    rf"|\b{_YEAR}(?:s|\s*[-–/]\s*\d{{2}})?\b(?!\s+(?!{_NOT_UNIT}\b)[a-z])"
)


def _stretches(quote: str, numbers: Sequence[re.Match[str]]) -> list[str]:
    """What each number of `quote` says of itself: the text from it to the next number
    or to the end of its clause, whichever comes first."""
    masked = _links_masked(quote)
    breaks = [b.start() for b in _CLAUSE_BREAK.finditer(masked)]
    stretches = []
    for index, number in enumerate(numbers):
        following = numbers[index + 1].start() if index + 1 < len(numbers) else len(quote)
        clause_end = next((b for b in breaks if b >= number.end()), len(quote))
        stretches.append(quote[number.start() : min(following, clause_end)])
    return stretches


def _list_marker(quote: str, match: re.Match[str]) -> bool:
    """ "1." opening a list item is a marker, not a number."""
    before = quote[: match.start()].rsplit("\n", 1)[-1]
    return not before.strip() and bool(re.match(r"\d+[.)]\s", quote[match.start() :]))


def _amounts(quote: str, question: str) -> list[str]:
    """The numbers of `quote` that are sums of money or shares ("$60 per month", "50% of
    the fee"), not counts: "11 paid holidays" says nothing of whether Columbus Day is one."""
    return [n for n in _numbers(quote, question) if _MONEY_OR_SHARE.search(n)]


_MONEY_OR_SHARE = re.compile(r"[$€£%]|\b(?:percent|dollars?|euros?|pounds?)\b", re.I)


def _dates(quote: str, question: str) -> list[str]:
    found = [m.group() for m in _DATE.finditer(quote)]
    # "when should I do a safe drop?" is answered by the occasion: "When a drawer holds
    # more than $500 in bills, call the shift lead for a safe drop." (not "how long")
    occasion = _OCCASION.match(quote.strip()) if _ASKS_WHEN.search(question) else None
    return [*found, occasion.group(1)] if occasion else found


_ASKS_WHEN = re.compile(r"^\W*(?:\w+\W+){0,3}?when\b", re.I)
_OCCASION = re.compile(
    r"^((?:when|whenever|once|as soon as|every time|each time)\b[^,;.]{3,}?),", re.I
)


def _contacts(quote: str, question: str) -> list[str]:
    found: list[tuple[int, str]] = []
    for pattern in (_EMAIL, _CHANNEL, _HANDLE, _PHONE):
        found += [(m.start(), m.group()) for m in pattern.finditer(quote)]
    found += [(m.start(), m.group(1)) for m in MARKDOWN_LINK.finditer(quote) if m.group(1)]
    linked = MARKDOWN_LINK.sub(" ", quote)
    found += [(m.start(), m.group()) for m in _URL.finditer(linked)]
    return [span for _, span in sorted(found)]


def _names(quote: str, question: str) -> list[str]:
    """Capitalised phrases that are not a sentence's opening word alone."""
    return [name for _, _, name in _placed_names(quote)]


def _people(quote: str, question: str) -> list[str]:
    """Names that may be a person: not right after a preposition of place ("announced in
    Stockholm" says where, whoever the question asks for), and not part of a date ("on 4
    October": a month is capitalised in any English text, a person it is not)."""
    plain = MARKDOWN_LINK.sub(lambda m: m.group(1) or " ", quote)

    def names_a_thing(start: int, name: str) -> bool:
        # "the Atlas pipeline": a name before a noun of a thing names that thing
        after = plain[start + len(name) :].split(maxsplit=1)[:1]
        return bool(after) and after[0].strip(".,;:!?").casefold() in THING_NOUNS

    return [
        name
        for before, start, name in _undated_names(quote)
        if before not in LOCATIVE_PREPOSITIONS
        and not names_a_thing(start, name)
        # a name with a number is a street, a room or a model ("2201 County Road 6",
        # "Building 4"), no person's
        and not any(c.isdigit() for c in name)
    ]


def _undated_names(quote: str) -> list[tuple[str, int, str]]:
    """`_placed_names` that are not part of a date: "Monday" and "4 October" say when, in
    any English text, never where or who."""
    plain = MARKDOWN_LINK.sub(lambda m: m.group(1) or " ", quote)
    dates = [m.span() for m in _DATE.finditer(plain)]
    return [
        (before, start, name)
        for before, start, name in _placed_names(quote)
        if not any(a <= start < b for a, b in dates)
    ]


def _placed_names(quote: str) -> list[tuple[str, int, str]]:
    """(the word before, where it starts, the name) for each name `_names` finds, in the
    quote with its Markdown links read as their text; the word before folded."""
    plain = MARKDOWN_LINK.sub(lambda m: m.group(1) or " ", quote)
    found = []
    for match in _sentence_pieces(_CAPITALISED.finditer(plain)):
        phrase = match.group().strip(" .")
        words = phrase.split()
        before = plain[: match.start()].rstrip()
        opening = not before or before[-1] in ".:!?\n-*#>"
        # A sentence opening with a preposition is capitalised for the sentence: "Within
        # 36 hours …" names nothing called "Within 36".
        while words and (
            words[0].casefold() in _COMMON or (opening and words[0].casefold() in PREPOSITIONS)
        ):
            words = words[1:]
        if not words:
            continue
        if len(words) == 1 and opening and not words[0].isupper():
            continue  # a sentence's capitalised first word
        offset = phrase.index(words[0])
        dropped = phrase[:offset].split()  # "The" of "The Hague"
        previous = dropped[-1] if dropped else (WORD.findall(before) or [""])[-1]
        found.append((fold(previous), match.start() + offset, " ".join(words)))
    return found


class _Piece:
    """A stretch of a `_CAPITALISED` match, with the match's `group()` / `start()`."""

    def __init__(self, text: str, start: int) -> None:
        self._text, self._start = text, start

    def group(self) -> str:
        return self._text

    def start(self) -> int:
        return self._start


def _sentence_pieces(matches: Iterable[re.Match[str]]) -> Iterator[_Piece]:
    """Each capitalised run cut where a sentence ends inside it: "… to HR. Payroll pays"
    is "HR", then a new sentence, not one name "HR. Payroll". A full stop after an
    initial ("J. R. R. Tolkien"), a dotted initialism ("U.S. Army") or a title
    abbreviation ("Dr. Jane Smith", `NAME_ABBREVIATIONS`) is inside the name."""
    for match in matches:
        text, start = match.group(), match.start()
        for stop in _SENTENCE_STOP.finditer(text):
            word = stop.group(1)
            if len(word) == 1 or "." in word or word.casefold() in NAME_ABBREVIATIONS:
                continue
            yield _Piece(text[: stop.end(1) + 1], start)
            text, start = text[stop.end() :], start + stop.end()
        yield _Piece(text, start)


# "of Learning", "of People Operations": what a titled role heads.
_DEPARTMENT = re.compile(r"\sof\s(?:the\s)?[A-Z][\w’'&-]*(?:\s(?:and\s|&\s)?[A-Z][\w’'&-]*){0,3}")
# A person's name in apposition after a role: two or three capitalised words.
_NAMED_AFTER_ROLE = re.compile(r",?\s(?:[A-Z][a-z’'-]+)(?:\s[A-Z][a-z’'-]+){1,2}\b")


def _names_a_person(name: str) -> bool:
    """Whether capitalised words after a role may be a person's name: none is a word that
    opens sentences ("On", "The") or says when ("Monday", "October")."""
    words = [w.casefold() for w in WORD.findall(name)]
    return not any(w in _COMMON or _DATE.fullmatch(w.capitalize()) for w in words)


def _roles(quote: str, question: str) -> list[str]:
    """Role phrases ("your immediate supervisor", "the Business Unit Director"), a pair
    joined by "and"/"or" kept whole."""
    tokens = list(WORD.finditer(quote))
    spans: list[tuple[int, int]] = []
    for i, token in enumerate(tokens):
        if token.group().casefold() not in ROLE_NOUNS:
            continue
        start = i
        while start > 0 and i - start < 3:
            word = tokens[start - 1].group()
            # A role is one run of words: "Vanguard: the board" is a heading and a role,
            # and no punctuation sits inside a role's name in any text.
            between = quote[tokens[start - 1].end() : tokens[start].start()]
            if between.strip():
                break
            # A capital that only opens the sentence makes no name ("Contact the payroll
            # officer"), unless the next word is capitalised too ("Finance Director").
            opens = not quote[: tokens[start - 1].start()].strip() or quote[
                : tokens[start - 1].start()
            ].rstrip().endswith((".", "!", "?", ":", "\n"))
            if word.casefold() in ROLE_MODIFIERS or (
                word[:1].isupper() and (not opens or tokens[start].group()[:1].isupper())
            ):
                start -= 1
            else:
                break
        # The person a role names just after it ("the privacy officer Tom Brannigan",
        # "the WHS manager, Dana Ortiz") is who is asked for: the role and the name whole.
        end = token.end()
        # A titled role's department is part of its name ("the Head of Learning",
        # "Director of People Operations").
        department = _DEPARTMENT.match(quote, end) if token.group()[:1].isupper() else None
        end = department.end() if department else end
        named = _NAMED_AFTER_ROLE.match(quote, end)
        if named and not _names_a_person(named.group()):
            named = None
        spans.append((tokens[start].start(), named.end() if named else end))
    joined: list[tuple[int, int]] = []
    for start, end in spans:
        if joined and re.fullmatch(r",?\s+(?:and|or)\s+|,\s+", quote[joined[-1][1] : start]):
            joined[-1] = (joined[-1][0], end)
        else:
            joined.append((start, end))
    return [quote[a:b] for a, b in joined]


def _organisations(quote: str, question: str) -> list[str]:
    return [
        n
        for n in _names(quote, question)
        if n.isupper() or any(w.casefold() in ORGANISATION_NOUNS for w in n.split())
    ]


def _places(quote: str, question: str) -> list[str]:
    where = re.finditer(
        r"\b(?:in|at|on|from|to|via|through|under)\s+((?:the\s+)?(?:[\w’'-]+\s+){0,5}"
        r"(?:page|site|website|portal|app|folder|drive|tab|form|system|channel|office|room|"
        r"floor|building|wiki|handbook|repository|repo|tool|menu|section|directory|"
        # the places of a workplace a person walks to ("at reception", "in the basement
        # garage", "at the light pole in the far corner of the parking lot")
        r"reception|desk|entrance|lobby|kitchen|garage|basement|lot|corner|area|cabinet|"
        r"locker|cupboard|shelf|counter|warehouse|yard|"
        # and where things are put ("drop used coats in the blue bins by the east stairwell")
        r"bin|box|tray|rack|stairwell|corridor|hallway|noticeboard|"
        # and the sites of a workplace ("at both depots", "in the staff car park")
        r"depot|dock|gate|car\s+park|parking|station|ward|"
        # and where things are sent ("shipped to your home address on file"; a bare
        # "address" may be a speech: "in his State of the Union address")
        r"(?:home|mailing|postal|street|shipping|delivery|office|work)\s+address)s?)\b",
        quote,
        re.I,
    )
    # The point people gather at is a place by what it is called, with what the page
    # says it is ("the assembly point (the staff car park at both depots)").
    gathering = re.finditer(
        r"\b(?:the\s+)?(?:[\w’'-]+\s+)?(?:assembly|meeting|muster|evacuation|collection|"
        r"rally|rendezvous)\s+(?:point|area|station)s?\b(?:\s*\([^()\n]{1,80}\))?",
        quote,
        re.I,
    )
    # A place named with what it is ("in the Atlas room", "on the Benefits page") before a
    # bare name, which may be part of it ("Atlas") or another thing the sentence names.
    names = [name for _before, _start, name in _undated_names(quote)]
    return [
        *_contacts(quote, question),
        *(m.group() for m in gathering),
        *(m.group(1) for m in where),
        *names,
    ]


def _polar(quote: str, question: str) -> list[str]:
    """The clause stating the yes or the no: the one with a polarity word, or an instruction
    ("Can I create a private repo?" is answered by "Ask Tech Operations before creating
    private repositories": what one must do first), most of the question's words first;
    of as many, one saying what the question ends on, its predicate ("do credit hours
    expire?" is answered by "they never expire", not "The hours will rollover")."""
    words = [fold(w) for w in WORD.findall(question)]
    asked = set(words)
    predicate = next((w for w in reversed(words) if w not in _COMMON and len(w) > 2), "")
    clauses = [c for c in _clauses(quote) if c and (POLARITY.search(c) or _instructs(c))]

    def rank(clause: str) -> tuple[int, bool]:
        said = [fold(w) for w in WORD.findall(clause)]
        ends = bool(predicate) and any(w[:5] == predicate[:5] for w in said)
        return -len(set(said) & asked), not ends

    return sorted(clauses, key=rank)


_LEAD_IN_COLON = re.compile(r":(?=\s)")


def _listed(quote: str, question: str) -> list[str]:
    """The lead-in of a list that names, in one of its items, a word of the question ("is
    Juneteenth a holiday?" and "11 paid holidays: New Year's Day, …, Juneteenth, …"):
    being listed is the yes, in any knowledge base. A word several items share ("Day")
    picks no item, so "is Columbus Day a holiday?" finds no span in the same list."""
    colon = _LEAD_IN_COLON.search(quote)  # not the ':' of "https://" or "10:00"
    if colon is None or not quote[: colon.start()].strip():
        return []
    head, rest = quote[: colon.start()], quote[colon.end() :]
    items = [i for i in re.split(r"\n|,|;|\band\b|\bor\b", rest) if i.strip()]
    if len(items) < 3:
        return []
    asked = {fold(w) for w in WORD.findall(question) if len(w) > 2} - _COMMON
    words = [{fold(w) for w in WORD.findall(item)} for item in items]
    picked = any(sum(w in ws for ws in words) == 1 for w in asked)
    return [head.strip()] if picked else []


def _instructs(clause: str) -> bool:
    """Whether `clause` opens with the verb of an instruction ("Ask …", "Submit …"), or
    is one after its condition ("If you have a conflicting meeting, prioritize your
    project work first!"): in English a main clause after "If …," that has no subject
    is an imperative, whatever its verb, so the words that open a subject rule it out."""
    words = clause.split()
    if bool(words) and words[0].strip("*_`“”\"'([").casefold() in ACTION_VERBS:
        return True
    condition = _CONDITION.match(clause)
    if condition is None:
        return False
    first = condition.group(1)
    # A verb of command is bare: "employees" and "applies" open a subject or a statement
    # ("To qualify, employees must …"); "press" and "access" are bare all the same.
    bare = not first.endswith("s") or first.endswith("ss")
    return first.islower() and bare and first.casefold() not in SUBJECT_OPENERS


# "If you …, do …": a condition, then the main clause's first word.
_CONDITION = re.compile(
    # a condition, or the purpose a step serves ("To roll back, run …")
    r"^(?:if|when|whenever|once|before|after|unless|to)\b[^,;.]{3,}?,\s+(\w+)",
    re.I,
)


def _steps(quote: str, question: str) -> list[str]:
    """The lead-in of a list of steps, or the clause a step's verb opens: after its
    condition or purpose too ("To roll back, run atlas rollback"), whatever its verb."""
    found = []
    if _LIST_ITEM.search(quote):
        found.append(quote.strip())  # the steps or items, quoted with their lead-in
    opened = _CONDITION.match(quote.strip())
    if opened and _instructs(quote.strip()):
        found.append(_clauses(quote.strip()[opened.start(1) :])[0])
    for clause in _clauses(quote):
        # A verb of the condition is none of the steps ("If you use other tools, …").
        condition = _CONDITION.match(clause)
        words = clause[condition.start(1) :].split() if condition else clause.split()
        for i, word in enumerate(words[:8]):
            bare = word.strip("*_`“”\"'(").casefold()
            before = " ".join(words[max(0, i - 3) : i]).casefold()
            imperative = i == 0 or re.search(
                r"(?:you|to|please|must|should|can|will|need to|then|first|,)$", before
            )
            # "… and how to request it" says what a page tells, not what to do.
            told = re.search(r"\b(?:how|whether|what|where|when|which)\s+to$", before)
            if bare in ACTION_VERBS and imperative and not told:
                found.append(" ".join(words[i:]))
                break
    # A step that only sends the reader to another page is where the steps are, not them;
    # nor is what it says the page tells ("… page to check whether it is approved, and how
    # to request it").
    pointers = [step for step in found if _REFERRAL.match(step)]
    return [step for step in found if not any(step in p for p in pointers)]


# "follow the instructions on the [Software](…) page to …", "see the Timesheets page",
# "refer to [the travel guide](…) for details": in any wiki, a pointer to the page that
# holds the steps. The page it points to answers "how do I …?"; the pointer does not.
_REFERRAL = re.compile(
    # a verb of reading, and a link or a capitalised title with "page" after it …
    r"(?i:(?:please\s+)?(?:see|read|consult|refer\s+to|follow\s+the\s+"
    r"(?:instructions|steps|guidance|guide|process)\s+(?:on|in|at))\s+(?:the\s+|our\s+)?)"
    r"(?:\[[^\]\n]*\]\([^)\s]*\)|[A-Z][^.;:()\n]{0,60}?\s+(?i:page|section|article|wiki)\b)"
    # … or of going somewhere, to a page by name: "check [your profile](…)" is a step in
    # a tool; "check the Holidays page", "visit the [Pay](…) page" send to the page
    r"|(?i:(?:please\s+)?(?:check|visit|go\s+to)\s+(?:the\s+|our\s+)?)"
    r"(?:\[[^\]\n]*\]\([^)\s]*\)|[A-Z][^.;:()\n]{0,60}?)\s+(?i:page|section|article|wiki)\b"
)


def _items(quote: str, question: str) -> list[str]:
    listed = [quote.strip()] if _LIST_ITEM.search(quote) else []
    series = re.findall(
        r"(?:[\w’'-]+(?:\s+[\w’'-]+){0,3},\s+){1,}(?:and|or)\s+[\w’'-]+(?:\s+[\w’'-]+){0,3}",
        quote,
    )
    return [*listed, *series]


def spelled_out(quote: str, question: str) -> str:
    """The words an acronym of `question` stands for when `quote` spells it out as the
    first words of its lines ("HEART": "1. **Hear** the guest out", "2. **Empathize**
    …"), joined ("Hear, Empathize, Apologize, Resolve, Thank"); "" if it does not.

    Handbooks define their mnemonics so (RACE for a fire, PASS for an extinguisher) and
    never write the expansion in one sentence. The acronym is a word of 3 to 8 letters the
    question writes in capitals or the quote does ("what does heart stand for")."""
    firsts = [_first_word(line) for line in quote.splitlines() if line.strip()]
    initials = "".join(w[:1].upper() if w else "\0" for w in firsts)
    for word in dict.fromkeys(WORD.findall(question)):
        acronym = word.upper()
        written = word.isupper() or re.search(rf"\b{re.escape(acronym)}\b", quote)
        if not (3 <= len(word) <= 8 and word.isalpha() and written):
            continue
        at = initials.find(acronym)
        if at >= 0:
            return ", ".join(firsts[at : at + len(acronym)])  # type: ignore[arg-type]
    return ""


def _first_word(line: str) -> str | None:
    """The first word of a line past its list marker, bold and a lone letter's label
    ("**R** – Rescue"); None for a line that opens with no word."""
    plain = _LINE_LABEL.sub("", line.replace("**", "").replace("__", ""))
    found = re.match(r"[^\W\d_][\w’'-]*", plain)
    return found.group() if found else None


_LINE_LABEL = re.compile(r"^\s*(?:(?:[-*+•]|\d+[.)])\s+)?(?:[A-Za-z]\s*[:–—=.)-]\s+)?")


def _definitions(quote: str, question: str) -> list[str]:
    asked = {fold(w) for w in WORD.findall(question)}
    spelled = spelled_out(quote, question)
    if spelled:
        return [spelled]
    # A link's address is no part of a definition: "[Trello](https://trello.com/) is a
    # tool" has no expansion "(https://trello.com/)", nor a colon after "https".
    masked = _links_masked(quote)
    # "TK (to come)": an expansion right after the word asked about comes first.
    found = [
        quote[m.start(2) : m.end(2)]
        for m in _EXPANDED.finditer(masked)
        if fold(m.group(1)) in asked
    ]
    for clause in re.split(r"(?<=[.!?])\s+", quote):
        match = DEFINES.search(clause)
        if match:
            found.append(_clauses(clause[match.end() :])[0])
    found += [quote[m.start(1) : m.end(1)] for m in _PARENTHESISED.finditer(masked)]
    # "Term: meaning", the colon a lead-in's.
    start = 0
    for line in masked.splitlines(keepends=True):
        colon = _LEAD_IN_COLON.search(line)
        if colon and colon.start() < 40:
            found.append(quote[start + colon.end() : start + len(line)].rstrip("\n"))
        start += len(line)
    # A glossary's dash ("LO licence – order-picking forklifts"), when the words before
    # it are the question's own: in prose a dash sets off an aside as often, and in a
    # glossary the next line's "LF licence" is another term.
    for line in quote.splitlines():
        match = _DASH_DEFINED.match(line)
        if match and {fold(w) for w in WORD.findall(match["term"])} <= asked:
            found.append(match["meaning"])
    return found


# A word and the parenthesis after it. The word starts where a word does: tried from
# inside a long one too, the match would take time quadratic in its length.
_EXPANDED = re.compile(r"(?<![\w’'-])([\w’'-]+)\s*\(([^()\n]{2,60})\)")
_PARENTHESISED = re.compile(r"\(([^()\n]{3,60})\)")  # "TK (to come)"


# "term – meaning" on a line of its own; a second dash closes an aside ("Staff – including
# managers – must sign in"), no meaning.
_DASH_DEFINED = re.compile(
    r"^\s*(?:[-*+•]\s+)?(?P<term>[^–—:\n]{1,40}?)\s[–—-]\s(?P<meaning>(?:(?!\s[–—-]\s).)+)$"
)


def _contacts_not_pointed_to(quote: str, question: str) -> list[str]:
    """The addresses and links a step is done at ("email payroll@…", "fill in [the
    form](…)"), not the page a pointer sends the reader to ("see [the travel guide](…)")."""
    pointers = [m.group(0) for m in _REFERRAL.finditer(quote)]
    return [c for c in _contacts(quote, question) if not any(c in p for p in pointers)]


def _manner(quote: str, question: str) -> list[str]:
    """How a thing is done, as a statement says it: "how is Christmas leave decided?" is
    answered by "Leave … is allocated by a ballot held in September", a passive verb and
    the means or rate it is done by, not only by steps to follow."""
    if not _PASSIVE_HOW.match(question):
        return []
    return [m.group(1) for m in _DONE_BY.finditer(quote)]


# "how is / are / was … (done)?": the way a thing is done to it, in the passive.
_PASSIVE_HOW = re.compile(r"\s*how\s+(?:is|are|was|were)\b", re.I)
# "is allocated by a ballot", "are accrued at 12.07% of hours worked": a participle and the
# means, rate or basis it is done by.
_DONE_BY = re.compile(
    r"\b(?:is|are|was|were|be|being|been)\s+(?:\w+ly\s+)?"
    r"(\w+(?:ed|en|wn|ld|nt|id|ut)\s+(?:by|at|through|via|using|on\s+the\s+basis\s+of|"
    r"according\s+to|in\s+proportion\s+to|based\s+on|from)\s+(?:[^.;\n]|\.\d){2,120})",
    re.I,
)


def _reasons(quote: str, question: str) -> list[str]:
    return [quote[m.start() :].split(".")[0] for m in CAUSE.finditer(quote)]


def _entity(quote: str, question: str) -> Iterator[str]:
    # Lazily, finder after finder: the first span that answers ends the search.
    for finder in (_items, _numbers, _dates, _contacts, _names, _definitions, _steps):
        yield from finder(quote, question)


_FINDERS: dict[str, tuple[Finder, ...]] = {
    "number": (_quantities,),
    "date": (_dates,),
    "person": (_roles, _people, _contacts),
    "organisation": (_organisations, _roles, _names),
    "place": (_places,),
    "contact": (_contacts, _roles, _names),
    # A yes or no is stated with a polarity word, by being listed, or by the sum or
    # share paid ("does the studio cover the fee for a resit?" "the studio pays 50% of
    # the fee"; "is there a gym reimbursement?" "a wellness stipend of $60 per month").
    "yes_no": (_polar, _listed, _amounts),
    "procedure": (_steps, _manner, _contacts_not_pointed_to),
    "list": (_items, _steps, _names),
    "definition": (_definitions, _numbers),
    "reason": (_reasons,),
    "entity": (_entity,),
}


# What a gap sentence says is missing, per answer type.
_MISSING: dict[str, str] = {
    "number": "number or amount",
    "date": "date, time or period",
    "person": "person or role",
    "organisation": "organisation",
    "place": "place or link",
    "contact": "email, link or channel",
    "yes_no": "clear yes or no",
    "procedure": "steps",
    "list": "list",
    "definition": "definition",
    "reason": "reason",
    "entity": "direct answer",
}


def gap_sentence(
    question: str, kind: AnswerType, title: str, quote: str, *, unsaid: str = ""
) -> str:
    """One plain sentence saying what the best source found lacks ("“Transit subsidy”
    mentions the transit subsidy but gives no monthly maximum."), or which of the
    question's words it never says (`unsaid`: "“Work schedules” mentions paid holiday but
    not Juneteenth.")."""
    topic = _shared_words(question, quote) or "the topic"
    found = [
        (m.start(), q.name)
        for q in asked_qualifiers(question, kind)
        if (m := q.asked.search(question))
    ]
    asked = [name for _, name in sorted(found)]  # in the question's order
    said = {fold(w) for w in WORD.findall(f"{title} {quote}")}
    if unsaid and not asked and fold(unsaid) not in said:
        return f"“{title}” mentions {topic} but not {unsaid}."
    need = " ".join(asked) if asked else _MISSING.get(kind, "direct answer")
    return f"“{title}” mentions {topic} but gives no {need}."


def _shared_words(question: str, quote: str) -> str:
    """The longest run of the question's words that the quote also has, in its wording."""
    words = WORD.findall(question)
    said = {fold(w) for w in WORD.findall(quote)}
    best: list[str] = []
    run: list[str] = []
    for word in [*words, ""]:
        if word and fold(word) in said:
            run.append(word)
            continue
        content = [w for w in run if fold(w) not in _COMMON]
        if content and len(run) > len(best):
            best = run
        run = []
    while best and fold(best[0]) in _FUNCTION_WORDS:
        best = best[1:]
    while best and fold(best[-1]) in _FUNCTION_WORDS:
        best = best[:-1]
    return " ".join(best)


# Words a topic neither opens nor ends with ("… mentions credit hours can" reads wrong).
_FUNCTION_WORDS = _COMMON | frozenset(
    """is are was were be do does did can could should would will may might must have has
    had need needs to really actually just get got i me my we us our""".split()
)
