"""The keyword index alone at 1M chunks, in memory: the previous design against this one.

    python bench/keyword_index_1m.py                  # 1M chunks (~10 min on 2 idle cores)
    python bench/keyword_index_1m.py --size 50000 --no-output   # smoke run

bench/keyword_scale_1m.py measures the whole replica against Postgres, and spends most
of its time storing 1M chunks, building HNSW and analysing 1M texts. This one measures
only what the two designs do differently, at 1M chunks, with the same corpus and queries
in one run, each design in a fresh process (so its resident memory is its own):

- **previous** (up to f1fb7fa): every chunk's term sequence kept as an int32 array,
  and after any change the eager indexes rebuilt over all of them
  (`Bm25Index.from_sequences` and `PairIndex.build`: what each rebuild did after
  listing every chunk again and analysing the changed ones);
- **segmented** (this design): segments of 100k chunks built from the same sequences,
  then one document (10 chunks) changed `--updates` times with
  `SegmentedIndex.with_changes` (plus the small-segment merges as they fall due).

For both: build seconds, RSS added and arrays held, the keyword stage per SciFact
claim (terms and word pairs, top 100 each, filter mask applied as the service applies
it), and the seconds a one-document change costs the index.

The corpus is bench/retrieval_latency.py's: the real SciFact and HotpotQA chunks, then
chunks made of the first half of one real chunk and up to 60 words of another's second
half. Analysing 1M texts costs both designs the same (minutes), so each real chunk's
halves are analysed once and a made-up chunk's term ids are the two halves' joined: the
same ids its text would give, since a half ends at a space and no term spans one.
"""

from __future__ import annotations

from _env import REPO  # first: the environment, before numpy loads

# isort: split

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from rich.console import Console

from jobs.chunking import chunk_text
from store.keyword_search import KeywordOptions
from store.keyword_search.bm25 import Bm25Index, top_positive
from store.keyword_search.pairs import (
    PairIndex,
    PairVocabulary,
    pair_occurrences,
    query_pairs,
)
from store.keyword_search.segmented import ChunkColumns, Segment, SegmentedIndex
from store.keyword_search.segments import Postings
from store.keyword_search.terms import BREAK, TermSequences, Vocabulary
from store.text_analysis import TextAnalyzer

EVAL = REPO.parent / "shared" / "eval"
RESULTS = REPO / "bench" / "results" / "keyword_index_1m.md"
SEGMENT = 100_000
# Each of the previous design's rebuilds takes minutes at 1M on 2 cores: two show it.
PREVIOUS_REBUILDS = 2
MIX_WORDS = 60  # as retrieval_latency._mix
console = Console()


class Corpus:
    """Term-id sequences of the synthetic corpus, made on demand from analysed halves."""

    def __init__(self, size: int, seed: int) -> None:
        self.size = size
        self.analyzer, self.vocabulary = TextAnalyzer(), Vocabulary()
        self.options = KeywordOptions()
        texts, titles = _real_chunks()
        self._halves = [self._split(title, text) for title, text in zip(titles, texts, strict=True)]
        rng = np.random.default_rng(seed)
        self._first, self._second = rng.integers(0, len(texts), (2, size))

    def sequences(self, start: int, end: int) -> list[np.ndarray]:
        n = len(self._halves)
        return [
            _whole(self._halves[i])
            if i < n
            else _joined(self._halves[self._first[i]], self._halves[self._second[i]])
            for i in range(start, min(end, self.size))
        ]

    def _split(self, title: str, text: str) -> tuple:
        """(title, first half, (up to 60 words of the second half, all of it)) of a real
        chunk as analysed term ids; each part is (words, identifier runs)."""
        words = text.split()
        middle = len(words) // 2
        ids = self.vocabulary.ids

        def part(piece: list[str]) -> tuple[np.ndarray, list[np.ndarray]]:
            analysed = self.analyzer.analyse(" ".join(piece))
            return ids(analysed.words), [ids([t]) for t in analysed.identifiers]

        title_words, title_ids = part(title.split())
        title_part = ([title_words] * self.options.title_weight, title_ids)
        return (
            title_part,
            part(words[:middle]),
            (part(words[middle:][:MIX_WORDS]), part(words[middle:])),
        )


