"""Retrieval evaluation on a BEIR-layout dataset: BM25, vector, hybrid and hybrid + rerank.

The dataset folder holds `corpus.jsonl` (`_id`, `title`, `text`), `queries.jsonl` (`_id`,
`text`) and `qrels/<split>.tsv` (header `query-id corpus-id score`). The caller indexes the
corpus (document uri = `_id`; bot/eval_command.py does it with the ordinary indexer) and
hands over a retriever. Each query runs the hybrid pipeline once and every stage's
ranking is scored as a document ranking, each document taking its best chunk's rank.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent.eval.metrics import (
    METRIC_NAMES,
    Interval,
    QueryMetrics,
    Summary,
    bootstrap_samples,
    document_ranking,
    paired_difference,
    query_metrics,
    summarise,
)
from agent.retrieval.fusion import reciprocal_rank_fusion
from agent.retrieval.hybrid import HybridResult, HybridRetriever

# The rows of the report, in order; the first four are the required JSON keys.
SYSTEMS = ("bm25", "vector", "hybrid", "hybrid+rerank", "hybrid_rrf")

ProgressCallback = Callable[[int, int], None]


class DatasetError(ValueError):
    """The folder is not a usable BEIR-layout dataset."""


@dataclass(frozen=True, slots=True)
class BeirDataset:
    name: str
    root: Path
    split: str
    queries: dict[str, str]  # only the queries the split judges
    qrels: dict[str, dict[str, float]]

    @classmethod
    def load(cls, root: Path, *, split: str, limit: int | None = None) -> BeirDataset:
        qrels = _read_qrels(root / "qrels" / f"{split}.tsv")
        texts = _read_queries(root / "queries.jsonl")
        judged = [q for q in texts if q in qrels and any(g > 0 for g in qrels[q].values())]
        if not judged:
            raise DatasetError(f"no query of {root / 'queries.jsonl'} is judged by split {split}")
        chosen = judged[:limit] if limit else judged
        return cls(
            name=root.resolve().name,
            root=root,
            split=split,
            queries={q: texts[q] for q in chosen},
            qrels={q: qrels[q] for q in chosen},
        )


def _read_qrels(path: Path) -> dict[str, dict[str, float]]:
    if not path.is_file():
        available = sorted(p.stem for p in path.parent.glob("*.tsv"))
        raise DatasetError(f"no qrels file {path}; splits here: {', '.join(available) or 'none'}")
    qrels: dict[str, dict[str, float]] = {}
    with path.open(encoding="utf-8", newline="") as f:
        rows = csv.reader(f, delimiter="\t")
        header = next(rows, None)
        if header is None or [h.strip() for h in header[:3]] != ["query-id", "corpus-id", "score"]:
            raise DatasetError(f"{path} must start with the header 'query-id corpus-id score'")
        for row in rows:
            if len(row) >= 3:
                qrels.setdefault(row[0], {})[row[1]] = float(row[2])
    return qrels


def _read_queries(path: Path) -> dict[str, str]:
    with path.open(encoding="utf-8") as f:
        return {q["_id"]: q["text"] for q in map(json.loads, filter(str.strip, f))}


@dataclass(slots=True)
class SystemResult:
    summary: Summary
    per_query: list[QueryMetrics]
    # Paired difference on nDCG@10 against the hybrid (RRF) reference row.
    versus_rrf: tuple[float, Interval] | None = None


@dataclass(slots=True)
class EvalReport:
    dataset: str
    split: str
    queries: int
    systems: dict[str, SystemResult]
    stage_ms: dict[str, list[float]] = field(default_factory=dict)

    def as_json(self) -> dict[str, dict[str, object]]:
        return {name: result.summary.as_dict() for name, result in self.systems.items()}


async def evaluate(
    *,
    dataset: BeirDataset,
    retriever: HybridRetriever,
    chunk_uris: Mapping[int, str],
    progress: ProgressCallback | None = None,
    resamples: int = 2000,
) -> EvalReport:
    """Run every query of `dataset` through `retriever` and score each stage."""
    rankings: dict[str, list[list[str]]] = {name: [] for name in SYSTEMS}
    stage_ms: dict[str, list[float]] = {}
    for done, query_text in enumerate(dataset.queries.values(), start=1):
        result = await retriever.search(query_text)
        for name, ranking in _rankings(result, chunk_uris).items():
            rankings[name].append(ranking)
        for stage, ms in result.timings_ms.items():
            stage_ms.setdefault(stage, []).append(ms)
        if progress:
            progress(done, len(dataset.queries))
    return _report(dataset, rankings, stage_ms, resamples)


def _rankings(result: HybridResult, chunk_uris: Mapping[int, str]) -> dict[str, list[str]]:
    def documents(chunk_ids: Sequence[int]) -> list[str]:
        return document_ranking([chunk_uris[c] for c in chunk_ids if c in chunk_uris])

    rrf = reciprocal_rank_fusion([result.keyword, result.vector], k=60)
    # Only the fetched head is re-ranked (HybridOptions.fetch); the rest follow, fused order.
    reranked = [h.chunk_id for h in result.ranked]
    seen = set(reranked)
    reranked += [c for c, _ in result.fused if c not in seen]
    return {
        "bm25": documents([c for c, _ in result.keyword]),
        "vector": documents([c for c, _ in result.vector]),
        "hybrid": documents([c for c, _ in result.fused]),
        "hybrid+rerank": documents(reranked),
        "hybrid_rrf": documents([c for c, _ in rrf]),
    }


def _report(
    dataset: BeirDataset,
    rankings: dict[str, list[list[str]]],
    stage_ms: dict[str, list[float]],
    resamples: int,
) -> EvalReport:
    judged = list(dataset.qrels.values())
    samples = bootstrap_samples(len(judged), resamples=resamples)
    per_system = {
        name: [query_metrics(r, qrels) for r, qrels in zip(runs, judged, strict=True)]
        for name, runs in rankings.items()
    }
    systems = {
        name: SystemResult(
            summary=summarise(metrics, samples),
            per_query=metrics,
            versus_rrf=(
                paired_difference(metrics, per_system["hybrid_rrf"], samples)
                if name != "hybrid_rrf"
                else None
            ),
        )
        for name, metrics in per_system.items()
    }
    return EvalReport(dataset.name, dataset.split, len(judged), systems, stage_ms)


def markdown_table(report: EvalReport) -> str:
    """The report as a Markdown table, one row per system, nDCG@10 with its 95% interval."""
    header = ["system", *METRIC_NAMES, "nDCG@10 95% CI", "Δ nDCG@10 vs RRF (95% CI)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, result in report.systems.items():
        m, ci = result.summary.means, result.summary.ndcg_interval
        delta = (
            f"{result.versus_rrf[0]:+.3f} ({result.versus_rrf[1].low:+.3f}, "
            f"{result.versus_rrf[1].high:+.3f})"
            if result.versus_rrf
            else "—"
        )
        cells = [name, *(f"{m[k]:.3f}" for k in METRIC_NAMES), f"{ci.low:.3f}–{ci.high:.3f}"]
        lines.append("| " + " | ".join([*cells, delta]) + " |")
    return "\n".join(lines)
