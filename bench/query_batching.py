"""Questions embedded at the same time: shared model calls against one call each.

    python bench/query_batching.py [--concurrent 50] [--rounds 5] [--output FILE]

One process, two embedders on the packaged model and the ONNX query graph (as `kb
serve` embeds questions): one gathering concurrent query-sized calls into shared model
calls (the default, store/query_batching.py), one making a model call per call (as
before). Each round, `--concurrent` questions are asked of each at once (taking turns
at going first) and timed from the first request to each question's vector; quiet,
then beside a busy Python thread (as the event loop of 50 answering runs is). Also: one
question alone, through the batcher and handed straight to the model's thread as before
it (the batcher has no timer and must not slow it), and the largest difference between
the two embedders' vectors.
"""

from __future__ import annotations

from _env import REPO  # first: the environment, before numpy loads

# isort: split
import argparse
import asyncio
import contextlib
import os
import platform
import time
from pathlib import Path

import numpy as np
from query_embedding import BusyThread, questions

from store.embedding import SentenceTransformerEmbedder

OUT = REPO / "bench" / "out"


async def burst(
    model: SentenceTransformerEmbedder, texts: list[str]
) -> tuple[list[float], np.ndarray]:
    """Each text's time from the burst's start to its vector (ms), and the vectors."""
    started = time.perf_counter()

    async def one(text: str) -> tuple[float, np.ndarray]:
        vector = await model.embed_batch([text])
        return (time.perf_counter() - started) * 1000, vector[0]

    done = await asyncio.gather(*(one(t) for t in texts))
    return [ms for ms, _ in done], np.stack([v for _, v in done])


async def measure(
    concurrent: int, rounds: int
) -> tuple[dict[str, list[float]], float, dict[str, float]]:
    graphs = OUT / "query-graphs"
    shared = SentenceTransformerEmbedder(torch_threads=1, query_graph_dir=graphs)
    each = SentenceTransformerEmbedder(torch_threads=1, query_graph_dir=graphs, query_call_texts=1)
    models = {"shared calls": shared, "a call each": each}
    for model in models.values():
        await model.load()
        await model.embed_batch(["warm up"])
        assert model.query_backend == "onnxruntime", "the ONNX query graph did not load"
    texts = questions(concurrent * rounds)
    times: dict[str, list[float]] = {}
    calls = {name: 0.0 for name in models}
    largest = 0.0
    for setting in ("quiet", "beside a busy Python thread"):
        with BusyThread() if setting != "quiet" else contextlib.nullcontext():
            for number in range(rounds):
                batch = texts[number * concurrent : (number + 1) * concurrent]
                order = list(models.items())
                vectors = []
                for name, model in order[number % 2 :] + order[: number % 2]:
                    before = model.query_calls
                    ms, found = await burst(model, batch)
                    calls[name] += (model.query_calls - before) / (2 * rounds)
                    times.setdefault(f"{name}, {setting}, each question", []).extend(ms)
                    times.setdefault(f"{name}, {setting}, whole burst", []).append(max(ms))
                    vectors.append(found)
                largest = max(largest, float(np.abs(vectors[0] - vectors[1]).max()))
                for text in batch[:10]:
                    await alone(shared, text, setting, times)
    for model in models.values():
        model.close()
    return times, largest, calls


async def alone(
    model: SentenceTransformerEmbedder, text: str, setting: str, times: dict[str, list[float]]
) -> None:
    """One question with nothing else asked: through the batcher, and handed straight to
    the model's thread as before the batcher (its own encode method), taking turns."""
    ways = {
        "through the batcher": lambda: model.embed_batch([text]),
        "straight to the model thread": lambda: model._encode_queries_off_loop([text]),
    }
    for name, embed in sorted(ways.items(), key=lambda _: time.perf_counter_ns() % 2):
        started = time.perf_counter()
        await embed()
        ms = (time.perf_counter() - started) * 1000
        times.setdefault(f"one question alone, {name}, {setting}", []).append(ms)


def report(
    times: dict[str, list[float]], largest: float, calls: dict[str, float], args: argparse.Namespace
) -> list[str]:
    lines = [
        "# Questions embedded at the same time: shared model calls against one call each",
        "",
        f"Command: `python bench/query_batching.py --concurrent {args.concurrent} --rounds "
        f"{args.rounds}` ({args.concurrent} one-question calls at once, {args.rounds} rounds per "
        "setting, the two embedders taking turns at going first; ONNX query graph, one thread).",
        "",
        "| embedder, setting, what | p50 ms | p95 ms |",
        "|---|---:|---:|",
    ]
    for label, values in times.items():
        p50, p95 = np.percentile(values, 50), np.percentile(values, 95)
        lines.append(f"| {label} | {p50:.1f} | {p95:.1f} |")
    lines.append("")
    for setting in ("quiet", "beside a busy Python thread"):
        for what in ("each question", "whole burst"):
            one = np.percentile(times[f"a call each, {setting}, {what}"], 50)
            shared = np.percentile(times[f"shared calls, {setting}, {what}"], 50)
            lines.append(
                f"- {setting}, {what}, p50: a call each ÷ shared calls = {one / shared:.2f}×"
            )
    lines += [
        "- model calls per burst: "
        + ", ".join(f"{name} {count:.1f}" for name, count in calls.items()),
        f"- largest element-wise difference between the two embedders' vectors: {largest:.2g}",
        "",
        "## Machine",
        "",
        f"- nproc: {os.cpu_count()}, python {platform.python_version()}",
        f"- load average after the run: {', '.join(f'{x:.2f}' for x in os.getloadavg())}",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--concurrent", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    times, largest, calls = asyncio.run(measure(args.concurrent, args.rounds))
    text = "\n".join(report(times, largest, calls, args)) + "\n"
    print(text)
    if args.output:
        args.output.write_text(text)


if __name__ == "__main__":
    main()