def _real_chunks() -> tuple[list[str], list[str]]:
    texts, titles = [], []
    for name in ("scifact", "hotpotqa"):
        for line in (EVAL / name / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
            doc = json.loads(line)
            for chunk in chunk_text(doc["text"]):
                texts.append(chunk.embedding_text())
                titles.append(doc["title"])
    return texts, titles


def _sequence(title: list, words: np.ndarray, identifiers: list) -> np.ndarray:
    """As the service's `_analyse`: title runs, the text's words, then each identifier
    of the title (twice) and of the text as a run of its own."""
    title_runs, title_ids = title
    runs = [*title_runs, words, *(title_ids * len(title_runs)), *identifiers]
    return np.concatenate([np.append(run, BREAK) for run in runs]).astype(np.int32)


def _whole(halves: tuple) -> np.ndarray:
    title, head, (_, rest) = halves
    return _sequence(title, np.concatenate([head[0], rest[0]]), head[1] + rest[1])


def _joined(a: tuple, b: tuple) -> np.ndarray:
    """`_mix(a, b)`'s terms: a's title and first half, then the start of b's second half."""
    title, head, _ = a
    tail = b[2][0]
    return _sequence(title, np.concatenate([head[0], tail[0]]), head[1] + tail[1])


def rss_mb() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _claims(corpus: Corpus, n: int) -> list[tuple[dict[int, int], np.ndarray]]:
    lines = (EVAL / "scifact" / "queries.jsonl").read_text().splitlines()[:n]
    queries = [corpus.analyzer.analyse(json.loads(line)["text"]) for line in lines]
    return [
        (corpus.vocabulary.lookup(q.terms), corpus.vocabulary.known_ids(q.words)) for q in queries
    ]


def _timed_queries(
    score: Callable[[dict[int, int], np.ndarray], object], queries: list
) -> list[float]:
    times = []
    for terms, words in queries:
        started = time.perf_counter()
        score(terms, words)
        times.append((time.perf_counter() - started) * 1000)
    return [float(np.percentile(times, 50)), float(np.percentile(times, 95))]


# --- the two designs (each in its own process) ---------------------------------------------


def previous(corpus: Corpus, queries: list, updates: int) -> dict:
    """The eager indexes over every sequence, rebuilt whole after each change."""
    parameters = corpus.options.parameters
    before = rss_mb()
    kept = corpus.sequences(0, corpus.size)  # the per-chunk cache it kept for good

    def rebuild() -> tuple[Bm25Index, PairIndex]:
        sequences = TermSequences.of(kept)
        words = Bm25Index.from_sequences(
            sequences, vocabulary_size=len(corpus.vocabulary), parameters=parameters
        )
        return words, PairIndex.build(sequences, parameters=parameters)

    started = time.perf_counter()
    words, pairs = rebuild()
    build = time.perf_counter() - started
    gc.collect()
    held = sum(a.nbytes for a in (words.start, words.documents, words.weights))
    held += sum(a.nbytes for a in (pairs.keys, pairs.index.start, pairs.index.documents))
    held += pairs.index.weights.nbytes + sum(sys.getsizeof(s) for s in kept)
    alive = np.ones(words.size, bool)

    def score(terms: dict[int, int], ids: np.ndarray) -> None:
        top_positive(np.where(alive, words.scores(terms), 0.0), 100)
        found = pairs.query(ids)
        if found:
            pairs.index.top(found, limit=100, allowed=alive)

    latency = _timed_queries(score, queries)
    rss = rss_mb() - before
    change = []
    for _ in range(min(updates, PREVIOUS_REBUILDS)):
        started = time.perf_counter()
        del words, pairs
        words, pairs = rebuild()
        change.append(time.perf_counter() - started)
    return {"build s": build, "rss MB": rss, "held MB": held / 2**20, "keyword ms": latency,
            "change s": change}  # fmt: skip


def segmented(corpus: Corpus, queries: list, updates: int) -> dict:
    """Segments of 100k chunks from the same sequences; then one document changed."""
    options, pair_ids = corpus.options, PairVocabulary()
    before = rss_mb()
    # As the service's full read: a segment's chunks at a time, none kept afterwards;
    # making the sequences is not timed (the previous design's are made before its timer).
    segments, build = [], 0.0
    for first in range(0, corpus.size, SEGMENT):
        sequences = corpus.sequences(first, first + SEGMENT)
        started = time.perf_counter()
        segments.append(_segment(sequences, first, pair_ids))
        build += time.perf_counter() - started
    gc.collect()
    started = time.perf_counter()
    sizes = (len(corpus.vocabulary), len(pair_ids))
    index = SegmentedIndex.of(segments, vocabulary_sizes=sizes, parameters=options.parameters)
    build += time.perf_counter() - started
    del segments
    gc.collect()

    def score(terms: dict[int, int], ids: np.ndarray) -> None:
        np.where(index.alive, index.words.scores(terms), 0.0)
        found = pair_ids.known(query_pairs(ids))
        if found and index.pairs is not None:
            np.where(index.alive, index.pairs.scores(found), 0.0)

    latency = _timed_queries(score, queries)
    held = index.nbytes() + pair_ids.nbytes() + corpus.vocabulary.held_bytes()
    rss = rss_mb() - before
    change = []
    for number in range(updates):
        document = number * 7919 + 1  # its ten chunks replaced by edited ones
        edited = [
            np.append(s, number % 7) for s in corpus.sequences(10 * document - 10, 10 * document)
        ]
        started = time.perf_counter()
        added = _segment(edited, 10_000_000 + 10 * number, pair_ids, document=document)
        index = index.with_changes(
            removed_documents=np.array([document]),
            added=added,
            vocabulary_sizes=(len(corpus.vocabulary), len(pair_ids)),
        )
        index = index.merge_small(options.segments) or index
        change.append(time.perf_counter() - started)
    return {"build s": build, "rss MB": rss, "held MB": held / 2**20, "keyword ms": latency,
            "change s": change, "segments": len(index.segments)}  # fmt: skip


def _segment(
    sequences: list[np.ndarray], first: int, pair_ids: PairVocabulary, document: int = 0
) -> Segment:
    flat = TermSequences.of(sequences)
    present = flat.terms != BREAK
    words = Postings.build(flat.terms[present], flat.owner[present], flat.size)
    keys, owner = pair_occurrences(flat)
    pairs = Postings.build(pair_ids.ids(keys), owner, flat.size)
    ids = np.arange(first, first + len(sequences), dtype=np.int64)
    documents = np.full(len(ids), document, np.int64) if document else ids // 10 + 1
    columns = ChunkColumns(ids, documents, np.zeros(len(ids), np.int64), np.zeros(len(ids)))
    return Segment(columns, words, pairs)


# --- the run ----------------------------------------------------------------------------


def child(design: str, size: int, queries: int, updates: int, out: Path) -> None:
    started = time.perf_counter()
    corpus = Corpus(size, seed=0)
    console.print(f"{design}: {size:,} sequences ready in {time.perf_counter() - started:.0f} s")
    claims = _claims(corpus, queries)
    measure = previous if design == "previous" else segmented
    figures = measure(corpus, claims, updates)
    figures["load"] = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    out.write_text(json.dumps(figures))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--updates", type=int, default=5)
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--no-output", action="store_true")
    parser.add_argument("--design", help=argparse.SUPPRESS)  # the child
    parser.add_argument("--figures", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.design:
        return child(args.design, args.size, args.queries, args.updates, args.figures)
    loads = {"load average at the start": _load()}
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for design in ("previous", "segmented"):
            console.print(f"measuring the {design} design; load average {_load()}")
            figures = Path(tmp) / f"{design}.json"
            command = [sys.executable, __file__, "--design", design, "--figures", str(figures)]
            command += ["--size", str(args.size), "--queries", str(args.queries)]
            subprocess.run([*command, "--updates", str(args.updates)], check=True)
            results[design] = json.loads(figures.read_text())
    loads["load average at the end"] = _load()
    lines = report(results, args, loads)
    console.print("\n".join(lines))
    if not args.no_output:
        args.output.write_text("\n".join(lines) + "\n")
        console.print(f"wrote {args.output}")


def report(results: dict, args: argparse.Namespace, loads: dict[str, str]) -> list[str]:
    old, new = results["previous"], results["segmented"]
    rows = [
        ("build s (no text analysis)", "build s", "{:.1f}"),
        ("RSS added MB", "rss MB", "{:.0f}"),
        ("arrays held MB (+ vocabulary)", "held MB", "{:.0f}"),
    ]
    lines = [
        f"# The keyword index alone at {args.size:,} chunks, in memory",
        "",
        f"Command: `python bench/keyword_index_1m.py --size {args.size} --queries "
        f"{args.queries} --updates {args.updates}`",
        "",
        "| | previous design | segmented design |",
        "|---|---:|---:|",
    ]
    for label, key, shown in rows:
        lines.append(f"| {label} | {shown.format(old[key])} | {shown.format(new[key])} |")
    for design in (old, new):
        design["change"] = [float(np.median(design["change s"])), max(design["change s"])]
    lines += [
        "| keyword stage p50 / p95 ms (terms + pairs, top 100) | "
        f"{old['keyword ms'][0]:.1f} / {old['keyword ms'][1]:.1f} | "
        f"{new['keyword ms'][0]:.1f} / {new['keyword ms'][1]:.1f} |",
        f"| one-document change, index work s (median / max of {len(old['change s'])} and "
        f"{len(new['change s'])}) | "
        f"{old['change'][0]:.2f} / {old['change'][1]:.2f} | "
        f"{new['change'][0]:.3f} / {new['change'][1]:.3f} |",
        f"| segments at the end | 1 | {new['segments']} |",
        f"| load average when the design finished | {old['load']} | {new['load']} |",
        "",
        *[f"- {k}: {v}" for k, v in loads.items()],
        f"- machine: {os.cpu_count()} cores",
    ]
    return lines


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
