"""Sources that disagree: the same statement with a different value, name or yes/no.

Two quotes from different documents, answering the same sub-question and saying nearly
the same thing (most of their content words shared), conflict when they give different
values of the same kind ("3 days per week" against "2 days per week", "$75" against
"$60", "2023" against "2024"), or when one denies what the other states. For a question
asking for a name (a person, an organisation, a place, a title), they conflict when they
are word for word the same sentence but for one name: "Travel is approved by Dana Reyes."
against "Travel is approved by Sam Ortiz." Two people named in sentences about different
things ("Dana Reyes approves travel for sales.", "Sam Ortiz approves travel for
support.") are two facts, and the two things a comparison asks about ("Which was made
first, A or B?") are two pages, not a conflict; so are two pages whose differing name or
number is each page's own title (two species, two years' editions of one event). The
answer then shows both, with their dates, and says which is more recent.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from agent.language.questions import AnswerType, answer_type, is_negated
from agent.state import Evidence
from store.text_forms import WORD, fold

_QUANTITY = re.compile(
    r"(?P<money>[$€£]\s?\d[\d,]*(?:\.\d+)?)|"
    r"(?P<number>\d[\d,]*(?:\.\d+)?)\s*(?P<unit>%|percent|[a-z]+)?",
    re.I,
)
_YEAR = re.compile(r"^(?:1\d{3}|20\d{2})$")
# A sentence whose subject is a pronoun: what it says is of its own page's subject.
_PRONOUN_LED = re.compile(r"^\W*(?:it|its|he|his|she|her|they|their|this|these)\b", re.I)
# The answer types a name answers. A list asks for several names, so two pages naming two
# of them agree; numbers, dates and yes/no are compared as values (`_disagreement`).
_NAMED: frozenset[AnswerType] = frozenset({"person", "organisation", "place", "entity"})
# Two sentences say the same thing of the same subject when, the changed name aside, this
# share of the longer one's words stands in both in the same order: a page rewritten with
# one name changed keeps them all, two sentences that merely share a topic far fewer.
_SAME_STATEMENT = 0.75
# The answer types whose answer is a value (a number, an amount, a date or duration).
_VALUES: frozenset[AnswerType] = frozenset({"number", "date"})
_MAX_NAME_WORDS = 8  # a longer changed stretch is another sentence, not another name


@dataclass(frozen=True, slots=True)
class FoundConflict:
    sub_question: int
    first: Evidence
    second: Evidence
    kind: str  # number, amount, date, yes_no, name, answer

    @property
    def newer(self) -> Evidence | None:
        a, b = self.first.updated_at, self.second.updated_at
        if a is None or b is None or a == b:
            return None
        return self.first if a > b else self.second


def find_conflicts(
    evidence: Sequence[Evidence],
    *,
    stems: Callable[[str], frozenset[str]],
    questions: Sequence[str] = (),
    overlap: float = 0.5,
) -> list[FoundConflict]:
    """Pairs of evidence (different documents, same sub-question) that disagree.
    `questions` are the sub-questions' texts, by index: with them, quotes that give
    different names for a question asking for a name are compared too."""
    found = []
    for i, a in enumerate(evidence):
        for b in evidence[i + 1 :]:
            if a.sub_question != b.sub_question or a.document_id == b.document_id:
                continue
            if _jaccard(stems(a.quote), stems(b.quote)) < overlap:
                continue
            if _about_their_own_pages(a, b, stems):
                continue
            kind = _disagreement(a.quote, b.quote)
            if kind in ("amount", "date", "number") and _values_name_their_pages(a, b):
                kind = None
            question = questions[a.sub_question] if a.sub_question < len(questions) else ""
            if not kind and question and _names_differ(a, b, question, stems):
                kind = "name"
            if not kind and (_answer_replaced(a, b, question) or _answer_replaced(b, a, question)):
                kind = "answer"
            if kind:
                found.append(FoundConflict(a.sub_question, a, b, kind))
    return found


def _names_differ(
    a: Evidence, b: Evidence, question: str, stems: Callable[[str], frozenset[str]]
) -> bool:
    """Whether `a` and `b` say the same thing with another name, for a question asking
    for a name: word for word the same sentence but for one stretch, saying something on
    both sides; not when each page names itself there ("Lithocarpus platycarpus is a
    species of plant …" on its page, "Lithocarpus crassinervius is …" on its own), nor
    when the two stretches are the two things a comparison asks about ("Which was made
    first, The Agronomist or American Scary?")."""
    if answer_type(question) not in _NAMED:
        return False
    words_a, words_b = WORD.findall(a.quote), WORD.findall(b.quote)
    matcher = SequenceMatcher(None, [fold(w) for w in words_a], [fold(w) for w in words_b])
    changed = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if not changed:
        return False
    pairs = {(_folded(words_a[i1:i2]), _folded(words_b[j1:j2])) for _, i1, i2, j1, j2 in changed}
    if len(pairs) != 1:
        # Two stretches changed ("Dana Reyes … for sales", "Sam Ortiz … for support"):
        # who does what for whom, two facts. The same change repeated is one.
        return False
    _, i1, i2, j1, j2 = changed[0]
    mine, theirs = words_a[i1:i2], words_b[j1:j2]
    # Each side says something in the changed stretch: a name, a value or a content word
    # ("American musician" against "American documentary"), not only a function word.
    if not (stems(" ".join(mine)) and stems(" ".join(theirs))):
        return False
    if max(len(mine), len(theirs)) > _MAX_NAME_WORDS:
        return False
    shared = sum(block.size for block in matcher.get_matching_blocks())
    if shared < _SAME_STATEMENT * max(len(words_a), len(words_b)):
        return False
    titled = _in_own_title(mine, a.title) and _in_own_title(theirs, b.title)
    compared = _within(mine, question) and _within(theirs, question)
    return not titled and not compared and not _name_each_other(mine, theirs, a, b)


def _answer_replaced(a: Evidence, b: Evidence, question: str) -> bool:
    """Whether `b` is `a`'s sentence with `a`'s answer (its span, or a value where the
    question asks for one) replaced by something else: "… 20 mi west of central London,
    and 7 miles from Windsor." against the same sentence with "punk rock" where "7 miles"
    was. Whatever stands in the answer's place, the other page says something else there.
    Not when each changed stretch is in its own page's title, nor when both are the
    things a comparison asks about."""
    change = _one_change(a.quote, b.quote)
    if change is None:
        return False
    mine, theirs = change
    if not mine or not theirs:
        return False
    span_changed = bool(_folded(WORD.findall(a.span)) & _folded(mine))
    # For a question asking for a number or a date, a value in the changed stretch is the
    # answer's place even where no span was found ("born 7 October 1978" against "born
    # and lead guitarist" for "When was … born?").
    value_changed = answer_type(question) in _VALUES and bool(_digits_in(" ".join(mine + theirs)))
    if not (span_changed or value_changed):
        return False
    titled = _in_own_title(mine, a.title) and _in_own_title(theirs, b.title)
    compared = bool(question) and _within(mine, question) and _within(theirs, question)
    return not titled and not compared and not _name_each_other(mine, theirs, a, b)


def _one_change(a: str, b: str) -> tuple[list[str], list[str]] | None:
    """The words of the one stretch `b` changes in `a` (each side's), when `b` is `a` said
    again with one short stretch changed and most words kept in order; else None."""
    words_a, words_b = WORD.findall(a), WORD.findall(b)
    longer = max(len(words_a), len(words_b))
    # Two cheap bounds first (most sentences compared are another statement altogether):
    # one short stretch changed moves the length by at most its own, and the words kept
    # in order are never more than the words the two have in common.
    if abs(len(words_a) - len(words_b)) > _MAX_NAME_WORDS:
        return None
    folded_a, folded_b = [fold(w) for w in words_a], [fold(w) for w in words_b]
    if (Counter(folded_a) & Counter(folded_b)).total() < _SAME_STATEMENT * longer:
        return None
    matcher = SequenceMatcher(None, folded_a, folded_b)
    changed = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if len(changed) != 1:
        return None
    _, i1, i2, j1, j2 = changed[0]
    if max(i2 - i1, j2 - j1) > _MAX_NAME_WORDS:
        return None
    shared = sum(block.size for block in matcher.get_matching_blocks())
    if shared < _SAME_STATEMENT * longer:
        return None
    return words_a[i1:i2], words_b[j1:j2]


def restated_with_one_change(a: str, b: str) -> bool:
    """Whether `b` is `a` said again with one stretch changed (a value, a name, a "not"
    added or dropped): word for word the same but for that stretch, which is short and
    leaves most of the longer sentence's words in both, in the same order. This is what a
    stale copy or a revised page looks like beside the original; two sentences that
    differ in two places say two things ("Dana Reyes … for sales", "Sam Ortiz … for
    support"), and whether the change is a disagreement is `find_conflicts`' call."""
    return _one_change(a, b) is not None


def _about_their_own_pages(
    a: Evidence, b: Evidence, stems: Callable[[str], frozenset[str]]
) -> bool:
    """Whether a quote leans on a pronoun for its subject ("It is intended to be the
    fifth installment …", "He won …") on pages about different things (titles sharing
    under half their words): each sentence is about its own page's subject, so the two
    say two things. A revised copy of one page keeps most of its title's words."""
    if not (_PRONOUN_LED.match(a.quote) or _PRONOUN_LED.match(b.quote)):
        return False
    return _jaccard(stems(a.title), stems(b.title)) < 0.5


def _values_name_their_pages(a: Evidence, b: Evidence) -> bool:
    """Whether the numbers each quote has and the other lacks are in its own page's title
    ("The MEO Rip Curl Pro Portugal 2017 is an event …" on its page, "… 2016 was an event
    …" on its own): two pages, each about its own year or edition, not two versions."""
    mine, theirs = _digits_in(a.quote), _digits_in(b.quote)
    only_mine, only_theirs = mine - theirs, theirs - mine
    return (
        bool(only_mine and only_theirs)
        and only_mine <= _digits_in(a.title)
        and only_theirs <= _digits_in(b.title)
    )


def _in_own_title(words: Sequence[str], title: str) -> bool:
    """Whether a changed stretch is its page's own name: its words all in the title, or
    its numbers all in the title's ("Marine Fighting Squadron 213 (VMF-213) was …" on
    the page "VMF-213", "… 111 (VMF-111) …" on "VMF-111": two squadrons' pages)."""
    digits = _digits_in(" ".join(words))
    return _within(words, title) or (bool(digits) and digits <= _digits_in(title))


def _name_each_other(mine: Sequence[str], theirs: Sequence[str], a: Evidence, b: Evidence) -> bool:
    """Whether each changed stretch is the other page's title: two pages pointing at
    each other ("In 1983, he and Ulf Merbold …" on Byron Lichtenberg's page, "… he and
    Byron Lichtenberg …" on Ulf Merbold's), one fact told from both sides."""
    return _within(mine, b.title) and _within(theirs, a.title)


def _digits_in(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"\d+", text))


def _within(words: Sequence[str], text: str) -> bool:
    return _folded(words) <= _folded(WORD.findall(text))


def _folded(words: Sequence[str]) -> frozenset[str]:
    return frozenset(fold(w) for w in words)


def _disagreement(a: str, b: str) -> str | None:
    left, right = _values(a), _values(b)
    for kind in ("amount", "date", "number"):
        shared_units = {u for k, u, _ in left if k == kind} & {u for k, u, _ in right if k == kind}
        for unit in shared_units:
            mine = {v for k, u, v in left if k == kind and u == unit}
            theirs = {v for k, u, v in right if k == kind and u == unit}
            if mine and theirs and not mine & theirs:
                return kind
    if is_negated(a) != is_negated(b):
        return "yes_no"
    return None


def _values(text: str) -> list[tuple[str, str, str]]:
    """(kind, unit, value) of each quantity in `text`."""
    values = []
    for match in _QUANTITY.finditer(text):
        if match["money"]:
            values.append(("amount", match["money"][0], _digits(match["money"])))
        elif _YEAR.match(match["number"]):
            values.append(("date", "year", match["number"]))
        else:
            unit = (match["unit"] or "").casefold().rstrip("s")
            values.append(("number", unit, _digits(match["number"])))
    return values


def _digits(text: str) -> str:
    return re.sub(r"[^\d.]", "", text)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0
