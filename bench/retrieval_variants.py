"""Fusion and embedding variants measured against the default hybrid, in memory.

    python bench/retrieval_variants.py [--datasets scifact hotpotqa] [--eval-dir ../shared/eval]

A replica of `kb eval retrieval`'s pipeline without Postgres, to try ideas quickly: the
same chunker, analyzer, BM25 engine (k1 0.9, b 0.4, title counted twice), z-score fusion
and metrics, with an exact cosine scan instead of HNSW. Each variant is reported as
nDCG@10 with its 95% paired-bootstrap interval and its difference from the two-list
hybrid (BM25 terms + vectors), paired over the same queries. That hybrid reproduces
`kb eval retrieval --pair-weight 0` to the third decimal; the product's default adds the
word-pair list at weight 0.3 (the "word pairs" rows). Chunk vectors are cached in
bench/out/variants/ (the first run embeds each corpus up to three times: about 15
minutes on 2 cores).

The results, and what they mean, are in bench/results/retrieval_eval.md.
"""

from __future__ import annotations

from _env import REPO  # first: the environment, before numpy loads

# isort: split

import argparse
import csv
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.progress import Progress

from agent.eval.metrics import (
    QueryMetrics,
    bootstrap_samples,
    paired_difference,
    query_metrics,
    summarise,
)
from agent.retrieval.fusion import score_fusion
from jobs.chunking import chunk_text
from store.embedding import packaged_model_path
from store.keyword_search.bm25 import Bm25Index, Bm25Parameters, top_positive
from store.keyword_search.pairs import PairIndex
from store.keyword_search.terms import BREAK, TermSequences, Vocabulary
from store.text_analysis import _PART, TextAnalyzer

SPLITS = {"scifact": "train", "hotpotqa": "dev"}
DEPTH = 100  # candidates per list, as in agent.retrieval.hybrid
OUT = REPO / "bench" / "out" / "variants"
console = Console(width=160)

Ranked = list[tuple[int, float]]


@dataclass(frozen=True, slots=True)
class Chunk:
    document: int
    start: int
    end: int
    embedding_text: str


class Dataset:
    """A BEIR dataset chunked like the product, with BM25 built like `KeywordSearch`."""

    def __init__(self, folder: Path, split: str) -> None:
        self.name = folder.name
        self.docs = [json.loads(line) for line in (folder / "corpus.jsonl").open()]
        self.doc_ids = [d["_id"] for d in self.docs]
        self.qrels: dict[str, dict[str, float]] = {}
        with (folder / "qrels" / f"{split}.tsv").open() as handle:
            rows = csv.reader(handle, delimiter="\t")
            next(rows)
            for query, doc, score in rows:
                self.qrels.setdefault(query, {})[doc] = float(score)
        queries = [json.loads(line) for line in (folder / "queries.jsonl").open()]
        self.queries = [q for q in queries if q["_id"] in self.qrels]
        self.chunks = [
            Chunk(i, c.start, c.end, c.embedding_text())
            for i, doc in enumerate(self.docs)
            for c in chunk_text(doc["text"])
        ]
        self.chunk_doc = np.array([c.document for c in self.chunks])
        self.bm25, self.query_terms = self.keyword_index(TextAnalyzer())

    def keyword_index(self, analyzer: TextAnalyzer) -> tuple[Bm25Index, list[dict[int, int]]]:
        """BM25 over the chunks as `KeywordSearch` builds it, and the analysed queries."""
        vocabulary = Vocabulary()
        encoded = [vocabulary.encode(analyzer.terms(self._keyword_text(c))) for c in self.chunks]
        bm25 = Bm25Index.build(
            encoded, vocabulary_size=len(vocabulary), parameters=Bm25Parameters(k1=0.9, b=0.4)
        )
        return bm25, [vocabulary.lookup(analyzer.terms(q["text"])) for q in self.queries]

    def _keyword_text(self, chunk: Chunk) -> str:
        title = self.docs[chunk.document]["title"]
        return f"{title}\n{title}\n" + self.docs[chunk.document]["text"][chunk.start : chunk.end]

    def keyword(self, query: int, depth: int = DEPTH) -> Ranked:
        return top_positive(self.bm25.scores(self.query_terms[query]), depth)

    def word_pairs(self) -> list[Ranked]:
        """Each query's BM25 list over adjacent word pairs, indexed as `KeywordSearch` does
        (pairs within the title, counted twice, and within the text; none across them)."""
        analyzer, vocabulary = TextAnalyzer(), Vocabulary()
        encoded = []
        for chunk in self.chunks:
            doc = self.docs[chunk.document]
            title = vocabulary.ids(analyzer.analyse(doc["title"]).words)
            text = vocabulary.ids(analyzer.analyse(doc["text"][chunk.start : chunk.end]).words)
            encoded.append(np.concatenate([title, [BREAK], title, [BREAK], text]))
        pairs = PairIndex.build(TermSequences.of(encoded), parameters=Bm25Parameters(k1=0.9, b=0.4))
        ranked = []
        for q in self.queries:
            ids = vocabulary.known_ids(analyzer.analyse(q["text"]).words)
            ranked.append(top_positive(pairs.index.scores(pairs.query(ids)), DEPTH))
        return ranked

    def documents(self, ranked: Ranked) -> list[str]:
        """Document ids in the order of their best chunk."""
        return list(dict.fromkeys(self.doc_ids[self.chunk_doc[c]] for c, _ in ranked))

    def evaluate(self, rankings: Sequence[Ranked]) -> list[QueryMetrics]:
        return [
            query_metrics(self.documents(r), self.qrels[self.queries[i]["_id"]])
            for i, r in enumerate(rankings)
        ]


