"""Retrieval latency at 10k and 100k chunks, stage by stage, with baselines in the same run.

    python bench/retrieval_latency.py [--sizes 10000 100000] [--queries 200]

Corpus: SciFact and HotpotQA chunks (from ../shared/eval) embedded once with the packaged
MiniLM and cached in bench/out/; larger sizes repeat them with the vectors jittered
(cosine ≈ 0.9 to their original) and the texts re-mixed from two real chunks, so HNSW
and BM25 see realistic, non-duplicate data. Queries: SciFact claims.

Prints a table per size and writes bench/results/retrieval_latency.md with the machine
description. Stages: query embedding, vector search (top 100, HNSW at the hybrid's
ef_search, without and with a source filter), keyword search (BM25, top 100), fusion,
hybrid retrieval end to end without rerank, rerank of 30 candidates (title links; and a
MiniLM-L6-sized cross-encoder, random head, for its cost), and read. Baselines:
rank-bm25 and bm25s against our BM25, exact scan against HNSW, and hnsw.ef_search's
recall against the exact scan.
"""

from __future__ import annotations

from _env import REPO  # first: the environment, before numpy loads

# isort: split

import argparse
import asyncio
import json
import os
import platform
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from agent.retrieval.fusion import FusionOptions, fuse
from agent.retrieval.hybrid import EF_SEARCH, HybridOptions, HybridRetriever
from agent.retrieval.reading import Reader
from agent.retrieval.rerank import CrossEncoderReranker, TitleLinkReranker
from jobs.chunking import chunk_text
from store.corpus import CorpusReader
from store.database import open_pool
from store.documents import ChunkRecord, DocumentRecord, DocumentRepository
from store.embedded import start_embedded_postgres
from store.embedding import SentenceTransformerEmbedder, packaged_model_path
from store.filters import ChunkFilter
from store.keyword_search import KeywordOptions, KeywordSearch
from store.vector_search import VectorSearch

EVAL = REPO.parent / "shared" / "eval"
OUT = REPO / "bench" / "out"
RESULTS = REPO / "bench" / "results" / "retrieval_latency.md"
CHUNKS_PER_DOCUMENT = 10
CROSS_ENCODER_QUERIES = 20
console = Console()


@dataclass(slots=True)
class Base:
    """Real chunks: text, title, vector."""

    texts: list[str]
    titles: list[str]
    vectors: np.ndarray


@dataclass(slots=True)
class Timings:
    stages: dict[str, list[float]] = field(default_factory=dict)

    def add(self, stage: str, ms: float) -> None:
        self.stages.setdefault(stage, []).append(ms)

    def row(self, stage: str) -> tuple[float, float]:
        values = self.stages[stage]
        return float(np.percentile(values, 50)), float(np.percentile(values, 95))


async def timed(timings: Timings, stage: str, work: Callable[[], Awaitable[object]]) -> object:
    started = time.perf_counter()
    result = await work()
    timings.add(stage, (time.perf_counter() - started) * 1000)
    return result


# --- corpus -----------------------------------------------------------------------------


