"""How far lexical checks of the best quote separate SQuAD 2.0's unanswerable questions.

    python bench/answer_variants.py --datasets squad2 --dump DIR   # the answers, first
    python bench/abstention_features.py DIR/squad2.default.jsonl

For every question the loop did not escalate, the strong quotes it kept are checked the
way a stricter rule would check them: are the question's names (capitalised words,
numbers) in the quote itself or its page title; what share of its key terms is; how rare
(IDF over the corpus) the rarest missing term is. Each line is the rule "also escalate
when the check fails", with its balanced accuracy, abstention recall and false
escalations on halves A and B (as in answer_variants.py). Last, a logistic regression
over all the checks and the quotes' scores, fitted on half A and scored on half B: its
AUC and its balanced accuracy at a few thresholds, the best any mix of these signals
reaches. Prints only; the figures are in bench/results/answer_eval.md.
"""

from __future__ import annotations

from _env import REPO  # first: the environment, before numpy loads

# isort: split

import argparse
import collections
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from agent.language.questions import QuestionAnalyzer
from store.text_analysis import TextAnalyzer

Row = dict[str, Any]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dump", type=Path, help="squad2.default.jsonl from answer_variants")
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared/eval/squad2")
    args = parser.parse_args()
    analyzer = QuestionAnalyzer(TextAnalyzer())
    rows = [json.loads(line) for line in args.dump.open()]
    idf = _idf(analyzer, args.corpus / "corpus.jsonl")
    features = {r["id"]: _features(analyzer, idf, r) for r in rows}
    rules = {
        "none (the product)": lambda f: False,
        "a name not in the quote or title": lambda f: not f["names_ok"],
        **{f"key terms covered < {t}": (lambda f, t=t: f["cov"] < t) for t in (0.5, 0.6, 0.7)},
        **{
            f"a missing term with IDF > {t}": (lambda f, t=t: f["max_idf_missing"] > t)
            for t in (3, 4, 5)
        },
    }
    print(f"{'rule: also escalate when':40s} {'half A':>32s} {'half B':>32s}")
    for name, rule in rules.items():
        cells = [_cell(rows, features, rule, half) for half in "AB"]
        print(f"{name:40s} {cells[0]:>32s} {cells[1]:>32s}")
    _logistic(rows, features)


def _idf(analyzer: QuestionAnalyzer, corpus: Path) -> dict[str, float]:
    df: collections.Counter[str] = collections.Counter()
    n = 0
    for line in corpus.open():
        document = json.loads(line)
        df.update(set(analyzer.stems(f"{document.get('title', '')} {document['text']}")))
        n += 1
    return {t: math.log((n + 1) / (c + 0.5)) for t, c in df.items()} | {"": math.log(n + 1)}


def _features(analyzer: QuestionAnalyzer, idf: dict[str, float], row: Row) -> dict[str, Any]:
    question = analyzer.analyse(row["question"])
    terms, names = set(question.terms), set(question.names)
    best: dict[str, Any] = {}
    for claim in (c for c in row["claims"] if c["support"] == "strong"):
        own = set(analyzer.stems(claim["quote"])) | set(analyzer.stems(claim["uri"].split("#")[0]))
        missing = terms - own
        best["names_ok"] = best.get("names_ok", False) or names <= own
        best["cov"] = max(best.get("cov", 0.0), len(terms & own) / len(terms) if terms else 1)
        rarest = max((idf.get(t, idf[""]) for t in missing), default=0.0)
        best["max_idf_missing"] = min(best.get("max_idf_missing", 99.0), rarest)
    return best


def _cell(rows: list[Row], features: dict[str, Any], rule: Any, half: str) -> str:
    part = [r for r in rows if r["half"] == half]
    escalate = {r["id"]: r["escalate"] or (bool(features[r["id"]]) and rule(features[r["id"]]))
                for r in part}  # fmt: skip
    answerable = [r for r in part if r["answerable"]]
    unanswerable = [r for r in part if not r["answerable"]]
    false = sum(escalate[r["id"]] for r in answerable) / len(answerable)
    recall = sum(escalate[r["id"]] for r in unanswerable) / len(unanswerable)
    return f"bal.acc {(recall + 1 - false) / 2:.3f} rec {recall:.3f} fe {false:.3f}"


def _logistic(rows: list[Row], features: dict[str, Any]) -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    def vector(row: Row) -> list[float]:
        f = features[row["id"]]
        claims = row["claims"]
        return [
            max((c["score"] for c in claims), default=0.0),
            sum(c["support"] == "strong" for c in claims),
            len(claims),
            float(bool(f)),
            f.get("cov", 0.0),
            float(f.get("names_ok", False)),
            f.get("max_idf_missing", 9.0),
            float(row["escalate"]),
            row["steps"],
        ]

    x = np.array([vector(r) for r in rows])
    y = np.array([not r["answerable"] for r in rows])
    a = np.array([r["half"] == "A" for r in rows])
    model = LogisticRegression(max_iter=1000).fit(x[a], y[a])
    p = model.predict_proba(x[~a])[:, 1]
    print(f"\nlogistic regression, fitted on A, AUC on B: {roc_auc_score(y[~a], p):.3f}")
    for q in (0.3, 0.4, 0.5, 0.6):
        t = float(np.quantile(p, q))
        escalate = p > t
        recall, false = escalate[y[~a]].mean(), escalate[~y[~a]].mean()
        print(f"  escalate above the {q:.0%} quantile: bal.acc {(recall + 1 - false) / 2:.3f}")


if __name__ == "__main__":
    main()
