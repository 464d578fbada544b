"""Can the packaged model learn SQuAD 2.0's "no answer" from the shared split alone?

    python bench/answer_variants.py --datasets squad2 --dump DIR   # the answers, first
    python bench/abstention_finetune.py DIR/squad2.default.jsonl --pairs question
    python bench/abstention_finetune.py DIR/squad2.default.jsonl --pairs sentence

The packaged all-MiniLM-L6-v2 is fine-tuned, whole, as a cross-encoder (question and
text in one input, a linear layer on the first token) on half A of the shared SQuAD 2.0
split (as in answer_variants.py), and scored on half B:

- `--pairs question`: (question, the loop's first three quotes) → answerable;
- `--pairs sentence`: (question, one sentence) → holds an accepted answer, over every
  quote the loop kept and the gold paragraph's answer sentence; a question's score is
  its best quote's.

After each epoch it prints half B's AUC (answerable against not, over the questions the
loop quoted anything for) and the best balanced accuracy any threshold reaches for the
rule "also escalate when the score is under t" on top of the loop's own escalations,
chosen in hindsight on half B (an upper bound). Prints only; the figures are in
bench/results/answer_eval.md. ~3 minutes per epoch on 2 cores.
"""

from __future__ import annotations

import _env  # first: the environment, before numpy loads

# isort: split

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from rich.progress import track
from transformers import AutoModel, AutoTokenizer

from agent.eval.answers import squad_normalise
from agent.sentences import sentences
from store.embedding import packaged_model_path

Row = dict[str, Any]
Pair = tuple[str, str, float]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dump", type=Path, help="squad2.default.jsonl from answer_variants")
    parser.add_argument("--pairs", choices=("question", "sentence"), default="question")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--corpus", type=Path, default=_env.REPO.parent / "shared/eval/squad2")
    args = parser.parse_args()
    torch.manual_seed(0)
    random.seed(0)
    torch.set_num_threads(2)
    rows = [json.loads(line) for line in args.dump.open()]
    quoted = [r for r in rows if r["claims"]]
    train = [r for r in quoted if r["half"] == "A"]
    test = [r for r in quoted if r["half"] == "B"]
    if args.pairs == "question":
        pairs = [(r["question"], _first_quotes(r), float(r["answerable"])) for r in train]
    else:
        pairs = _sentence_pairs(train, _paragraphs(args.corpus / "corpus.jsonl"))
    print(f"{len(pairs)} training pairs ({sum(p[2] for p in pairs):.0f} positive) from half A")
    model = CrossEncoder()
    started = time.monotonic()
    for epoch in range(args.epochs):
        model.train_epoch(pairs, epoch=epoch, epochs=args.epochs)
        scores = _question_scores(model, test, args.pairs)
        answerable = np.array([r["answerable"] for r in test], dtype=bool)
        print(
            f"epoch {epoch + 1}: {time.monotonic() - started:.0f} s; half B AUC "
            f"{_auc(scores, answerable):.3f}, best balanced accuracy "
            f"{_best_balanced_accuracy(rows, test, scores):.3f} (the loop alone "
            f"{_balanced_accuracy(rows, set()):.3f})",
            flush=True,
        )


