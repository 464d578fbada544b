"""Two derived answer sets from a BEIR answer set: passages on topic that don't answer,
and sources that disagree. Both run through `kb eval answers`' own code path.

    python bench/answer_negatives.py --kb-home DIR [--dataset DIR] [--work DIR]
        [--set negatives|counterfactuals|both] [--limit N] [--seed S]

- negatives: the pooled corpus minus every gold passage of every question and minus
  every passage that holds any question's answer (SQuAD-normalised, yes/no left out);
  every non-yes/no question asked as unanswerable. Metric: share escalated (every reply
  that is not escalated passes a passage off as an answer). A few of those replies are
  printed to read.
- counterfactuals: for each answerable non-yes/no question whose gold passage holds the
  answer, that passage copied as a second document (id `<id>-cf`, title "<title>
  (revised)") with the answer replaced by another question's answer of the same coarse
  kind (year, number, else name; seeded), beside the full true corpus. Metrics: share of
  replies showing a conflict (Answer.conflicts), quoting both values, quoting only the
  false one; and, as the baseline of the same run, the same questions over the true
  corpus alone (share quoting the true value, share showing a conflict).

Each set is written as a dataset folder named like the source one under `--work`, with
a copy of `--kb-home` (a KB_HOME that indexed the source set, so only the changed
passages are indexed again; reused by a later run with the same `--work`), and run by
`bot.eval_answers.eval_answers_command`, exactly as `kb eval answers DIR` runs it; the
per-question rows (`--details`) give the figures. The negatives keep less than half the
corpus, which the indexer refuses to delete (a listing that shrank that much looks
broken), so they are a dataset of their own name, indexed afresh.
"""

from __future__ import annotations

from _env import REPO  # first: the environment, before numpy loads

# isort: split

import argparse
import asyncio
import json
import random
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent.eval.answers import squad_normalise
from bot.eval_answers import AnswerEvalRequest, eval_answers_command
from bot.settings import Settings

DEFAULT_DATASET = REPO.parent / "shared" / "eval" / "hotpotqa"
_YEAR = re.compile(r"^(1\d{3}|20\d{2})$")
_NUMBER = re.compile(r"^[\d,.\s%$]+$")


@dataclass(frozen=True, slots=True)
class Passage:
    id: str
    title: str
    text: str


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    question: str
    answerable: bool
    answers: tuple[str, ...]
    gold: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Counterfactual:
    question: Question
    passage: Passage  # the copy, with the false value
    true_value: str
    false_value: str


def is_yes_no(answers: Sequence[str]) -> bool:
    return all(squad_normalise(a) in ("yes", "no") for a in answers)


def holds(text: str, answer: str) -> bool:
    """Whether `text` holds `answer`, both SQuAD-normalised, on word boundaries."""
    wanted = squad_normalise(answer)
    return bool(wanted) and f" {wanted} " in f" {squad_normalise(text)} "


def negative_passages(passages: Sequence[Passage], questions: Sequence[Question]) -> list[Passage]:
    """Passages that are no question's gold and hold no question's answer (yes/no
    answers left out: every passage "holds" them as a reading, none as a string)."""
    gold = {g for q in questions for g in q.gold}
    answers = {
        f" {squad_normalise(a)} "
        for q in questions
        if not is_yes_no(q.answers)
        for a in q.answers
        if squad_normalise(a)
    }
    kept = []
    for p in passages:
        text = f" {squad_normalise(f'{p.title} {p.text}')} "
        if p.id not in gold and not any(a in text for a in answers):
            kept.append(p)
    return kept


def answer_kind(answer: str) -> str:
    """The coarse kind of an answer, to swap it for one a reader finds as plausible."""
    text = answer.strip()
    if _YEAR.match(text):
        return "year"
    if _NUMBER.match(text) and any(c.isdigit() for c in text):
        return "number"
    return "name"


