"""Word pairs off and on, end to end: the two tuned sets, and SQuAD 2.0, which nobody tuned on.

    python bench/word_pairs.py [--eval-dir ../shared/eval] [--datasets scifact hotpotqa squad2]

Runs `kb eval retrieval` (the same function, on the same eval databases under KB_HOME or
DATABASE_URL) twice per dataset: with the word-pair list left out (`--pair-weight 0`)
and at the default weight, then prints, for the fused list (hybrid) and the re-ranked
one (hybrid+rerank), nDCG@10 and Hit@1 both ways with the paired difference and its
95% bootstrap interval. The first run on a dataset indexes its corpus (SQuAD's 646
paragraphs: about a minute); later runs embed only the queries.

SQuAD 2.0 (`eval/squad2/answers.jsonl`) is an answer set, not a retrieval set: its
answerable questions, each with its one gold paragraph, are written out in the BEIR
layout under bench/out/beir/squad2 (split `answerable`) first. The word-pair weight was
chosen on SciFact and HotpotQA only, so SQuAD is the check on questions it was not
chosen on. Output: bench/results/word_pairs.txt.
"""

from __future__ import annotations

from _env import REPO  # first: the environment, before numpy loads

# isort: split

import argparse
import asyncio
import json
import shutil
from pathlib import Path

from rich.console import Console

from agent.eval.metrics import bootstrap_samples, paired_difference
from agent.eval.retrieval import EvalReport
from agent.retrieval.hybrid import HybridOptions
from bot.eval_command import EvalRequest, eval_retrieval_command
from bot.settings import Settings
from store.embedding import SentenceTransformerEmbedder

SPLITS = {"scifact": "train", "hotpotqa": "dev", "squad2": "answerable"}
OUT = REPO / "bench" / "out" / "beir"
console = Console(width=160, stderr=True)


def squad2_as_beir(source: Path, target: Path) -> Path:
    """The answerable questions of a SQuAD-style answer set as a BEIR retrieval set."""
    (target / "qrels").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source / "corpus.jsonl", target / "corpus.jsonl")
    rows = [json.loads(line) for line in (source / "answers.jsonl").open(encoding="utf-8")]
    answerable = [r for r in rows if r["answerable"] and r["gold"]]
    with (target / "queries.jsonl").open("w", encoding="utf-8") as queries:
        for row in answerable:
            queries.write(json.dumps({"_id": row["id"], "text": row["question"]}) + "\n")
    with (target / "qrels" / "answerable.tsv").open("w", encoding="utf-8") as qrels:
        qrels.write("query-id\tcorpus-id\tscore\n")
        for row in answerable:
            qrels.writelines(f"{row['id']}\t{gold}\t1\n" for gold in row["gold"])
    return target


def compare(name: str, without: EvalReport, with_pairs: EvalReport) -> list[str]:
    samples = bootstrap_samples(without.queries)
    lines = []
    for system in ("hybrid", "hybrid+rerank"):
        before, after = without.systems[system], with_pairs.systems[system]
        cells = []
        for metric in ("ndcg@10", "hit@1"):
            delta, interval = paired_difference(
                after.per_query, before.per_query, samples, metric=metric
            )
            cells.append(
                f"{metric} {before.summary.means[metric]:.3f} → {after.summary.means[metric]:.3f} "
                f"Δ {delta:+.3f} ({interval.low:+.3f}, {interval.high:+.3f})"
            )
        lines.append(f"{name:8s} {system:14s} " + "   ".join(cells))
    return lines


async def run(eval_dir: Path, names: list[str]) -> list[str]:
    settings = Settings()
    embedder = SentenceTransformerEmbedder(torch_threads=settings.torch_threads)
    weight = HybridOptions().pair_weight
    lines = [f"queries per set; word pairs off (weight 0) → on (weight {weight:g})"]
    try:
        for name in names:
            folder = eval_dir / name
            if name == "squad2":
                folder = squad2_as_beir(folder, OUT / "squad2")
            reports = [
                await eval_retrieval_command(
                    settings,
                    EvalRequest(folder, SPLITS[name], pair_weight=w),
                    embedder=embedder,
                )
                for w in (0.0, weight)
            ]
            lines.append(f"{name} ({SPLITS[name]}, {reports[0].queries} queries)")
            lines += compare(name, *reports)
            console.print("\n".join(lines[-3:]))
    finally:
        embedder.close()
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval-dir", type=Path, default=REPO.parent / "shared" / "eval")
    parser.add_argument("--datasets", nargs="+", default=list(SPLITS), choices=list(SPLITS))
    parser.add_argument("--output", type=Path, default=REPO / "bench/results/word_pairs.txt")
    parser.add_argument("--no-output", action="store_true", help="Print only.")
    args = parser.parse_args()
    lines = asyncio.run(run(args.eval_dir, args.datasets))
    print("\n".join(lines))
    if not args.no_output:
        args.output.write_text("\n".join(lines) + "\n", encoding="utf-8")
        console.print(f"[dim]wrote {args.output}[/]")


if __name__ == "__main__":
    main()