class CrossEncoder:
    """The packaged MiniLM with one linear layer on its first token's output."""

    def __init__(self, batch_size: int = 16, learning_rate: float = 3e-5) -> None:
        path = str(packaged_model_path())
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.encoder = AutoModel.from_pretrained(path)
        self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        parameters = [*self.encoder.parameters(), *self.head.parameters()]
        self.optimiser = torch.optim.AdamW(parameters, lr=learning_rate, weight_decay=0.01)
        self.step = 0

    def logits(self, questions: list[str], texts: list[str]) -> torch.Tensor:
        batch = self.tokenizer(
            questions,
            texts,
            truncation="only_second",
            max_length=256,
            padding=True,
            return_tensors="pt",
        )
        return self.head(self.encoder(**batch).last_hidden_state[:, 0]).squeeze(-1)

    def train_epoch(self, pairs: list[Pair], *, epoch: int, epochs: int) -> None:
        """One pass, linear warm-up over the first 10% of all steps, then linear decay."""
        self.encoder.train()
        random.shuffle(pairs)
        total = epochs * -(-len(pairs) // self.batch_size)
        for start in track(range(0, len(pairs), self.batch_size), description=f"epoch {epoch + 1}"):
            chunk = pairs[start : start + self.batch_size]
            rate = min(1.0, (self.step + 1) / (0.1 * total)) * max(0.0, 1 - self.step / total)
            for group in self.optimiser.param_groups:
                group["lr"] = self.learning_rate * rate
            labels = torch.tensor([p[2] for p in chunk])
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                self.logits([p[0] for p in chunk], [p[1] for p in chunk]), labels
            )
            self.optimiser.zero_grad()
            loss.backward()
            self.optimiser.step()
            self.step += 1

    def scores(self, questions: list[str], texts: list[str]) -> list[float]:
        self.encoder.eval()
        out: list[float] = []
        with torch.no_grad():
            for start in range(0, len(texts), 64):
                logits = self.logits(questions[start : start + 64], texts[start : start + 64])
                out.extend(torch.sigmoid(logits).tolist())
        return out


def _first_quotes(row: Row, count: int = 3) -> str:
    return " ".join(c["quote"] for c in row["claims"][:count])


def _holds_answer(text: str, answers: list[str]) -> bool:
    padded = f" {squad_normalise(text)} "
    return any(f" {squad_normalise(a)} " in padded for a in answers if squad_normalise(a))


def _paragraphs(corpus: Path) -> dict[str, str]:
    return {d["_id"]: d["text"] for d in map(json.loads, corpus.open())}


def _sentence_pairs(train: list[Row], paragraphs: dict[str, str]) -> list[Pair]:
    pairs: list[Pair] = []
    for row in train:
        quotes = [c["quote"] for c in row["claims"]]
        answers = row["answers"] if row["answerable"] else []
        pairs.extend((row["question"], q, float(_holds_answer(q, answers))) for q in quotes)
        if answers and row["gold"]:
            for sentence in sentences(paragraphs[row["gold"][0]], min_words=1):
                if _holds_answer(sentence.text, answers) and sentence.text not in quotes:
                    pairs.append((row["question"], sentence.text, 1.0))
                    break
    return pairs


def _question_scores(model: CrossEncoder, test: list[Row], kind: str) -> np.ndarray:
    if kind == "question":
        texts = [_first_quotes(r) for r in test]
        return np.array(model.scores([r["question"] for r in test], texts))
    flat = [(i, r["question"], c["quote"]) for i, r in enumerate(test) for c in r["claims"]]
    best = np.zeros(len(test))
    scores = model.scores([f[1] for f in flat], [f[2] for f in flat])
    for (i, _, _), score in zip(flat, scores, strict=True):
        best[i] = max(best[i], score)
    return best


def _auc(scores: np.ndarray, positive: np.ndarray) -> float:
    pos, neg = scores[positive], scores[~positive]
    wins = (pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean()
    return float(wins)


def _balanced_accuracy(rows: list[Row], also: set[str]) -> float:
    """Half B's balanced accuracy when `also` (ids) escalate besides the loop's own."""
    half = [r for r in rows if r["half"] == "B"]
    escalated = [r["escalate"] or r["id"] in also for r in half]
    unanswerable = [not r["answerable"] for r in half]
    caught = sum(e and u for e, u in zip(escalated, unanswerable, strict=True))
    kept = sum(not e and not u for e, u in zip(escalated, unanswerable, strict=True))
    return 0.5 * (caught / max(1, sum(unanswerable)) + kept / max(1, len(half) - sum(unanswerable)))


def _best_balanced_accuracy(rows: list[Row], test: list[Row], scores: np.ndarray) -> float:
    thresholds = np.quantile(scores, np.linspace(0.02, 0.98, 49))
    return max(
        _balanced_accuracy(rows, {r["id"] for r, s in zip(test, scores, strict=True) if s < t})
        for t in thresholds
    )


if __name__ == "__main__":
    main()