def counterfactuals(
    passages: Sequence[Passage], questions: Sequence[Question], *, seed: int
) -> list[Counterfactual]:
    """One changed copy of the answer-holding gold passage per answerable question."""
    by_id = {p.id: p for p in passages}
    asked = [q for q in questions if q.answerable and q.answers and not is_yes_no(q.answers)]
    pool: dict[str, list[str]] = {}
    for q in asked:
        pool.setdefault(answer_kind(q.answers[0]), []).append(q.answers[0])
    rng = random.Random(seed)
    made = []
    for q in asked:
        true_value = q.answers[0]
        source = next(
            (
                by_id[g]
                for g in q.gold
                if g in by_id and re.search(re.escape(true_value), by_id[g].text, re.I)
            ),
            None,
        )
        if source is None:
            continue
        others = [
            a
            for a in pool[answer_kind(true_value)]
            if squad_normalise(a) != squad_normalise(true_value)
            and not holds(source.text, a)
            and not any(holds(a, t) or holds(t, a) for t in q.answers)
        ]
        if not others:
            continue
        alike = [a for a in others if _shape(a) == _shape(true_value)]
        false_value = rng.choice(alike or others)
        text = re.sub(
            re.escape(true_value), false_value.replace("\\", r"\\"), source.text, flags=re.I
        )
        copy = Passage(f"{source.id}-cf", f"{source.title} (revised)", text)
        made.append(Counterfactual(q, copy, true_value, false_value))
    return made


def _shape(answer: str) -> tuple[int, bool]:
    """Word count and capitalisation: "Brad Silberling" is swapped for another two-word
    name before "the North Atlantic Conference"."""
    words = answer.split()
    return len(words), answer[:1].isupper()


def read_dataset(root: Path) -> tuple[list[Passage], list[Question]]:
    passages = [
        Passage(str(d["_id"]), d.get("title") or "", d["text"])
        for d in _jsonl(root / "corpus.jsonl")
    ]
    questions = [
        Question(
            str(d["id"]),
            d["question"],
            bool(d["answerable"]),
            tuple(d.get("answers") or ()),
            tuple(str(g) for g in d.get("gold") or ()),
        )
        for d in _jsonl(root / "answers.jsonl")
    ]
    return passages, questions


