"""Does a soft word alignment between question and quotes separate SQuAD 2.0's unanswerables?

    python bench/answer_variants.py --datasets squad2 hotpotqa --dump DIR   # first
    python bench/abstention_alignment.py DIR

For every question the loop did not escalate, each content word of the question (not a
stop word or question word) is matched against the words of the strong quotes it kept
and their page titles: 1 when its stem is there, else the best cosine between its
contextual vector (the packaged model's token outputs, word pieces averaged) and the
quote words'. The question's alignment is its worst-matched word (and the mean of its
two worst). The rule "also escalate when alignment < t" is scored on halves A and B of
SQuAD (balanced accuracy, abstention recall, false escalations) and, with the same t, on
HotpotQA's false escalations (all answerable). Prints only.
"""

from __future__ import annotations

import _env  # noqa: F401  (first: the environment, before numpy loads)

# isort: split

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
from rich.progress import track
from sentence_transformers import SentenceTransformer

from agent.language.questions import QuestionAnalyzer
from store.embedding import packaged_model_path
from store.text_analysis import TextAnalyzer

Row = dict[str, Any]


class WordVectors:
    """Contextual word vectors: the model's token outputs, word pieces averaged."""

    def __init__(self, model: SentenceTransformer) -> None:
        self._model = model
        self._cache: dict[str, tuple[list[str], np.ndarray]] = {}

    def words(self, text: str) -> tuple[list[str], np.ndarray]:
        if text in self._cache:
            return self._cache[text]
        tokenizer = self._model.tokenizer
        encoded = tokenizer(text, truncation=True, max_length=256, return_offsets_mapping=True)
        out = self._model.encode(text, output_value="token_embeddings", convert_to_numpy=True)
        ids = encoded.word_ids()
        groups: dict[int, list[int]] = {}
        for position, word in enumerate(ids):
            if word is not None:
                groups.setdefault(word, []).append(position)
        words, vectors = [], []
        for positions in groups.values():
            start = encoded["offset_mapping"][positions[0]][0]
            end = encoded["offset_mapping"][positions[-1]][1]
            words.append(text[start:end])
            v = np.asarray(out)[positions].mean(axis=0)
            vectors.append(v / (np.linalg.norm(v) + 1e-9))
        result = (words, np.array(vectors) if vectors else np.zeros((0, 384)))
        self._cache[text] = result
        return result


def alignment(analyzer: QuestionAnalyzer, vectors: WordVectors, row: Row) -> list[float] | None:
    strong = [c for c in row["claims"] if c["support"] == "strong"]
    if not strong:
        return None
    question = analyzer.analyse(row["question"])
    terms = set(question.terms)
    own: set[str] = set()
    quote_vectors = []
    for claim in strong:
        title = claim["uri"].split("#")[0]
        own |= set(analyzer.stems(claim["quote"])) | set(analyzer.stems(title))
        quote_vectors.append(vectors.words(claim["quote"])[1])
        quote_vectors.append(vectors.words(title)[1])
    pool = np.vstack([v for v in quote_vectors if len(v)])
    words, qv = vectors.words(row["question"])
    scores = []
    for word, v in zip(words, qv, strict=True):
        stems = set(analyzer.stems(word))
        if not stems or not stems & terms:
            continue  # a stop word, question word or punctuation
        scores.append(1.0 if stems <= own else float((pool @ v).max()))
    return sorted(scores) or [1.0]


def cell(rows: list[Row], flag: dict[str, bool]) -> str:
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    false = sum(flag[r["id"]] for r in answerable) / len(answerable)
    if not unanswerable:
        return f"fe {false:.3f}"
    recall = sum(flag[r["id"]] for r in unanswerable) / len(unanswerable)
    return f"bal.acc {(recall + 1 - false) / 2:.3f} rec {recall:.3f} fe {false:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dump", type=Path, help="the --dump folder of answer_variants.py")
    args = parser.parse_args()
    analyzer = QuestionAnalyzer(TextAnalyzer())
    vectors = WordVectors(SentenceTransformer(str(packaged_model_path()), device="cpu"))
    data = {}
    for name in ("squad2", "hotpotqa"):
        rows = [json.loads(line) for line in (args.dump / f"{name}.default.jsonl").open()]
        data[name] = (rows, {r["id"]: alignment(analyzer, vectors, r) for r in track(rows)})
    measures = {
        "worst word": lambda s: s[0],
        "mean of two worst": lambda s: float(np.mean(s[:2])),
    }
    for label, measure in measures.items():
        print(f"\n{label}: also escalate when < t")
        for t in (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7):
            cells = []
            for name, half in (("squad2", "A"), ("squad2", "B"), ("hotpotqa", None)):
                rows, scores = data[name]
                part = [r for r in rows if half is None or r["half"] == half]
                flag = {
                    r["id"]: r["escalate"]
                    or (scores[r["id"]] is not None and measure(scores[r["id"]]) < t)
                    for r in part
                }
                cells.append(cell(part, flag))
            print(f"  t={t:.2f}  A: {cells[0]:34s} B: {cells[1]:34s} hotpot: {cells[2]}")


if __name__ == "__main__":
    main()
