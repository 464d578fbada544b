"""Sources that disagree: the same statement with a different value, name or yes/no.

Two quotes from different documents, answering the same sub-question and saying nearly
the same thing (most of their content words shared), conflict when they give different
values of the same kind ("3 days per week" against "2 days per week", "$75" against
"$60", "2023" against "2024"), or when one denies what the other states. For a question
asking for a name (a person, an organisation, a place, a title), they conflict when each
names one of that kind the other does not, and the rest of the two sentences, names set
aside, is nearly the same, one side adding nothing the other lacks: "Dana Reyes approves
travel." against "Sam Ortiz approves travel." Two people named in sentences about
different things ("Dana Reyes approves travel for sales.", "Sam Ortiz approves travel for
support.") are two facts, not a conflict. The answer then
shows both, with their dates, and says which is more recent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent.language.questions import AnswerType, answer_type, is_negated
from agent.language.spans import spans_of
from agent.state import Evidence
from store.text_forms import WORD, fold

_QUANTITY = re.compile(
    r"(?P<money>[$€£]\s?\d[\d,]*(?:\.\d+)?)|"
    r"(?P<number>\d[\d,]*(?:\.\d+)?)\s*(?P<unit>%|percent|[a-z]+)?",
    re.I,
)
_YEAR = re.compile(r"^(?:1\d{3}|20\d{2})$")
# The answer types a name answers. A list asks for several names, so two pages naming two
# of them agree; the rest are values compared above.
_NAMED: frozenset[AnswerType] = frozenset({"person", "organisation", "place", "entity"})
# Two sentences say the same thing of the same subject when, their names set aside, this
# share of their content words is common to both: a copy with one name changed shares
# them all, two sentences that merely mention the same topic share far fewer.
_SAME_STATEMENT = 0.75


@dataclass(frozen=True, slots=True)
class FoundConflict:
    sub_question: int
    first: Evidence
    second: Evidence
    kind: str  # number, amount, date, yes_no, name

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
            kind = _disagreement(a.quote, b.quote)
            question = questions[a.sub_question] if a.sub_question < len(questions) else ""
            if not kind and question and _names_differ(a.quote, b.quote, question, stems):
                kind = "name"
            if kind:
                found.append(FoundConflict(a.sub_question, a, b, kind))
    return found


def _names_differ(a: str, b: str, question: str, stems: Callable[[str], frozenset[str]]) -> bool:
    """Whether `a` and `b` say the same thing with a different name of the kind
    `question` asks for: each names one the other does not, and the rest is shared."""
    kind = answer_type(question)
    if kind not in _NAMED:
        return False
    mine, theirs = _names_of(a, kind, question), _names_of(b, kind, question)
    only_mine = [n for n in mine if not _mentions(b, n)]
    only_theirs = [n for n in theirs if not _mentions(a, n)]
    if not only_mine or not only_theirs:
        return False
    rest_a, rest_b = stems(_without(a, mine)), stems(_without(b, theirs))
    # Each side with words of its own ("for the sales team", "for the support team")
    # says who does what for whom: two facts. One side adding words to the other ("From
    # 2025, …") still says the same thing.
    nested = rest_a <= rest_b or rest_b <= rest_a
    return nested and _jaccard(rest_a, rest_b) >= _SAME_STATEMENT


def _names_of(quote: str, kind: AnswerType, question: str) -> list[str]:
    """The spans of `kind` in `quote` that are names: a capitalised word, no digit (a role
    in lower case, "your supervisor", is a way of saying whom, not a name to contradict)."""
    return [
        span
        for span in spans_of(quote, kind, question)
        if not any(c.isdigit() for c in span) and any(w[:1].isupper() for w in WORD.findall(span))
    ]


def _mentions(text: str, name: str) -> bool:
    """Whether every word of `name` is a word of `text` (case and accents aside)."""
    words = {fold(w) for w in WORD.findall(text)}
    return all(fold(w) in words for w in WORD.findall(name))


def _without(text: str, names: Sequence[str]) -> str:
    for name in sorted(names, key=len, reverse=True):
        text = text.replace(name, " ")
    return text


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
