"""Sources that disagree: the same statement with a different number, amount, date or yes/no.

Two quotes from different documents, answering the same sub-question and saying nearly
the same thing (most of their content words shared), conflict when they give different
values of the same kind ("3 days per week" against "2 days per week", "$75" against
"$60", "2023" against "2024"), or when one denies what the other states. The answer then
shows both, with their dates, and says which is more recent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent.language.questions import is_negated
from agent.state import Evidence

_QUANTITY = re.compile(
    r"(?P<money>[$€£]\s?\d[\d,]*(?:\.\d+)?)|"
    r"(?P<number>\d[\d,]*(?:\.\d+)?)\s*(?P<unit>%|percent|[a-z]+)?",
    re.I,
)
_YEAR = re.compile(r"^(?:1\d{3}|20\d{2})$")


@dataclass(frozen=True, slots=True)
class FoundConflict:
    sub_question: int
    first: Evidence
    second: Evidence
    kind: str  # number, amount, date, yes_no

    @property
    def newer(self) -> Evidence | None:
        a, b = self.first.updated_at, self.second.updated_at
        if a is None or b is None or a == b:
            return None
        return self.first if a > b else self.second


def find_conflicts(
    evidence: Sequence[Evidence], *, stems: Callable[[str], frozenset[str]], overlap: float = 0.5
) -> list[FoundConflict]:
    """Pairs of evidence (different documents, same sub-question) that disagree."""
    found = []
    for i, a in enumerate(evidence):
        for b in evidence[i + 1 :]:
            if a.sub_question != b.sub_question or a.document_id == b.document_id:
                continue
            if _jaccard(stems(a.quote), stems(b.quote)) < overlap:
                continue
            kind = _disagreement(a.quote, b.quote)
            if kind:
                found.append(FoundConflict(a.sub_question, a, b, kind))
    return found


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