GREEK = dict(zip("αβγδεζηθικλμνξπρσςτυφχψω", (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma "
    "sigma tau upsilon phi chi psi omega").split(), strict=True))  # fmt: skip


class VariantAnalyzer(TextAnalyzer):
    """The product's analyzer, plus catenated compounds (`il-6` also gives `il6`) and/or
    Greek letters spelled out (`nf-κb` as `nf-kappab`), as Lucene filters can."""

    def __init__(self, *, catenate: bool = False, spell_greek: bool = False) -> None:
        super().__init__()
        self._catenate = catenate
        self._greek = str.maketrans(GREEK) if spell_greek else None

    def terms(self, text: str) -> list[str]:
        if self._greek is not None:
            text = text.casefold().translate(self._greek)
        return super().terms(text)

    def _candidate(self, candidate: str, words: list[str], whole: list[str]) -> None:
        super()._candidate(candidate, words, whole)
        parts = _PART.findall(candidate)
        if self._catenate and len(parts) > 1:
            words.append("".join(parts))


class Vectors:
    """Chunk and query vectors of one embedding variant, cached on disk."""

    def __init__(self, dataset: Dataset, *, titled: bool, window: int, progress: Progress):
        from sentence_transformers import SentenceTransformer

        self._model: SentenceTransformer | None = None
        self._progress = progress
        self._window = window
        name = f"{dataset.name}_{'titled' if titled else 'plain'}_{window}"
        texts = [
            f"{dataset.docs[c.document]['title']}\n\n{c.embedding_text}"
            if titled and dataset.docs[c.document]["title"]
            else c.embedding_text
            for c in dataset.chunks
        ]
        self.chunks = self._cached(OUT / f"{name}.npy", texts, f"{name}: chunks")
        self.queries = self._cached(
            OUT / f"{dataset.name}_queries.npy",
            [q["text"] for q in dataset.queries],
            f"{dataset.name}: queries",
        )

    def search(self, query_vector: np.ndarray, depth: int = DEPTH) -> Ranked:
        scores = self.chunks @ query_vector
        top = np.argpartition(-scores, depth)[:depth]
        top = top[np.argsort(-scores[top])]
        return [(int(i), float(scores[i])) for i in top]

    def _cached(self, path: Path, texts: list[str], label: str) -> np.ndarray:
        if path.exists():
            vectors = np.load(path)
            if len(vectors) == len(texts):
                return vectors
        from sentence_transformers import SentenceTransformer

        if self._model is None:
            self._model = SentenceTransformer(
                str(packaged_model_path()), device="cpu", local_files_only=True
            )
            self._model.max_seq_length = self._window
        order = np.argsort([-len(t) for t in texts])  # similar lengths share a batch
        out = np.empty((len(texts), 384), dtype=np.float32)
        task = self._progress.add_task(label, total=len(texts))
        for begin in range(0, len(texts), 256):
            part = order[begin : begin + 256]
            out[part] = self._model.encode(
                [texts[i] for i in part], batch_size=32, normalize_embeddings=True
            )
            self._progress.advance(task, len(part))
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, out)
        return out


def zscore(lists: Sequence[Ranked], weights: Sequence[float] | None = None) -> Ranked:
    return score_fusion(lists, weights=weights, normalise="zscore")


def complete_scores(dataset: Dataset, vectors: Vectors, query: int, depth: int) -> Ranked:
    """z-score fusion where a candidate missing from one list gets its real score there."""
    keyword, dense = dataset.keyword(query, depth), vectors.search(vectors.queries[query], depth)
    all_keyword = dataset.bm25.scores(dataset.query_terms[query])

    def stats(ranked: Ranked) -> tuple[float, float]:
        values = [s for _, s in ranked]
        mean = sum(values) / len(values)
        return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)) or 1.0

    (km, ks), (dm, ds) = stats(keyword), stats(dense)
    fused = {
        c: (float(all_keyword[c]) - km) / ks
        + (float(vectors.chunks[c] @ vectors.queries[query]) - dm) / ds
        for c in dict.fromkeys([c for c, _ in keyword] + [c for c, _ in dense])
    }
    return sorted(fused.items(), key=lambda item: -item[1])