def write_dataset(folder: Path, passages: Iterable[Passage], questions: Iterable[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    _write_jsonl(
        folder / "corpus.jsonl", ({"_id": p.id, "title": p.title, "text": p.text} for p in passages)
    )
    _write_jsonl(folder / "answers.jsonl", questions)
    return folder


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _write_jsonl(path: Path, rows: Iterable[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


async def _run(template: Path, home: Path, folder: Path) -> dict[str, dict]:
    """`kb eval answers folder` with KB_HOME `home`, first copied from `template` (a
    KB_HOME that indexed the source set: only the changed passages are indexed again)."""
    if not home.exists():
        home.parent.mkdir(parents=True, exist_ok=True)
        # `cp -a`, not shutil.copytree: the server's files keep their owner (the embedded
        # server runs as its own user when started by root).
        subprocess.run(["cp", "-a", str(template), str(home)], check=True)
    settings = Settings(KB_HOME=home, KB_SOURCES=home / "none.toml")
    details = folder.parent / "details.jsonl"
    await eval_answers_command(settings, AnswerEvalRequest(directory=folder, details_path=details))
    return {row["id"]: row for row in _jsonl(details)}


def _share(values: list[bool]) -> str:
    return f"{sum(values) / len(values):.1%} ({sum(values)} of {len(values)})" if values else "—"


async def negatives(args: argparse.Namespace, work: Path) -> None:
    passages, questions = read_dataset(Path(args.dataset))
    kept = negative_passages(passages, questions)
    asked = [q for q in questions if q.answers and not is_yes_no(q.answers)]
    if args.limit:
        asked = random.Random(args.seed).sample(asked, min(args.limit, len(asked)))
    print(f"negatives: {len(kept)} of {len(passages)} passages kept, {len(asked)} questions")
    rows = [
        {"id": q.id, "question": q.question, "answerable": False, "answers": [], "gold": []}
        for q in asked
    ]
    folder = write_dataset(work / "negatives" / f"{Path(args.dataset).name}_negatives", kept, rows)
    got = await _run(Path(args.kb_home), work / "negatives" / "home", folder)
    escalated = [got[q.id]["escalate"] for q in asked]
    print(f"negatives: escalated {_share(escalated)}  (target ≥ 80%)")
    answered = [got[q.id] for q in asked if not got[q.id]["escalate"]]
    for row in answered[: args.show]:
        lead = row["lead_span"] or (row["quotes"][0] if row["quotes"] else "")
        print(f"  - {row['question']!r} → {lead[:80]!r} | {(row['quotes'] or [''])[0][:140]!r}")


async def disagreements(args: argparse.Namespace, work: Path) -> None:
    passages, questions = read_dataset(Path(args.dataset))
    made = counterfactuals(passages, questions, seed=args.seed)
    if args.limit:
        made = random.Random(args.seed).sample(made, min(args.limit, len(made)))
    print(f"counterfactuals: {len(made)} changed copies beside {len(passages)} passages")
    rows = [
        {
            "id": c.question.id,
            "question": c.question.question,
            "answerable": True,
            "answers": list(c.question.answers),
            "gold": list(c.question.gold),
        }
        for c in made
    ]
    name = Path(args.dataset).name
    folder = write_dataset(
        work / "counterfactuals" / name, [*passages, *(c.passage for c in made)], rows
    )
    got = await _run(Path(args.kb_home), work / "counterfactuals" / "home", folder)
    base_folder = write_dataset(work / "baseline" / name, passages, rows)
    base = await _run(Path(args.kb_home), work / "baseline" / "home", base_folder)

    def quotes(row: dict, value: str) -> bool:
        return any(holds(q, value) for q in row["quotes"])

    flagged = [got[c.question.id]["conflicts"] > 0 for c in made]
    both = [
        quotes(got[c.question.id], c.true_value) and quotes(got[c.question.id], c.false_value)
        for c in made
    ]
    only_false = [
        quotes(got[c.question.id], c.false_value) and not quotes(got[c.question.id], c.true_value)
        for c in made
    ]
    print(f"counterfactuals: conflict shown {_share(flagged)}  (target ≥ 70%)")
    print(f"counterfactuals: both values quoted {_share(both)}")
    print(f"counterfactuals: only the false value quoted {_share(only_false)}")
    print(
        f"baseline (true corpus only, same questions): conflict shown "
        f"{_share([base[c.question.id]['conflicts'] > 0 for c in made])}, true value quoted "
        f"{_share([quotes(base[c.question.id], c.true_value) for c in made])}, escalated "
        f"{_share([base[c.question.id]['escalate'] for c in made])}"
    )
    print(f"counterfactuals: escalated {_share([got[c.question.id]['escalate'] for c in made])}")


async def main(args: argparse.Namespace) -> None:
    work = Path(args.work or tempfile.mkdtemp(prefix="kb-negatives-"))
    if args.set in ("negatives", "both"):
        await negatives(args, work)
    if args.set in ("counterfactuals", "both"):
        await disagreements(args, work)
    print(f"Command: python bench/answer_negatives.py {' '.join(sys.argv[1:])}", file=sys.stderr)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default=str(DEFAULT_DATASET))
    parser.add_argument(
        "--kb-home", required=True, help="a KB_HOME that indexed --dataset (copied per set)"
    )
    parser.add_argument("--set", choices=("negatives", "counterfactuals", "both"), default="both")
    parser.add_argument("--limit", type=int, help="a seeded sample of N questions per set")
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--show", type=int, default=8, help="answered negatives to print")
    parser.add_argument("--work", help="where the derived sets go (default: a temp dir)")
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(_arguments()))
