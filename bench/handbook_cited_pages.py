"""Cited-page precision of `bench/handbook_answers.py --details` files, by half.

    python bench/handbook_cited_pages.py DETAILS.jsonl [DETAILS.jsonl ...] [--set PATH]

For the answerable questions of each half: the share of the pages cited that are gold
pages (a reply citing the right page beside two unrelated ones scores 1/3), and the
pages and quotes shown in all. `handbook_answers.py` reports whether a right page is
cited at all; this says how much else the replies cite.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

DEFAULT_SET = Path(__file__).resolve().parents[2] / "shared" / "eval" / "handbook" / "answers.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("details", nargs="+")
    parser.add_argument("--set", default=str(DEFAULT_SET))
    args = parser.parse_args()
    lines = Path(args.set).read_text().splitlines()
    gold = {c["id"]: c.get("gold") or [] for c in map(json.loads, filter(str.strip, lines))}
    for path in args.details:
        rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
        for half in ("A", "B"):
            part = [r for r in rows if r["half"] == half and r["answerable"]]
            cited = [(r["id"], uri) for r in part for uri in r["cited"]]
            right = sum(any(u == g or u.endswith("/" + g) for g in gold[i]) for i, u in cited)
            quotes = sum(len(r["quotes"]) for r in part)
            share = round(right / len(cited), 3) if cited else float("nan")
            counts = f"({right}/{len(cited)}), {quotes} quotes"
            print(f"{path} half {half}: cited-page precision {share} {counts}")


if __name__ == "__main__":
    main()
