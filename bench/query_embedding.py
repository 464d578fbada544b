"""Embedding one question: torch against the ONNX query graph (store/query_graph.py).

    python bench/query_embedding.py [--queries 300] [--output bench/results/query_embedding.md]

Both run in this process on the same questions (HotpotQA's and SciFact's, one at a time,
taking turns at going first), each on one thread as `kb serve` runs them. Also measured
beside a second thread doing pure-Python work, as the keyword stage runs beside the
embedding in hybrid retrieval: a backend that holds the GIL is slowed by it.
"""

from __future__ import annotations

from _env import REPO  # first: the environment, before numpy loads

# isort: split
import argparse
import asyncio
import contextlib
import json
import os
import platform
import threading
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.progress import Progress

from store.embedding import SentenceTransformerEmbedder

console = Console(stderr=True)
EVAL = REPO.parent / "shared" / "eval"
OUT = REPO / "bench" / "out"


def questions(count: int) -> list[str]:
    texts = [json.loads(line)["question"] for line in (EVAL / "hotpotqa" / "answers.jsonl").open()]
    texts += [json.loads(line)["text"] for line in (EVAL / "scifact" / "queries.jsonl").open()]
    return texts[:count]


class BusyThread:
    """A thread running pure-Python loops (it holds the GIL most of the time)."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)

    def __enter__(self) -> BusyThread:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _spin(self) -> None:
        total = 0
        while not self._stop.is_set():
            for i in range(10_000):
                total += i * i


async def measure(count: int) -> dict[str, list[float]]:
    graph = SentenceTransformerEmbedder(torch_threads=1, query_graph_dir=OUT / "query-graphs")
    torch = SentenceTransformerEmbedder(torch_threads=1)
    for model in (graph, torch):
        await model.load()
        await model.embed_batch(["warm up"])
    assert graph.query_backend == "onnxruntime", "the ONNX query graph did not load"
    backends = {"torch": torch, "onnxruntime": graph}
    texts = questions(count)
    times: dict[str, list[float]] = {}
    largest = 0.0
    with Progress(console=console) as progress:
        task = progress.add_task("questions", total=2 * len(texts))
        for setting in ("alone", "beside a busy Python thread"):
            with BusyThread() if setting != "alone" else contextlib.nullcontext():
                for number, text in enumerate(texts):
                    order = list(backends.items())
                    vectors = []
                    for name, model in order[number % 2 :] + order[: number % 2]:
                        started = time.perf_counter()
                        vectors.append(await model.embed_batch([text]))
                        ms = (time.perf_counter() - started) * 1000
                        times.setdefault(f"{name}, {setting}", []).append(ms)
                    largest = max(largest, float(np.abs(vectors[0] - vectors[1]).max()))
                    progress.advance(task)
    for model in backends.values():
        model.close()
    figures = {
        label: [float(np.percentile(v, 50)), float(np.percentile(v, 95))]
        for label, v in times.items()
    }
    figures["largest difference between the two vectors"] = [largest, largest]
    return figures


def report(figures: dict[str, list[float]], count: int, loads: list[str]) -> list[str]:
    lines = [
        "# Embedding one question: torch against the ONNX query graph",
        "",
        f"Command: `python bench/query_embedding.py --queries {count}` (one process; each",
        "question embedded by both, taking turns at going first; one thread each).",
        "",
        "| backend | p50 ms | p95 ms |",
        "|---|---:|---:|",
    ]
    for label, (p50, p95) in figures.items():
        if label.startswith(("torch", "onnx")):
            lines.append(f"| {label} | {p50:.2f} | {p95:.2f} |")
    for setting in ("alone", "beside a busy Python thread"):
        t, o = figures[f"torch, {setting}"], figures[f"onnxruntime, {setting}"]
        lines.append(
            f"| ratio torch ÷ onnxruntime, {setting} | {t[0] / o[0]:.2f}× | {t[1] / o[1]:.2f}× |"
        )
    largest = figures["largest difference between the two vectors"][0]
    lines += [
        "",
        f"Largest element-wise difference between the two backends' vectors: {largest:.2g}.",
        "",
        "## Machine",
        "",
        f"- nproc: {os.cpu_count()}",
        f"- python: {platform.python_version()}",
        *(f"- {line}" for line in loads),
    ]
    return lines


def load_average() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    loads = [f"load average at the start: {load_average()}"]
    figures = asyncio.run(measure(args.queries))
    loads.append(f"load average at the end: {load_average()}")
    lines = report(figures, args.queries, loads)
    print("\n".join(lines))
    if args.output:
        args.output.write_text("\n".join(lines) + "\n")
        console.print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
