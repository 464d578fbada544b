"""The keyword index at 1M chunks: memory, cold build, one-document update, hybrid p95.

    python bench/keyword_scale_1m.py                    # 1M chunks, 200 queries (~1 h on 2 cores)
    python bench/keyword_scale_1m.py --size 20000 --queries 20 --no-output   # smoke run

Corpus as bench/retrieval_latency.py builds it: SciFact and HotpotQA chunks (embedded
once with the packaged MiniLM, cached in bench/out/), then copies re-mixed from two real
chunks with their vectors jittered, ten chunks a document, streamed into a fresh
embedded Postgres in a temporary folder (`--data-dir` keeps it for the next run). The
HNSW index is built after the load, as one CREATE INDEX, with progress.

The measurements run in a child process that holds only what a `kb serve` replica holds
(pool, embedding model, keyword index), so its resident memory is the replica's:

- **cold build**: `KeywordSearch.refresh()` on an empty process, its seconds, the RSS it
  adds once built and at its peak (sampled every 0.1 s), and the bytes its arrays hold;
- **hybrid retrieval**: `HybridRetriever.search` (default options, no reranker) end to
  end per SciFact claim, p50/p95, with its stages; the baselines measured in the same
  run: the vector-only search of the same queries, and the hybrid with its options from
  before issue 12's latency work (every fused candidate fetched, the keyword stage before
  the embedding), and the default with each other `overlap` setting, all taking turns
  query by query;
- **one-document update**: a document's ten chunks replaced (one committed transaction,
  `DocumentRepository.replace_document`, a unique word in the new text); then
  *update work* = the seconds `refresh()` takes to bring the index up to date, and
  *commit to visible* = from the commit returning until a keyword search (as the
  product calls it, serving stale while it catches up) first returns the new chunk.
  The same for a deleted document (until its chunks no longer come back). Repeated
  `--updates` times; median and max.

Writes bench/results/keyword_scale_1m.md with the targets, pass/fail, machine and load.
"""

from __future__ import annotations

from _env import REPO  # first: the environment, before numpy loads

# isort: split

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import numpy as np
from retrieval_latency import Base, _mix, load_base
from rich.console import Console
from rich.progress import Progress

from agent.retrieval.hybrid import EF_SEARCH, HybridOptions, HybridRetriever
from jobs.chunking import chunk_text
from store.corpus import CorpusReader
from store.database import open_pool
from store.documents import ChunkRecord, DocumentRecord, DocumentRepository
from store.embedded import start_embedded_postgres
from store.embedding import SentenceTransformerEmbedder
from store.embedding_space import HNSW_INDEX
from store.keyword_search import KeywordSearch
from store.vector_search import VectorSearch

OUT = REPO / "bench" / "out"
EVAL = REPO.parent / "shared" / "eval"
RESULTS = REPO / "bench" / "results" / "keyword_scale_1m.md"
QUERY_GRAPHS = OUT / "query-graphs"  # the ONNX query graph, exported on first use
CHUNKS_PER_DOCUMENT = 10
BATCH = 10_000  # synthetic chunks generated (and stored) at a time
WRITERS = 4  # concurrent document transactions while loading
DATABASE = "bench_keyword_scale"
TARGETS = {"hybrid p95 ms": 50.0, "BM25 memory MB": 1536.0, "one-document update s": 1.0}
console = Console()


# --- corpus -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Batch:
    start: int
    texts: list[str]
    titles: list[str]
    vectors: np.ndarray


