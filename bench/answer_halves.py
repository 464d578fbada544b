"""Balanced accuracy of the escalate flag by halves of a `kb eval answers --details` file.

    python bench/answer_halves.py DETAILS.jsonl [--year-check]

The halves are fixed by each question's id (md5 of the id, even or odd), so a rule can be
developed on half A and checked on half B whatever sample `--limit/--seed` drew.
`--year-check` also counts as escalated every answered question that names a year none of
its quotes holds: an estimate, from the rows alone, of that rule before building it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from pathlib import Path

_YEAR = re.compile(r"\b(?:1[0-9]|20)\d\d\b")


def half(question_id: str) -> str:
    return "AB"[int(hashlib.md5(question_id.encode()).hexdigest(), 16) % 2]


def year_unsaid(row: dict) -> bool:
    quotes = " ".join(row["quotes"])
    return bool(row["quotes"]) and any(y not in quotes for y in _YEAR.findall(row["question"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("details", type=Path)
    parser.add_argument("--year-check", action="store_true")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.details.read_text().splitlines() if line]
    for name in "AB":
        part = [r for r in rows if half(r["id"]) == name]
        escalated = [r["escalate"] or (args.year_check and year_unsaid(r)) for r in part]
        unanswerable = [e for r, e in zip(part, escalated, strict=True) if not r["answerable"]]
        answerable = [e for r, e in zip(part, escalated, strict=True) if r["answerable"]]
        caught = sum(unanswerable) / len(unanswerable) if unanswerable else float("nan")
        false = sum(answerable) / len(answerable) if answerable else 0.0
        print(
            f"half {name}: {len(answerable)} answerable, {len(unanswerable)} unanswerable; "
            f"unanswerable escalated {caught:.3f}, answerable escalated {false:.3f}, "
            f"balanced accuracy {(caught + 1 - false) / 2:.3f}"
        )


if __name__ == "__main__":
    main()