async def load_base(embedder: SentenceTransformerEmbedder) -> Base:
    """SciFact + HotpotQA chunks with their vectors, embedded once and cached."""
    texts, titles = [], []
    for name in ("scifact", "hotpotqa"):
        for line in (EVAL / name / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
            doc = json.loads(line)
            for chunk in chunk_text(doc["text"]):
                texts.append(chunk.embedding_text())
                titles.append(doc["title"])
    cache = OUT / f"base_vectors_{len(texts)}.npy"
    if cache.exists():
        vectors = np.load(cache)
    else:
        console.print(f"embedding {len(texts)} real chunks once (cached in {cache})…")
        batches = []
        with Progress(console=console, transient=True) as progress:
            task = progress.add_task("embedding", total=len(texts))
            for start in range(0, len(texts), 256):
                batches.append(await embedder.embed_batch(texts[start : start + 256]))
                progress.update(task, advance=len(batches[-1]))
        vectors = np.concatenate(batches)
        OUT.mkdir(parents=True, exist_ok=True)
        np.save(cache, vectors)
    return Base(texts, titles, vectors)


def synthetic(base: Base, size: int, rng: np.random.Generator) -> Base:
    """`size` chunks: the real ones first, then jittered, re-mixed copies."""
    n = len(base.texts)
    if size <= n:
        return Base(base.texts[:size], base.titles[:size], base.vectors[:size])
    extra = size - n
    first, second = rng.integers(0, n, extra), rng.integers(0, n, extra)
    noise = rng.normal(size=(extra, base.vectors.shape[1])).astype(np.float32)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    jittered = base.vectors[first] + 0.5 * noise
    jittered /= np.linalg.norm(jittered, axis=1, keepdims=True)
    texts = [
        _mix(base.texts[a], base.texts[b])
        for a, b in zip(first.tolist(), second.tolist(), strict=True)
    ]
    titles = [base.titles[a] for a in first.tolist()]
    return Base(base.texts + texts, base.titles + titles, np.concatenate([base.vectors, jittered]))


def _mix(a: str, b: str) -> str:
    words_a, words_b = a.split(), b.split()
    return " ".join(words_a[: len(words_a) // 2] + words_b[len(words_b) // 2 :][:60])


async def store_corpus(pool, corpus: Base, embedder: SentenceTransformerEmbedder) -> None:  # type: ignore[no-untyped-def]
    repo = DocumentRepository(pool)
    await repo.adopt_model(embedder.identity)
    source_id = await repo.ensure_source(name="bench", kind="bench")
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task(f"storing {len(corpus.texts)} chunks", total=len(corpus.texts))
        for start in range(0, len(corpus.texts), CHUNKS_PER_DOCUMENT):
            await _store_document(repo, source_id, corpus, start)
            progress.update(task, advance=CHUNKS_PER_DOCUMENT)


async def _store_document(
    repo: DocumentRepository, source_id: int, corpus: Base, start: int
) -> None:
    end = min(start + CHUNKS_PER_DOCUMENT, len(corpus.texts))
    texts = corpus.texts[start:end]
    document_text = "\n\n".join(texts)
    chunks, offset = [], 0
    for ordinal, text in enumerate(texts):
        chunks.append(
            ChunkRecord(
                ordinal,
                text,
                f"b{start + ordinal}",
                offset,
                offset + len(text),
                (),
                corpus.vectors[start + ordinal],
            )
        )
        offset += len(text) + 2
    document = DocumentRecord(
        f"doc-{start}", corpus.titles[start], None, document_text, f"c{start}", f"m{start}"
    )
    await repo.replace_document(source_id=source_id, document=document, chunks=chunks)


# --- measurements -------------------------------------------------------------------------


async def measure(pool, corpus: Base, queries: list[str], embedders, cross_encoder) -> dict:  # type: ignore[no-untyped-def]
    """Every stage per query; `embedders` maps a label (torch threads) to a query embedder."""
    reader = CorpusReader(pool)
    # The baseline first: the same index without word pairs, for their build time and memory.
    single_terms = KeywordSearch(reader, options=KeywordOptions(word_pairs=False))
    await single_terms.refresh()
    keyword = KeywordSearch(reader)
    await keyword.refresh()
    builds = {"without word pairs": single_terms.last_build, "with word pairs": keyword.last_build}
    vector = VectorSearch(pool, ef_search=EF_SEARCH)  # as the product's hybrid searches
    retrievers = {
        label: HybridRetriever(
            embedder=embedder,
            vector_search=vector,
            keyword_search=keyword,
            corpus=reader,
            options=HybridOptions(candidates=100),
        )
        for label, embedder in embedders.items()
    }
    last = list(embedders)[-1]
    retrievers[f"{last}, no word pairs"] = HybridRetriever(
        embedder=embedders[last],
        vector_search=vector,
        keyword_search=keyword,
        corpus=reader,
        options=HybridOptions(candidates=100, pair_weight=0),
    )
    # The options before issue 12's latency work, for comparison in the same run.
    retrievers[f"{last}, every candidate fetched, stages in turn"] = HybridRetriever(
        embedder=embedders[last],
        vector_search=vector,
        keyword_search=keyword,
        corpus=reader,
        options=HybridOptions(candidates=100, fetch=None, overlap="off"),
    )
    stages = Stages(
        keyword,
        vector,
        TitleLinkReranker(titles=keyword, analyzer=keyword.analyzer),
        Reader(reader),
    )
    t = Timings()
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("queries", total=len(queries))
        for number, query in enumerate(queries):
            # The cross-encoder takes seconds per query here: 20 queries show its cost.
            slow = cross_encoder if number < CROSS_ENCODER_QUERIES else None
            await _one_query(t, query, embedders, retrievers, stages, slow)
            progress.advance(task)
    rebuild_s = await _incremental_rebuild(pool, corpus, [single_terms, keyword])
    await single_terms.close()
    first = next(iter(embedders.values()))
    baselines = await _baselines(pool, corpus, queries, first, vector, keyword)
    await keyword.close()
    return {"timings": t, "builds": builds, "rebuild_s": rebuild_s, "baselines": baselines}


async def _incremental_rebuild(pool, corpus: Base, searches: list[KeywordSearch]) -> list[float]:  # type: ignore[no-untyped-def]
    """Seconds each index takes to catch up after one document (10 chunks) changed."""
    repo = DocumentRepository(pool)
    source_id = await repo.ensure_source(name="bench", kind="bench")
    edited = Base([t + " edited" for t in corpus.texts], corpus.titles, corpus.vectors)
    await _store_document(repo, source_id, edited, 0)
    seconds = []
    for search in searches:
        started = time.perf_counter()
        await search.refresh()
        seconds.append(time.perf_counter() - started)
    return seconds


@dataclass(frozen=True, slots=True)
class Stages:
    keyword: KeywordSearch
    vector: VectorSearch
    links: TitleLinkReranker
    reader: Reader


async def _one_query(t, query, embedders, retrievers, stages: Stages, cross_encoder) -> None:  # type: ignore[no-untyped-def]
    for label, embedder in embedders.items():
        q = (
            await timed(t, f"query embedding ({label})", lambda e=embedder: e.embed_batch([query]))
        )[0]
    hits = await timed(
        t, "vector search (HNSW, top 100)", lambda: stages.vector.nearest(q, limit=100)
    )
    await timed(
        t,
        "vector search with a source filter (HNSW, top 100)",
        lambda: stages.vector.nearest(q, limit=100, where=ChunkFilter(sources=["bench"])),
    )
    analysed = stages.keyword.analyzer.analyse(query)
    found = await timed(
        t,
        "keyword search (BM25, top 100)",
        lambda: stages.keyword.search_scored(analysed.terms, limit=100),
    )
    await timed(
        t,
        "keyword search (BM25 over word pairs, top 100)",
        lambda: stages.keyword.search_pairs(analysed.words, limit=100),
    )
    started = time.perf_counter()
    fuse([found.top, [(h.chunk_id, h.score) for h in hits]], FusionOptions(method="zscore"))
    t.add("fusion (z-score)", (time.perf_counter() - started) * 1000)
    for label, retriever in retrievers.items():
        result = await timed(
            t,
            f"hybrid retrieval end to end, no rerank ({label})",
            lambda r=retriever: r.search(query),
        )
    top30 = result.ranked[:30]
    ranked = await timed(t, "rerank 30 (title links)", lambda: stages.links.rerank(query, top30))
    await timed(t, "read (top 5, neighbours)", lambda: stages.reader.read(ranked[:5]))
    if cross_encoder is not None:
        await timed(
            t,
            "rerank 30 (cross-encoder, MiniLM-L6 size)",
            lambda: cross_encoder.rerank(query, top30),
        )


async def _baselines(pool, corpus: Base, queries, embedder, vector, keyword) -> dict:  # type: ignore[no-untyped-def]
    sample = queries[:20]
    out: dict[str, object] = {}
    analysed = [keyword.analyzer.terms(t) for t in corpus.texts]
    qterms = [keyword.analyzer.terms(q) for q in sample]
    from rank_bm25 import BM25Okapi

    reference = BM25Okapi(analysed)
    out["rank-bm25 (ms/query)"] = _per_query(lambda q: reference.get_scores(q), qterms)
    import bm25s

    engine = bm25s.BM25(k1=1.5, b=0.75, method="robertson")
    engine.index(bm25s.tokenization.Tokenized(*_bm25s_tokens(analysed)), show_progress=False)
    out["bm25s (ms/query)"] = _per_query(
        lambda q: engine.get_scores([t for t in q if t in engine.vocab_dict]), qterms
    )
    ours = []
    for q in qterms:
        started = time.perf_counter()
        await keyword.search_scored(q, limit=10)
        ours.append((time.perf_counter() - started) * 1000)
    out["our BM25 (ms/query)"] = float(np.median(ours))
    vectors = [v for v in await embedder.embed_batch(sample)]
    out["recall"] = await _recall_curve(vector, pool, vectors)
    return out


def _bm25s_tokens(analysed: list[list[str]]) -> tuple[list[list[int]], dict[str, int]]:
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in doc] for doc in analysed]
    return ids, vocab


def _per_query(score: Callable[[list[str]], object], queries: Sequence[list[str]]) -> float:
    times = []
    for q in queries:
        started = time.perf_counter()
        score(q)
        times.append((time.perf_counter() - started) * 1000)
    return float(np.median(times))


async def _recall_curve(vector: VectorSearch, pool, queries: list[np.ndarray]) -> list[dict]:  # type: ignore[no-untyped-def]
    """Recall of HNSW against the exact scan, by hnsw.ef_search."""
    exact_ms, truth = [], []
    for q in queries:
        started = time.perf_counter()
        truth.append([h.chunk_id for h in await vector.nearest_exact(q, limit=100)])
        exact_ms.append((time.perf_counter() - started) * 1000)
    curve: list[dict] = [
        {
            "ef_search": "exact scan",
            "recall@10": 1.0,
            "recall@100": 1.0,
            "ms top 10": float(np.median(exact_ms)),
        }
    ]
    for ef in (10, 20, 40, 64, 100, 200, 400):
        search = VectorSearch(pool, ef_search=ef)
        r10, r100, ms = [], [], []
        for q, exact in zip(queries, truth, strict=True):
            started = time.perf_counter()
            top10 = [h.chunk_id for h in await search.nearest(q, limit=10)]
            ms.append((time.perf_counter() - started) * 1000)
            r10.append(len(set(top10) & set(exact[:10])) / 10)
            if ef >= 100:
                top100 = [h.chunk_id for h in await search.nearest(q, limit=100)]
                r100.append(len(set(top100) & set(exact)) / 100)
        curve.append(
            {
                "ef_search": ef,
                "recall@10": float(np.mean(r10)),
                "recall@100": float(np.mean(r100)) if r100 else None,
                "ms top 10": float(np.median(ms)),
            }
        )
    return curve


# --- report -------------------------------------------------------------------------------


def machine() -> dict[str, str]:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or "unknown",
    )
    memory = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        ),
        "unknown",
    )
    import torch

    return {
        "nproc": str(os.cpu_count()),
        "cpu": cpu,
        "ram": memory,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "load average (1, 5, 15 min) at the end": ", ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def print_table(size: int, result: dict) -> list[str]:
    table = Table(title=f"{size:,} chunks")
    for column in ("stage", "p50 ms", "p95 ms"):
        table.add_column(column, justify="right" if column != "stage" else "left")
    lines = [f"### {size:,} chunks", "", "| stage | p50 ms | p95 ms |", "|---|---:|---:|"]
    for stage in result["timings"].stages:
        p50, p95 = result["timings"].row(stage)
        table.add_row(stage, f"{p50:.1f}", f"{p95:.1f}")
        lines.append(f"| {stage} | {p50:.1f} | {p95:.1f} |")
    console.print(table)
    b = result["baselines"]
    ratio = b["rank-bm25 (ms/query)"] / max(b["our BM25 (ms/query)"], 1e-6)
    builds = result["builds"]
    without, with_pairs = builds["without word pairs"], builds["with word pairs"]
    after_table = len(lines)
    rebuilt = result["rebuild_s"]
    lines += [
        "",
        "| BM25 index | full build s (in a thread) | rebuild s after one document "
        "(10 chunks) changed | MB held |",
        "|---|---:|---:|---:|",
    ]
    lines += [
        f"| {label} | {b.seconds:.1f} | {r:.2f} | {b.megabytes:.0f} |"
        for (label, b), r in zip(builds.items(), rebuilt, strict=True)
    ]
    lines += [
        f"| ratio with / without | {with_pairs.seconds / max(without.seconds, 1e-6):.2f}× | "
        f"{rebuilt[1] / max(rebuilt[0], 1e-6):.2f}× | "
        f"{with_pairs.megabytes / max(without.megabytes, 1e-6):.2f}× |",
        "",
        "| keyword engine, same corpus and queries | median ms/query |",
        "|---|---:|",
        f"| rank-bm25 BM25Okapi.get_scores (reference) | {b['rank-bm25 (ms/query)']:.2f} |",
        f"| bm25s get_scores | {b['bm25s (ms/query)']:.2f} |",
        f"| ours (scores + filter mask + top 10) | {b['our BM25 (ms/query)']:.2f} |",
        f"| ratio rank-bm25 / ours | {ratio:.0f}× |",
        "",
        "| hnsw.ef_search | recall@10 | recall@100 | ms (top 10, p50) |",
        "|---|---:|---:|---:|",
    ]
    for point in b["recall"]:
        r100 = "—" if point["recall@100"] is None else f"{point['recall@100']:.3f}"
        lines.append(
            f"| {point['ef_search']} | {point['recall@10']:.3f} | {r100} | "
            f"{point['ms top 10']:.2f} |"
        )
    for line in lines[after_table:]:
        console.print(line)
    return lines


def pg_version(pool) -> Awaitable[str]:  # type: ignore[no-untyped-def]
    return pool.fetchval(
        "SELECT current_setting('server_version') || ' / pgvector ' || "
        "(SELECT extversion FROM pg_extension WHERE extname = 'vector')"
    )


async def run(
    sizes: list[int], n_queries: int, with_cross_encoder: bool, output: Path | None
) -> None:
    embedder = SentenceTransformerEmbedder(torch_threads=os.cpu_count())
    await embedder.load()
    # Each embedder sets torch's thread count in its own worker thread, so both coexist.
    single = SentenceTransformerEmbedder(torch_threads=1)
    await single.load()
    # What `kb serve` embeds questions with (store/query_graph.py); last, so the variants
    # below (no word pairs, the options before issue 12) use it too.
    graph = SentenceTransformerEmbedder(torch_threads=1, query_graph_dir=OUT / "query-graphs")
    await graph.load()
    assert graph.query_backend == "onnxruntime", "the ONNX query graph did not load"
    embedders = {
        f"torch {os.cpu_count()} threads": embedder,
        "torch 1 thread": single,
        "ONNX query graph": graph,
    }
    base = await load_base(embedder)
    queries = [
        json.loads(line)["text"]
        for line in (EVAL / "scifact" / "queries.jsonl").read_text().splitlines()
    ][:n_queries]
    cross_encoder = None
    if with_cross_encoder:
        # MiniLM-L6's own weights with an untrained scoring head: the cost of a
        # ms-marco-MiniLM-L-6-v2-sized cross-encoder, not its quality.
        from transformers.utils import logging as transformers_logging

        transformers_logging.set_verbosity_error()
        cross_encoder = CrossEncoderReranker(model=str(packaged_model_path()))
        await cross_encoder.load()
    rng = np.random.default_rng(0)
    started_load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    console.print(f"load average at the start: {started_load}")
    report = [
        "# Retrieval latency",
        "",
        "Command: `python bench/retrieval_latency.py "
        f"--sizes {' '.join(map(str, sizes))} --queries {n_queries}"
        f"{'' if with_cross_encoder else ' --no-cross-encoder'}`",
        "",
        "Targets on 2 cores: hybrid retrieval without rerank p95 ≤ 50 ms at 100k chunks; "
        "rerank of 30 candidates p95 ≤ 150 ms.",
        "",
    ]
    with tempfile.TemporaryDirectory(dir=OUT if OUT.exists() else None) as tmp:
        server = await start_embedded_postgres(Path(tmp) / "pg")
        try:
            for size in sizes:
                report += await _one_size(
                    server.dsn,
                    size,
                    synthetic(base, size, rng),
                    queries,
                    embedders,
                    cross_encoder,
                    report,
                )
        finally:
            server.stop()
    description = machine()
    description["load average at the start"] = started_load
    report[6:6] = ["## Machine", "", *[f"- {k}: {v}" for k, v in description.items()]]
    if output is None:
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("\n".join(report) + "\n")
    console.print(f"wrote {output}")


async def _one_size(dsn, size, corpus, queries, embedders, cross_encoder, report) -> list[str]:  # type: ignore[no-untyped-def]
    import asyncpg

    admin = await asyncpg.connect(dsn)
    await admin.execute(f"CREATE DATABASE bench_{size}")
    await admin.close()
    pool = await open_pool(urlunsplit(urlsplit(dsn)._replace(path=f"/bench_{size}")))
    try:
        if not any(line.startswith("- postgres") for line in report):
            report.insert(6, f"- postgres: {await pg_version(pool)}")
        started = time.perf_counter()
        await store_corpus(pool, corpus, next(iter(embedders.values())))
        # What autovacuum would do soon after a bulk load; without statistics the planner
        # sorts a sequential scan instead of using the HNSW index.
        await pool.execute("VACUUM ANALYZE")
        console.print(f"stored {size:,} chunks in {time.perf_counter() - started:.0f} s")
        result = await measure(pool, corpus, queries, embedders, cross_encoder)
        return ["", *print_table(size, result)]
    finally:
        await pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-cross-encoder", action="store_true")
    parser.add_argument(
        "--output",
        type=Path,
        default=RESULTS,
        help="Where to write the report (--no-output: nowhere).",
    )
    parser.add_argument("--no-output", action="store_true", help="Print only (smoke runs).")
    args = parser.parse_args()
    output = None if args.no_output else args.output
    asyncio.run(run(args.sizes, args.queries, not args.no_cross_encoder, output))


if __name__ == "__main__":
    main()