def _texts_only() -> Base:
    """The real chunks as `load_base` reads them, with one zero vector standing for all."""
    texts, titles = [], []
    for name in ("scifact", "hotpotqa"):
        for line in (EVAL / name / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
            doc = json.loads(line)
            for chunk in chunk_text(doc["text"]):
                texts.append(chunk.embedding_text())
                titles.append(doc["title"])
    return Base(texts, titles, np.zeros((len(texts), 0), np.float32))


def synthetic_batches(base: Base, size: int, seed: int) -> Iterator[Batch]:
    """`size` chunks, `BATCH` at a time: the real ones first, then re-mixed, jittered copies
    (bench/retrieval_latency.py's `synthetic`, streamed so 1M never sits in memory)."""
    rng = np.random.default_rng(seed)
    n = len(base.texts)
    for start in range(0, size, BATCH):
        end = min(start + BATCH, size)
        real = np.arange(start, min(end, n))
        texts = [base.texts[i] for i in real]
        titles = [base.titles[i] for i in real]
        vectors = [base.vectors[real]]
        extra = end - start - len(real)
        if extra:
            first, second = rng.integers(0, n, extra), rng.integers(0, n, extra)
            noise = rng.normal(size=(extra, base.vectors.shape[1])).astype(np.float32)
            noise /= np.linalg.norm(noise, axis=1, keepdims=True)
            jittered = base.vectors[first] + 0.5 * noise
            jittered /= np.linalg.norm(jittered, axis=1, keepdims=True)
            texts += [
                _mix(base.texts[a], base.texts[b]) for a, b in zip(first, second, strict=True)
            ]
            titles += [base.titles[a] for a in first]
            vectors.append(jittered)
        yield Batch(start, texts, titles, np.concatenate(vectors))


def document(batch: Batch, offset: int, *, suffix: str = "") -> tuple[DocumentRecord, list]:
    """The document of ten chunks starting at `offset` within the batch."""
    texts = [t + suffix for t in batch.texts[offset : offset + CHUNKS_PER_DOCUMENT]]
    number = batch.start + offset
    chunks, position = [], 0
    for ordinal, text in enumerate(texts):
        end = position + len(text)
        vector = batch.vectors[offset + ordinal] if batch.vectors.shape[1] else None
        chunks.append(
            ChunkRecord(ordinal, text, f"b{number + ordinal}{suffix}", position, end, (), vector)
        )
        position = end + 2
    record = DocumentRecord(
        f"doc-{number}",
        batch.titles[offset],
        None,
        "\n\n".join(texts),
        f"c{number}{suffix}",
        f"m{number}",
    )
    return record, chunks


# --- the database -------------------------------------------------------------------------


async def build_database(dsn: str, size: int, seed: int, *, vectors: bool) -> None:
    """Store `size` synthetic chunks (the HNSW index is built later, in one go); without
    `vectors` the chunks get none (enough for the keyword part, and no embedding run)."""
    pool = await open_pool(dsn, max_size=WRITERS + 1)
    try:
        repo = DocumentRepository(pool)
        embedder = SentenceTransformerEmbedder(torch_threads=os.cpu_count())
        await embedder.load()
        await repo.adopt_model(embedder.identity)
        base = await load_base(embedder) if vectors else _texts_only()
        embedder.close()
        # Inserting 1M vectors into a live HNSW graph takes hours; one CREATE INDEX after
        # the load takes minutes. The index is the product's (store/embedding_space.py).
        await pool.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
        source_id = await repo.ensure_source(name="bench", kind="bench")
        started = time.perf_counter()
        with Progress(console=console) as progress:
            task = progress.add_task(f"storing {size:,} chunks", total=size)
            for batch in synthetic_batches(base, size, seed):
                await _store_batch(repo, source_id, batch)
                progress.update(task, advance=len(batch.texts))
        console.print(f"stored {size:,} chunks in {time.perf_counter() - started:.0f} s")
        await pool.execute("VACUUM ANALYZE")
    finally:
        await pool.close()


async def _store_batch(repo: DocumentRepository, source_id: int, batch: Batch) -> None:
    queue = list(range(0, len(batch.texts), CHUNKS_PER_DOCUMENT))

    async def writer() -> None:
        while queue:
            record, chunks = document(batch, queue.pop())
            await repo.replace_document(source_id=source_id, document=record, chunks=chunks)

    await asyncio.gather(*(writer() for _ in range(WRITERS)))


async def _create_hnsw(pool) -> None:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    async with pool.acquire() as conn:
        # In memory (the graph of 1M MiniLM vectors is ~2 GB), the leader plus one worker.
        await conn.execute("SET maintenance_work_mem = '4GB'")
        await conn.execute("SET max_parallel_maintenance_workers = 1")
        build = asyncio.create_task(
            conn.execute(
                f"CREATE INDEX {HNSW_INDEX} ON chunks USING hnsw (embedding vector_cosine_ops)"
            )
        )
        with Progress(console=console) as progress:
            task = progress.add_task("building the HNSW index", total=None)
            while not build.done():
                await asyncio.wait([build], timeout=5)
                row = await pool.fetchrow(
                    "SELECT phase, tuples_done, tuples_total FROM pg_stat_progress_create_index"
                )
                if row is not None and row["tuples_total"]:
                    progress.update(
                        task,
                        total=row["tuples_total"],
                        completed=row["tuples_done"],
                        description=f"HNSW: {row['phase']}",
                    )
        await build
    console.print(f"built the HNSW index in {time.perf_counter() - started:.0f} s")


async def stored_chunks(dsn: str) -> int:
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        exists = await conn.fetchval("SELECT to_regclass('chunks') IS NOT NULL")
        return int(await conn.fetchval("SELECT count(*) FROM chunks")) if exists else 0
    finally:
        await conn.close()


# --- the replica (child process) ----------------------------------------------------------


def rss_mb(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


class PeakSampler:
    """The highest RSS seen while it runs, sampled on its own thread."""

    def __init__(self, every: float = 0.1) -> None:
        self.peak = rss_mb()
        self._every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            self.peak = max(self.peak, rss_mb())


async def measure(dsn: str, part: str, n_queries: int, n_updates: int) -> dict:
    """What a replica does with the keyword index, timed: the cold build, then the
    updates (part "keyword", before the HNSW index exists) or the queries ("hybrid")."""
    pool = await open_pool(dsn)
    # Questions embedded as `kb serve` does (the ONNX query graph), and by torch as before,
    # for the same-run comparison.
    embedder = SentenceTransformerEmbedder(query_graph_dir=QUERY_GRAPHS)
    by_torch = SentenceTransformerEmbedder()
    for model in (embedder, by_torch):
        await model.load()
        await model.embed_batch(["warm up"])
    assert embedder.query_backend == "onnxruntime", "the ONNX query graph did not load"
    gc.collect()
    out: dict = {"rss before the index MB": rss_mb(), "chunks": await stored_chunks(dsn)}
    keyword = KeywordSearch(CorpusReader(pool))
    try:
        out |= await _cold_build(keyword)
        if part in ("hybrid", "all"):
            out |= await _queries(pool, embedder, by_torch, keyword, n_queries)
        if part in ("keyword", "all"):
            out |= await _keyword_queries(keyword, n_queries)
            out |= await _updates(pool, keyword, n_updates, out["chunks"])
    finally:
        await keyword.close()
        embedder.close()
        by_torch.close()
        await pool.close()
    return out


async def _cold_build(keyword: KeywordSearch) -> dict:
    before = rss_mb()
    console.print("cold build of the keyword index…")
    started = time.perf_counter()
    with PeakSampler() as sampler:
        await keyword.refresh()
    seconds = time.perf_counter() - started
    gc.collect()
    stats = keyword.last_build
    console.print(f"cold build: {seconds:.1f} s, peak +{sampler.peak - before:.0f} MB")
    return {
        "cold build s": seconds,
        "rss added by the index MB": rss_mb() - before,
        "rss added at the build peak MB": sampler.peak - before,
        "index holds MB": stats.megabytes if stats else float("nan"),
    }


def _claims(n_queries: int) -> list[str]:
    lines = (EVAL / "scifact" / "queries.jsonl").read_text().splitlines()
    return [json.loads(line)["text"] for line in lines][:n_queries]


async def _keyword_queries(keyword: KeywordSearch, n_queries: int) -> dict:
    """The keyword stage alone, as the hybrid calls it (terms, then pairs, top 100 each)."""
    times: dict[str, list[float]] = {}
    for query in _claims(n_queries):
        analysed = keyword.analyzer.analyse(query)
        started = time.perf_counter()
        await keyword.search_scored(analysed.terms, limit=100)
        middle = time.perf_counter()
        await keyword.search_pairs(analysed.words, limit=100)
        times.setdefault("keyword stage: terms + pairs, top 100 each", []).append(_ms(started))
        times.setdefault("  terms (BM25, top 100)", []).append((middle - started) * 1000)
        times.setdefault("  word pairs (BM25, top 100)", []).append(_ms(middle))
    return {"keyword latency ms": _percentiles(times)}


def _percentiles(times: dict[str, list[float]]) -> dict[str, list[float]]:
    return {
        label: [float(np.percentile(v, 50)), float(np.percentile(v, 95))]
        for label, v in times.items()
    }


# The hybrid's options before issue 12's latency work: every fused candidate fetched, the
# keyword stage before the embedding. Measured beside the defaults, query by query.
BEFORE = HybridOptions(fetch=None, overlap="off")
HYBRID = "hybrid end to end, no rerank"
HYBRID_BEFORE = "hybrid as before (every candidate fetched, stages in turn)"
HYBRID_TORCH = "hybrid, the question embedded by torch (before the ONNX query graph)"
# The default's other `overlap` settings, for the choice between them.
OVERLAPS = {
    "off": "hybrid, keyword stage before the embedding",
    "vector": "hybrid, keyword stage beside the vector search",
    "all": "hybrid, keyword stage beside the embedding and the vector search",
}


async def _queries(pool, embedder, by_torch, keyword: KeywordSearch, n_queries: int) -> dict:  # type: ignore[no-untyped-def]
    queries = _claims(n_queries)
    vector = VectorSearch(pool, ef_search=EF_SEARCH)
    hybrids = {
        label: HybridRetriever(
            embedder=model,
            vector_search=vector,
            keyword_search=keyword,
            corpus=CorpusReader(pool),
            options=options,
        )
        for label, model, options in [
            (HYBRID, embedder, HybridOptions()),
            (HYBRID_TORCH, by_torch, HybridOptions()),
            (HYBRID_BEFORE, by_torch, BEFORE),
            *(
                (label, embedder, HybridOptions(overlap=overlap))
                for overlap, label in OVERLAPS.items()
                if overlap != HybridOptions().overlap
            ),
        ]
    }
    times: dict[str, list[float]] = {}
    with Progress(console=console) as progress:
        task = progress.add_task("queries", total=(1 + len(hybrids)) * len(queries))
        for query in queries:  # the baseline: vector-only, as the hybrid runs it
            started = time.perf_counter()
            q = (await embedder.embed_batch([query]))[0]
            await vector.nearest(q, limit=100)
            times.setdefault("vector only (embed + HNSW top 100)", []).append(_ms(started))
            progress.advance(task)
        for number, query in enumerate(queries):
            # Taking turns at going first: a later one finds the first's rows in the cache.
            order = list(hybrids.items())
            turn = number % len(order)
            for label, hybrid in order[turn:] + order[:turn]:
                started = time.perf_counter()
                result = await hybrid.search(query)
                times.setdefault(label, []).append(_ms(started))
                if label == HYBRID:
                    for stage, ms in result.timings_ms.items():
                        times.setdefault(f"  stage: {stage}", []).append(ms)
                progress.advance(task)
    ordered = ["vector only (embed + HNSW top 100)", HYBRID_BEFORE, HYBRID_TORCH, *hybrids]
    times = {label: times[label] for label in ordered} | times
    return {"latency ms": _percentiles(times)}


async def _updates(pool, keyword: KeywordSearch, n_updates: int, size: int) -> dict:  # type: ignore[no-untyped-def]
    repo = DocumentRepository(pool)
    source_id = await repo.ensure_source(name="bench", kind="bench")
    rows = await pool.fetch(
        "SELECT c.ordinal, c.text, c.embedding, d.uri, d.title FROM chunks c"
        " JOIN documents d ON d.id = c.document_id"
        " WHERE d.uri = ANY($1::text[]) ORDER BY d.uri, c.ordinal",
        # Documents spread over the corpus (7919 is prime: no two land on the same one).
        [f"doc-{n * 7919 * CHUNKS_PER_DOCUMENT % size}" for n in range(1, n_updates + 1)],
    )
    documents: dict[str, list] = {}
    for r in rows:
        documents.setdefault(r["uri"], []).append(r)
    work, visible, deleted = [], [], []
    with Progress(console=console) as progress:
        task = progress.add_task("one-document updates", total=2 * len(documents))
        for number, (uri, chunks) in enumerate(documents.items()):
            word = f"zqedit{number}x"
            record, records = _edited(uri, chunks, word)
            await repo.replace_document(source_id=source_id, document=record, chunks=records)
            work.append(await _timed_refresh(keyword))
            assert await _finds(keyword, word), "the edit is not searchable after refresh()"
            record, records = _edited(uri, chunks, word + "y")
            await repo.replace_document(source_id=source_id, document=record, chunks=records)
            visible.append(await _until(keyword, word + "y", present=True))
            progress.advance(task)
            await repo.delete_documents(source_id=source_id, uris=[uri])
            deleted.append(await _until(keyword, word + "y", present=False))
            record, records = _edited(uri, chunks, "")  # as it was, for the next run
            await repo.replace_document(source_id=source_id, document=record, chunks=records)
            progress.advance(task)
    return {
        "update work s": [float(np.median(work)), float(np.max(work))],
        "commit to visible s": [float(np.median(visible)), float(np.max(visible))],
        "delete to gone s": [float(np.median(deleted)), float(np.max(deleted))],
    }


def _edited(uri: str, chunks: list, word: str) -> tuple[DocumentRecord, list[ChunkRecord]]:
    records, position = [], 0
    for r in chunks:
        text = f"{r['text']} {word}" if word else r["text"]
        vector = None if r["embedding"] is None else r["embedding"].to_numpy()
        records.append(
            ChunkRecord(
                r["ordinal"],
                text,
                f"{uri}-{r['ordinal']}-{word}",
                position,
                position + len(text),
                (),
                vector,
            )
        )
        position += len(text) + 2
    text = "\n\n".join(r.text for r in records)
    return DocumentRecord(uri, chunks[0]["title"], None, text, f"c{uri}{word}", "m"), records


async def _timed_refresh(keyword: KeywordSearch) -> float:
    started = time.perf_counter()
    await keyword.refresh()
    return time.perf_counter() - started


async def _finds(keyword: KeywordSearch, word: str) -> bool:
    return bool((await keyword.search_scored(keyword.analyzer.terms(word), limit=10)).top)


async def _until(keyword: KeywordSearch, word: str, *, present: bool, limit: float = 600) -> float:
    """Seconds until a search for `word` finds (or stops finding) it, searching every 10 ms."""
    started = time.perf_counter()
    while await _finds(keyword, word) != present:
        if time.perf_counter() - started > limit:
            return float("inf")
        await asyncio.sleep(0.01)
    return time.perf_counter() - started


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


# --- report -------------------------------------------------------------------------------


def report(figures: dict, args: argparse.Namespace, loads: dict[str, str]) -> list[str]:
    from retrieval_latency import machine

    hybrid = figures.get("latency ms", {}).get(HYBRID)
    hybrid_p95 = hybrid[1] if hybrid else float("nan")
    memory = max(figures["rss added by the index MB"], figures["index holds MB"])
    checks = [
        ("hybrid p95 ms", hybrid_p95, f"{hybrid_p95:.1f} ms" if hybrid else "not measured"),
        ("BM25 memory MB", memory, f"{memory:.0f} MB (RSS added once built)"),
    ]
    if "commit to visible s" in figures:  # not with --hybrid-only
        update = max(figures["commit to visible s"][1], figures["delete to gone s"][1])
        shown = f"{update:.2f} s (worst commit to visible / gone)"
        checks.append(("one-document update s", update, shown))
    lines = [
        f"# The keyword index at {figures['chunks']:,} chunks: {args.label}",
        "",
        f"Command: `python bench/keyword_scale_1m.py --size {args.size} --queries "
        f"{args.queries} --updates {args.updates}{' --skip-hybrid' if args.skip_hybrid else ''}"
        f"{' --hybrid-only' if args.hybrid_only else ''}`",
        "",
        "| target | limit | measured | |",
        "|---|---:|---:|---|",
    ]
    for name, value, shown in checks:
        verdict = "pass" if value <= TARGETS[name] else "FAIL" if value == value else "—"
        lines.append(f"| {name} | {TARGETS[name]:g} | {shown} | {verdict} |")
    lines += ["", "| latency (SciFact claims) | p50 ms | p95 ms |", "|---|---:|---:|"]
    latencies = figures.get("latency ms", {}) | figures["keyword latency ms"]
    for label, (p50, p95) in latencies.items():
        lines.append(f"| {label} | {p50:.1f} | {p95:.1f} |")
    lines += ["", "| keyword index | value |", "|---|---:|"]
    lines += [
        "| cold build s (each fresh process) | "
        + " / ".join(f"{x:.1f}" for x in figures["cold build s"])
        + " |",
        f"| arrays held MB (`BuildStats.megabytes`) | {figures['index holds MB']:.0f} |",
        f"| RSS added once built MB | {figures['rss added by the index MB']:.0f} |",
        f"| RSS added at the build's peak MB | {figures['rss added at the build peak MB']:.0f} |",
        f"| replica RSS before the index MB | {figures['rss before the index MB']:.0f} |",
    ]
    for name in ("update work s", "commit to visible s", "delete to gone s"):
        if name not in figures:  # --hybrid-only
            continue
        median, worst = figures[name]
        lines.append(f"| {name} (median / max of {args.updates}) | {median:.2f} / {worst:.2f} |")
    description = machine() | loads
    lines += ["", "## Machine", "", *[f"- {k}: {v}" for k, v in description.items()]]
    return lines


def load_average() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--updates", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, help="Keep the database here (reused).")
    parser.add_argument("--label", default="this design", help="What the report calls the code.")
    parser.add_argument(
        "--skip-hybrid", action="store_true", help="No HNSW index, no hybrid queries."
    )
    parser.add_argument(
        "--hybrid-only", action="store_true", help="Skip the keyword part (a rerun of hybrid)."
    )
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--no-output", action="store_true", help="Print only (smoke runs).")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # the child: a DSN
    parser.add_argument("--figures", type=Path, help=argparse.SUPPRESS)  # and where to write
    parser.add_argument("--part", default="all", help=argparse.SUPPRESS)  # and what to measure
    args = parser.parse_args()
    if args.measure:
        figures = asyncio.run(measure(args.measure, args.part, args.queries, args.updates))
        args.figures.write_text(json.dumps(figures))
        return
    loads = {"load average at the start": load_average()}
    console.print(f"load average at the start: {loads['load average at the start']}")
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=OUT) as tmp:
        figures = run(args, args.data_dir or Path(tmp) / "pg", Path(tmp) / "figures.json")
    loads["load average (1, 5, 15 min) at the end"] = load_average()
    lines = report(figures, args, loads)
    console.print("\n".join(lines))
    if not args.no_output:
        args.output.write_text("\n".join(lines) + "\n")
        console.print(f"wrote {args.output}")


def run(args: argparse.Namespace, data_dir: Path, figures: Path) -> dict:
    """Store the corpus, measure the keyword index, build HNSW, measure hybrid retrieval.

    The keyword part runs before the HNSW index exists: CREATE INDEX blocks writes, and
    the keyword figures should not wait on it. Each part is a fresh process, so each
    has a cold build of its own (two measurements of it)."""
    server = asyncio.run(start_embedded_postgres(data_dir))
    try:
        dsn = urlunsplit(urlsplit(server.dsn)._replace(path=f"/{DATABASE}"))
        vectors = not args.skip_hybrid
        asyncio.run(_ensure_database(server.dsn, dsn, args.size, args.seed, vectors=vectors))
        keyword = (
            _child(args, dsn, "keyword", figures.with_name("keyword.json"))
            if not args.hybrid_only
            else {"keyword latency ms": {}}
        )
        hybrid: dict = {}
        if not args.skip_hybrid:
            asyncio.run(_ensure_hnsw(dsn))
            asyncio.run(_warm_page_cache(dsn, data_dir))
            hybrid = _child(args, dsn, "hybrid", figures.with_name("hybrid.json"))
    finally:
        server.stop()
    keyword["cold build s"] = [keyword["cold build s"]] if "cold build s" in keyword else []
    if hybrid:
        keyword["cold build s"].append(hybrid.pop("cold build s"))
    return hybrid | keyword


def _child(args: argparse.Namespace, dsn: str, part: str, figures: Path) -> dict:
    """One measurement in a fresh process: its resident memory is a replica's."""
    console.print(f"measuring ({part}) in a fresh process; load average {load_average()}")
    command = [sys.executable, __file__, "--measure", dsn, "--part", part]
    command += ["--figures", str(figures), "--queries", str(args.queries)]
    subprocess.run([*command, "--updates", str(args.updates)], check=True)
    return json.loads(figures.read_text())


async def _warm_page_cache(dsn: str, data_dir: Path) -> None:
    """Read the chunks table, its TOAST table and the HNSW index once, so the queries meet
    a serving replica's steady state (its index pages in memory), not the disk. A stored
    database read cold, hours after the last run, made vector search p50 1.3 s."""
    pool = await open_pool(dsn, max_size=1)
    try:
        rows = await pool.fetch(
            "SELECT pg_relation_filepath(oid) AS path FROM pg_class"
            " WHERE oid IN ('chunks'::regclass, to_regclass($1),"
            " (SELECT reltoastrelid FROM pg_class WHERE oid = 'chunks'::regclass))",
            HNSW_INDEX,
        )
    finally:
        await pool.close()
    files = [
        f for r in rows if r["path"] for f in sorted(data_dir.glob(r["path"] + "*")) if f.is_file()
    ]
    total = sum(f.stat().st_size for f in files)
    with Progress(console=console) as progress:
        task = progress.add_task(f"reading {total / 2**30:.1f} GB into the page cache", total=total)
        for path in files:
            with path.open("rb", buffering=0) as handle:
                while block := handle.read(8 << 20):
                    progress.advance(task, len(block))


async def _ensure_hnsw(dsn: str) -> None:
    pool = await open_pool(dsn, max_size=2)
    try:
        if await pool.fetchval("SELECT count(*) FROM chunks WHERE embedding IS NULL"):
            raise SystemExit("the stored chunks have no vectors (--skip-hybrid built them)")
        if not await pool.fetchval("SELECT to_regclass($1) IS NOT NULL", HNSW_INDEX):
            await _create_hnsw(pool)
            await pool.execute("VACUUM ANALYZE")
    finally:
        await pool.close()


async def _ensure_database(
    admin_dsn: str, dsn: str, size: int, seed: int, *, vectors: bool
) -> None:
    import asyncpg

    admin = await asyncpg.connect(admin_dsn)
    try:
        if not await admin.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", DATABASE):
            await admin.execute(f"CREATE DATABASE {DATABASE}")
    finally:
        await admin.close()
    stored = await stored_chunks(dsn)
    if stored == size:
        console.print(f"reusing the stored {stored:,} chunks")
        return
    if stored:
        raise SystemExit(f"{dsn} holds {stored:,} chunks, not {size:,}: use another --data-dir")
    await build_database(dsn, size, seed, vectors=vectors)


if __name__ == "__main__":
    main()
