"""The handbook answer set through the product's own pipeline, by halves.

    python bench/handbook_answers.py [--kb-home DIR] [--set PATH] [--half A|B|all]

The bundled handbook is indexed as `kb index` indexes it (its converters, chunking,
titles and urls; incrementally into the KB_HOME given, or a temporary one), then every
question of the set (`{id, question, answerable, answers[], gold[]}`, gold as page paths
under the handbook's `pages/`) is asked one at a time through the agent loop with the
default settings. Reported per half (A: the first byte of sha256(id) is even; B: odd),
so a rule developed on one half is checked on the other:

- right_page_cited: answerable questions citing at least one gold page;
- all_phrases_quoted: answerable questions whose quotes hold every expected phrase
  (SQuAD normalisation);
- direct_answer_rate: answerable questions whose reply leads with a span holding an
  expected phrase;
- answerable_escalated / near_misses_escalated, and the escalate flag's balanced
  accuracy ((1 - answerable_escalated + near_misses_escalated) / 2).
Until `kb eval answers` reads a folder corpus this is the handbook's measuring stick.
"""

from __future__ import annotations

from _env import REPO  # first: the environment, before numpy loads

# isort: split

import argparse
import asyncio
import hashlib
import json
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from agent.answer import Answer
from agent.eval.answers import squad_normalise
from bot.settings import Settings
from bot.sources import handbook_config
from bot.wiring import open_runtime

DEFAULT_SET = REPO.parent / "shared" / "eval" / "handbook" / "answers.jsonl"


@dataclass(frozen=True, slots=True)
class Row:
    id: str
    half: str
    answerable: bool
    right_page: bool
    all_phrases: bool
    direct: bool
    escalate: bool
    latency_ms: float


def half_of(case_id: str) -> str:
    return "A" if hashlib.sha256(case_id.encode()).digest()[0] % 2 == 0 else "B"


def _cited(answer: Answer, gold: list[str]) -> bool:
    uris = [c.uri for c in answer.citations]
    return any(u == g or u.endswith("/" + g) for u in uris for g in gold)


def _holds(texts: list[str], phrase: str) -> bool:
    wanted = squad_normalise(phrase)
    return bool(wanted) and any(f" {wanted} " in f" {squad_normalise(t)} " for t in texts)


def _row(case: dict, answer: Answer, latency_ms: float) -> Row:
    quotes = [c.quote for c in answer.claims]
    spans = [c.span for c in answer.claims if c.span]
    phrases = case.get("answers") or []
    return Row(
        id=case["id"],
        half=half_of(case["id"]),
        answerable=bool(case["answerable"]),
        right_page=_cited(answer, case.get("gold") or []),
        all_phrases=bool(phrases) and all(_holds(quotes, p) for p in phrases),
        direct=any(_holds(spans, p) for p in phrases),
        escalate=answer.escalate,
        latency_ms=latency_ms,
    )


def metrics(rows: list[Row]) -> dict[str, float | int]:
    answerable = [r for r in rows if r.answerable]
    near = [r for r in rows if not r.answerable]

    def share(values: list[bool]) -> float:
        return round(sum(values) / len(values), 3) if values else float("nan")

    escalated = share([r.escalate for r in answerable])
    caught = share([r.escalate for r in near])
    return {
        "answerable": len(answerable),
        "near_misses": len(near),
        "right_page_cited": share([r.right_page for r in answerable]),
        "all_phrases_quoted": share([r.all_phrases for r in answerable]),
        "direct_answer_rate": share([r.direct for r in answerable]),
        "answerable_escalated": escalated,
        "near_misses_escalated": caught,
        "balanced_accuracy": round((1 - escalated + caught) / 2, 3),
        "latency_p95_ms": round(float(np.percentile([r.latency_ms for r in rows], 95)), 1),
    }


async def main(args: argparse.Namespace) -> None:
    home = Path(args.kb_home) if args.kb_home else Path(tempfile.mkdtemp(prefix="kb-bench-"))
    cases = [json.loads(line) for line in Path(args.set).read_text().splitlines() if line.strip()]
    if args.half != "all":
        cases = [c for c in cases if half_of(c["id"]) == args.half]
    settings = Settings(KB_HOME=home, KB_SOURCES=home / "no-sources.toml")
    rows: list[Row] = []
    details = []
    async with open_runtime(settings) as runtime:
        await runtime.embedder.load()
        await runtime.reindex_job(base_dir=home).run([handbook_config(settings)])
        await runtime.warm()
        loop = runtime.answerer()
        for case in cases:
            started = time.perf_counter()
            answer = await loop.answer(case["question"])
            row = _row(case, answer, (time.perf_counter() - started) * 1000)
            rows.append(row)
            details.append(
                {
                    **asdict(row),
                    "question": case["question"],
                    "cited": [c.uri for c in answer.citations],
                    "spans": [c.span for c in answer.claims],
                    "quotes": [c.quote for c in answer.claims],
                    "gaps": [g.detail for g in answer.gaps],
                    "conflicts": [c.detail for c in answer.conflicts],
                    "closest": [p.uri for p in answer.closest_pages],
                }
            )
    for half in ("A", "B"):
        part = [r for r in rows if r.half == half]
        if part:
            print(f"half {half}: {json.dumps(metrics(part))}")
    print(f"all: {json.dumps(metrics(rows))}")
    if args.details:
        Path(args.details).write_text("\n".join(json.dumps(d) for d in details) + "\n")
        print(f"wrote {args.details}", file=sys.stderr)
    print(f"Command: python bench/handbook_answers.py {' '.join(sys.argv[1:])}", file=sys.stderr)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kb-home", help="reuse this KB_HOME (default: a new temporary one)")
    parser.add_argument("--set", default=str(DEFAULT_SET))
    parser.add_argument("--half", choices=("A", "B", "all"), default="all")
    parser.add_argument("--details", help="write one JSON line per question here")
    return parser.parse_args()


if __name__ == "__main__":
    assert REPO
    asyncio.run(main(_arguments()))