def fused_feedback(dataset: Dataset, vectors: Vectors, query: int, k: int, beta: float) -> Ranked:
    """Search again with the query vector moved towards the fused top k, and re-fuse."""
    keyword = dataset.keyword(query)
    first = zscore([keyword, vectors.search(vectors.queries[query])])
    moved = vectors.queries[query] + beta * vectors.chunks[[c for c, _ in first[:k]]].mean(0)
    return zscore([keyword, vectors.search(moved / np.linalg.norm(moved))])


def run(dataset: Dataset, progress: Progress) -> None:
    plain = Vectors(dataset, titled=False, window=256, progress=progress)
    titled = Vectors(dataset, titled=True, window=256, progress=progress)
    long_window = (
        Vectors(dataset, titled=False, window=512, progress=progress)
        if dataset.name == "scifact"
        else None
    )
    n = len(dataset.queries)
    keyword = [dataset.keyword(i) for i in range(n)]
    dense = [plain.search(plain.queries[i]) for i in range(n)]
    samples = bootstrap_samples(n)
    default = dataset.evaluate([zscore([k, d]) for k, d in zip(keyword, dense, strict=True)])

    def report(
        label: str,
        rankings: Callable[[int], Ranked],
        against: tuple[str, list[QueryMetrics]] = ("hybrid", default),
    ) -> list[QueryMetrics]:
        metrics = dataset.evaluate([rankings(i) for i in range(n)])
        summary = summarise(metrics, samples)
        delta, interval = paired_difference(metrics, against[1], samples)
        console.print(
            f"{dataset.name:8s} {label:46s} nDCG@10 {summary.means['ndcg@10']:.3f} "
            f"({summary.ndcg_interval.low:.3f}–{summary.ndcg_interval.high:.3f})  "
            f"Δ vs {against[0]} {delta:+.3f} ({interval.low:+.3f}, {interval.high:+.3f})"
        )
        return metrics

    keyword_metrics = report("bm25", lambda i: keyword[i])
    vector = report("vector", lambda i: dense[i])
    report("hybrid, terms + vectors (z-score 1:1)", lambda i: zscore([keyword[i], dense[i]]))
    for w in (0.8, 0.9, 1.1, 1.2, 1.3, 1.5):
        report(f"hybrid, BM25 weight {w}", lambda i, w=w: zscore([keyword[i], dense[i]], (w, 1)))
    for depth in (50, 100, 200):
        report(f"complete scores, depth {depth}", lambda i, d=depth: complete_scores(
            dataset, plain, i, d))  # fmt: skip
    titled_dense = [titled.search(titled.queries[i]) for i in range(n)]
    report("vector, title in the embedded text", lambda i: titled_dense[i], ("vector", vector))
    report("hybrid, title in the embedded text", lambda i: zscore([keyword[i], titled_dense[i]]))
    report(
        "bm25 + titled + plain vectors (1 : .5 : .5)",
        lambda i: zscore([keyword[i], titled_dense[i], dense[i]], (1, 0.5, 0.5)),
    )
    if long_window is not None:
        wide = [long_window.search(long_window.queries[i]) for i in range(n)]
        report("vector, 512-token window", lambda i: wide[i], ("vector", vector))
        report("hybrid, 512-token window", lambda i: zscore([keyword[i], wide[i]]))
    for label, analyzer in (
        ("compounds also catenated", VariantAnalyzer(catenate=True)),
        ("Greek letters spelled out", VariantAnalyzer(spell_greek=True)),
    ):
        bm25, terms = dataset.keyword_index(analyzer)
        variant = [top_positive(bm25.scores(terms[i]), DEPTH) for i in range(n)]
        report(f"bm25, {label}", lambda i, v=variant: v[i], ("bm25", keyword_metrics))
        report(f"hybrid, {label}", lambda i, v=variant: zscore([v[i], dense[i]]))
    pairs = dataset.word_pairs()
    for w in (0.1, 0.2, 0.3, 0.4, 0.5):
        label = f"hybrid + word pairs, weight {w}" + (" (the default)" if w == 0.3 else "")
        report(label, lambda i, w=w: zscore([keyword[i], dense[i], pairs[i]], (1, 1, w)))
    for k in (1, 3, 5):
        for beta in (0.3, 0.6, 1.0):
            report(f"fused feedback, top {k}, beta {beta}", lambda i, k=k, b=beta: fused_feedback(
                dataset, plain, i, k, b))  # fmt: skip


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(SPLITS), choices=list(SPLITS))
    parser.add_argument("--eval-dir", type=Path, default=REPO.parent / "shared" / "eval")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(os.cpu_count() or 1)
    with Progress(console=console, transient=True) as progress:
        for name in args.datasets:
            console.print(f"[bold]{name}[/]: chunking and building BM25 …")
            run(Dataset(args.eval_dir / name, SPLITS[name]), progress)


if __name__ == "__main__":
    main()
