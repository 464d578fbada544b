"""Benchmark of the incremental reindex: full index, no-change pass, 1% edited.

Builds a corpus of N documents by replicating the bundled handbook (copy k ≥ 1 gets
"(copy k)" in every paragraph, so its chunk texts differ from every other copy's),
writes it as Markdown files into a temporary folder, indexes that folder with the
directory source (real files, read and converted in worker processes) into a fresh
embedded Postgres, then measures in the same run:

- the full index (chunks/s) against raw `SentenceTransformer.encode` on a sample of
  the same chunk embedding texts, same batch size and threads;
- a reindex with nothing changed (time as a share of the full index, embeddings done),
  and the same pass without the stored file fingerprints (every file re-read and
  converted, as before files were skipped by size and modification time);
- a reindex with one paragraph edited in 1% of the documents (chunks re-embedded per
  edited paragraph);
- peak RSS of this process and the database's size on disk.

Prints a Markdown table with targets and pass/fail and writes it, with a description
of the machine, to bench/results/reindex.md. Run from the repository root:

    python bench/reindex.py            # the full run (~20k chunks; tens of minutes)
    python bench/reindex.py --quick    # a smoke run; writes no results file
"""

from __future__ import annotations

from _env import REPO as REPO_ROOT  # first: the environment, before numpy loads

# isort: split

import argparse
import asyncio
import json
import logging
import os
import platform
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import numpy as np
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from bot.sample_kb import handbook_root
from jobs.chunking import chunk_text
from jobs.directory import DirectorySource, handbook_source
from jobs.documents import SourceDocument, SourceItem
from jobs.file_conversion import FileTask, PageUrls, convert_file
from jobs.hashing import chunk_hash, content_hash, metadata_hash
from jobs.indexing import Indexer, IndexReport
from store.database import open_pool
from store.documents import ChunkRecord, DocumentRecord, DocumentRepository, StoredDocument
from store.embedded import start_embedded_postgres
from store.embedding import SentenceTransformerEmbedder

HANDBOOK_ROOT = handbook_root()
RESULTS_FILE = REPO_ROOT / "bench" / "results" / "reindex.md"

# The embedder's default `encode` batch size, which the raw baseline uses too.
BATCH_SIZE = 64
TARGET_ENCODE_RATIO = 0.85
TARGET_NO_CHANGE_SHARE = 0.005
TARGET_EDIT_RATIO = 1.5
EMBED_CALL = "embed_batch (the model)"

# The same block separator and heading rule as jobs/chunking.py, so variants keep the
# pages' paragraph structure.
_SEPARATOR = re.compile(r"(\n[ \t]*\n+)")
_HEADING = re.compile(r"#{1,6}[ \t]+\S")
_WORD = re.compile(r"\S+")
# A copy marker at least every this many words, so every piece of an overlong
# paragraph (the chunker cuts those at 200–400 words) carries one.
_MARK_EVERY = 150
_EDIT_MIN_WORDS = 8
# Raw-encode parts: one before the full index, one after, the rest spread through it.
_BASELINE_PARTS = 32


@dataclass(frozen=True, slots=True)
class BenchConfig:
    docs: int
    baseline_sample: int
    edit_share: float
    seed: int
    output: Path | None
    command: str


def parse_args(argv: Sequence[str]) -> BenchConfig:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, help="documents in the corpus (default 2400)")
    parser.add_argument(
        "--baseline-sample",
        type=int,
        help="chunk texts for the raw-encode baseline; 0 = all (default 2000)",
    )
    parser.add_argument("--edit-share", type=float, default=0.01, help="share of docs edited")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="smoke run: 60 docs, no file")
    parser.add_argument("--output", type=Path, help=f"results file (default {RESULTS_FILE})")
    args = parser.parse_args(argv)
    output = args.output or (None if args.quick else RESULTS_FILE)
    return BenchConfig(
        docs=args.docs or (60 if args.quick else 2400),
        baseline_sample=(
            args.baseline_sample
            if args.baseline_sample is not None
            else (200 if args.quick else 2000)
        ),
        edit_share=args.edit_share,
        seed=args.seed,
        output=output,
        command=" ".join(["python", *sys.argv]),
    )


# --- the corpus --------------------------------------------------------------------


async def load_handbook() -> list[SourceDocument]:
    items = [item async for item in handbook_source(HANDBOOK_ROOT).documents()]
    return [item for item in items if isinstance(item, SourceDocument)]


def build_corpus(pages: Sequence[SourceDocument], count: int) -> list[SourceDocument]:
    """`count` documents: page i % len(pages), copy i // len(pages)."""
    return [_variant(pages[i % len(pages)], i // len(pages)) for i in range(count)]


def _variant(page: SourceDocument, copy: int) -> SourceDocument:
    if copy == 0:
        return page
    return replace(
        page,
        uri=f"copy-{copy:03d}/{page.uri}",
        url=f"{page.url}?copy={copy}" if page.url else None,
        text=vary_text(page.text, copy),
        metadata={**page.metadata, "copy": copy},
    )


def vary_text(text: str, copy: int) -> str:
    """The text with "(copy k)" in every paragraph; headings and blank lines untouched."""
    marker = f"(copy {copy})"
    return _map_paragraphs(text, lambda paragraph: _mark(paragraph, marker))


def _map_paragraphs(text: str, change: Callable[[str], str]) -> str:
    parts = _SEPARATOR.split(text)
    # Even indices are blocks, odd ones the separators between them.
    return "".join(
        change(part) if index % 2 == 0 and _is_paragraph(part) else part
        for index, part in enumerate(parts)
    )


def _is_paragraph(block: str) -> bool:
    stripped = block.strip()
    return bool(stripped) and not ("\n" not in stripped and _HEADING.match(stripped))


def _mark(paragraph: str, marker: str) -> str:
    words = list(_WORD.finditer(paragraph))
    cuts = [words[n].end() for n in range(_MARK_EVERY - 1, len(words) - 1, _MARK_EVERY)]
    cuts.append(words[-1].end())
    pieces, last = [], 0
    for cut in cuts:
        pieces += [paragraph[last:cut], f" {marker}"]
        last = cut
    pieces.append(paragraph[last:])
    return "".join(pieces)


def edit_corpus(
    corpus: Sequence[SourceDocument], *, share: float, rng: random.Random
) -> tuple[list[SourceDocument], list[int]]:
    """The corpus with one paragraph edited in `share` of its documents, and their indices."""
    editable = [i for i, doc in enumerate(corpus) if _editable_paragraphs(doc.text)]
    chosen = sorted(rng.sample(editable, max(1, round(len(corpus) * share))))
    edited = list(corpus)
    for i in chosen:
        edited[i] = replace(corpus[i], text=_edit_one_paragraph(corpus[i].text, rng))
    return edited, chosen


def _editable_paragraphs(text: str) -> list[int]:
    parts = _SEPARATOR.split(text)
    return [
        i
        for i in range(0, len(parts), 2)
        if _is_paragraph(parts[i]) and len(_WORD.findall(parts[i])) >= _EDIT_MIN_WORDS
    ]


def _edit_one_paragraph(text: str, rng: random.Random) -> str:
    """Replace the middle word of one random paragraph (a typical one-word fix)."""
    parts = _SEPARATOR.split(text)
    index = rng.choice(_editable_paragraphs(text))
    words = list(_WORD.finditer(parts[index]))
    middle = words[len(words) // 2]
    new_word = "revised" if middle.group() == "amended" else "amended"
    parts[index] = parts[index][: middle.start()] + new_word + parts[index][middle.end() :]
    return "".join(parts)


# --- instrumentation ---------------------------------------------------------------


@dataclass(slots=True)
class Timings:
    """Calls and seconds per operation, reset between phases."""

    calls: Counter[str] = field(default_factory=Counter)
    seconds: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def measure(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.calls[name] += 1
            elapsed = time.perf_counter() - started
            self.seconds[name] = self.seconds.get(name, 0.0) + elapsed

    def take(self) -> Timings:
        taken = Timings(Counter(self.calls), dict(self.seconds))
        self.calls.clear()
        self.seconds.clear()
        return taken


class TimedRepository(DocumentRepository):
    """The repository, timing every call the indexer makes."""

    def __init__(self, pool: asyncpg.Pool, timings: Timings) -> None:
        super().__init__(pool)
        self.timings = timings

    async def ensure_source(
        self,
        *,
        name: str,
        kind: str,
        collection: str = "default",
        config: dict[str, Any] | None = None,
    ) -> int:
        with self.timings.measure("db: ensure_source"):
            return await super().ensure_source(
                name=name, kind=kind, collection=collection, config=config
            )

    async def documents_of(self, *, source_id: int) -> dict[str, StoredDocument]:
        with self.timings.measure("db: documents_of"):
            return await super().documents_of(source_id=source_id)

    async def stored_embeddings(self, *, text_hashes: Iterable[str]) -> dict[str, np.ndarray]:
        with self.timings.measure("db: stored_embeddings"):
            return await super().stored_embeddings(text_hashes=text_hashes)

    async def replace_document(
        self, *, source_id: int, document: DocumentRecord, chunks: Sequence[ChunkRecord]
    ) -> int:
        with self.timings.measure("db: replace_document"):
            return await super().replace_document(
                source_id=source_id, document=document, chunks=chunks
            )

    async def chunk_count(self, *, document_id: int) -> int:
        with self.timings.measure("db: chunk_count"):
            return await super().chunk_count(document_id=document_id)

    async def delete_documents(self, *, source_id: int, uris: Sequence[str]) -> int:
        with self.timings.measure("db: delete_documents"):
            return await super().delete_documents(source_id=source_id, uris=uris)


class BenchEmbedder(SentenceTransformerEmbedder):
    """The production embedder, timed, plus the raw-encode baseline on the same model.

    `before_batch`, when set, runs before each `embed_batch` (the baseline parts that are
    interleaved with the full index); its time is in `hook_seconds`, so a phase can
    leave it out. The texts of every `embed_batch` call are kept for the padding
    analysis.
    """

    def __init__(self, timings: Timings) -> None:
        super().__init__(batch_size=BATCH_SIZE)
        self.timings = timings
        self.before_batch: Callable[[], Awaitable[None]] | None = None
        self.hook_seconds = 0.0
        self.calls: list[list[str]] = []

    async def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if self.before_batch is not None:
            started = time.perf_counter()
            await self.before_batch()
            self.hook_seconds += time.perf_counter() - started
        self.calls.append(list(texts))
        with self.timings.measure(EMBED_CALL):
            return await super().embed_batch(texts)

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text as the model sees them (special tokens in, truncated)."""
        model = self._load()
        encoded = model.tokenizer(list(texts), truncation=True, max_length=model.max_seq_length)
        return [len(ids) for ids in encoded["input_ids"]]

    async def raw_encode_seconds(self, texts: Sequence[str]) -> float:
        """Seconds for one `encode` of `texts`, as `embed_batch` runs it, minus the asyncio.

        The embedder's own encode step (same model, worker thread, thread count, batch
        size and arguments), timed inside the worker thread.
        """
        return await asyncio.get_running_loop().run_in_executor(
            self._executor, self._timed_encode, list(texts)
        )

    def _timed_encode(self, texts: list[str]) -> float:
        started = time.perf_counter()
        self._encode(texts)
        return time.perf_counter() - started


# --- phases ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Phase:
    name: str
    seconds: float
    report: IndexReport
    texts_embedded: int
    timings: Timings
    peak_rss_mb: float
    load_after: float


@dataclass(frozen=True, slots=True)
class BaselinePart:
    when: str
    texts: int
    tokens: int  # computed by the model, padding included
    seconds: float


class RawBaseline:
    """Raw `encode` of a sample of the batches one `encode` of every text would run.

    `encode` sorts its texts by length and cuts batches of 64, so a random sample of
    texts would pad far more than the whole set does. Sampling whole batches of the
    sorted order keeps each batch's padding as it is in one call over all the texts.
    The sample is split into parts: one before the full index, some at even points
    during it (run from `BenchEmbedder.before_batch`) and one after, so the load from
    other jobs weighs on both sides of the ratio alike.
    """

    def __init__(
        self,
        embedder: BenchEmbedder,
        parts: list[list[str]],
        *,
        expected: int,
        tokens: dict[str, int],
    ) -> None:
        self.embedder = embedder
        self.pending = parts
        self.tokens = tokens
        self.parts: list[BaselinePart] = []
        middle = len(parts) - 2
        self.thresholds = [expected * (i + 1) / (middle + 1) for i in range(middle)]
        self.start = 0

    async def run_part(self, when: str) -> None:
        texts = self.pending.pop(0)
        print(f"raw encode baseline, {when}: {len(texts)} texts", flush=True)
        seconds = await self.embedder.raw_encode_seconds(texts)
        tokens = _padded([texts], self.tokens, len)
        self.parts.append(BaselinePart(when, len(texts), tokens, seconds))

    def interleave(self) -> None:
        self.start = self.embedder.texts_embedded
        self.embedder.before_batch = self._before_batch

    async def finish(self) -> None:
        self.embedder.before_batch = None
        while self.pending:
            await self.run_part("after the full index")

    async def _before_batch(self) -> None:
        embedded = self.embedder.texts_embedded - self.start
        while self.thresholds and embedded >= self.thresholds[0] and len(self.pending) > 1:
            self.thresholds.pop(0)
            await self.run_part(f"during the full index ({embedded} texts in)")


def baseline_parts(
    texts: Sequence[str], *, sample: int, batch_size: int, rng: random.Random
) -> list[list[str]]:
    """Whole batches of the length-sorted texts, about `sample` texts, in up to 32 parts.

    Batches are taken at even steps through the sorted order (from a random start), so
    the sample spans the length distribution as the whole set does; they then run in a
    random order.
    """
    ordered = sorted(texts, key=len, reverse=True)
    batches = [ordered[i : i + batch_size] for i in range(0, len(ordered), batch_size)]
    if len(batches) > 1 and len(batches[-1]) < batch_size:
        batches.pop()  # the one short batch would not be representative
    wanted = len(batches) if sample <= 0 else min(-(-sample // batch_size), len(batches))
    step = len(batches) / wanted
    start = rng.random() * step
    chosen = [batches[int(start + i * step)] for i in range(wanted)]
    rng.shuffle(chosen)
    count = min(_BASELINE_PARTS, len(chosen))
    return [[t for batch in chosen[i::count] for t in batch] for i in range(count)]


@dataclass(frozen=True, slots=True)
class CorpusFacts:
    documents: int
    pages: int
    copies: int
    characters: int
    words: int
    chunks: int
    unique_texts: int
    chunk_hash_seconds: float


def progress_bar() -> Progress:
    return Progress(
        TextColumn("{task.description:<24}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        refresh_per_second=2,
    )


def chunk_corpus(corpus: Sequence[SourceDocument], pages: int) -> tuple[CorpusFacts, list[str]]:
    """Chunk and hash every document as the indexer does; the unique embedding texts."""
    texts: dict[str, str] = {}
    chunks = 0
    started = time.perf_counter()
    with progress_bar() as bar:
        task = bar.add_task("chunk + hash corpus", total=len(corpus))
        for doc in corpus:
            content_hash(doc.text)
            metadata_hash(title=doc.title, url=doc.url, metadata=doc.metadata)
            for chunk in chunk_text(doc.text):
                chunks += 1
                text = chunk.embedding_text()
                texts.setdefault(chunk_hash(text), text)
            bar.advance(task)
    facts = CorpusFacts(
        documents=len(corpus),
        pages=pages,
        copies=-(-len(corpus) // pages),
        characters=sum(len(doc.text) for doc in corpus),
        words=sum(len(_WORD.findall(doc.text)) for doc in corpus),
        chunks=chunks,
        unique_texts=len(texts),
        chunk_hash_seconds=time.perf_counter() - started,
    )
    return facts, list(texts.values())


async def run_phase(
    name: str, indexer: Indexer, folder: Folder, embedder: BenchEmbedder, *, skip: bool = True
) -> Phase:
    """One indexer pass over the folder; its time leaves out baseline parts run during it.

    The source is built as `ReindexJob` builds it: told what the store holds of it (the
    stored file fingerprints), unless `skip` is False.
    """
    embedder.timings.take()
    before, hooks = embedder.texts_embedded, embedder.hook_seconds
    with progress_bar() as bar:
        task = bar.add_task(name, total=folder.documents)
        started = time.perf_counter()
        source = await folder.source(indexer, skip=skip)
        report = await indexer.run(
            source, progress=lambda done, total: bar.update(task, completed=done, total=total)
        )
        seconds = time.perf_counter() - started - (embedder.hook_seconds - hooks)
    return Phase(
        name=name,
        seconds=seconds,
        report=report,
        texts_embedded=embedder.texts_embedded - before,
        timings=embedder.timings.take(),
        peak_rss_mb=peak_rss_mb(),
        load_after=os.getloadavg()[0],
    )


def peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def directory_mb(path: Path) -> float:
    files = (p for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    return sum(p.stat().st_size for p in files) / 1e6


# --- the run -----------------------------------------------------------------------


@dataclass(slots=True)
class Figures:
    config: BenchConfig
    corpus: CorpusFacts | None = None
    baseline: list[BaselinePart] = field(default_factory=list)
    padding: list[tuple[str, int]] = field(default_factory=list)
    phases: dict[str, Phase] = field(default_factory=dict)
    edited_documents: int = 0
    predicted_changes: Counter[int] = field(default_factory=Counter)
    database: dict[str, str] = field(default_factory=dict)
    machine: dict[str, str] = field(default_factory=dict)
    load_start: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_end: tuple[float, float, float] = (0.0, 0.0, 0.0)
    started_at: str = ""
    wall_seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Folder:
    """The corpus as Markdown files on disk, indexed as one directory source."""

    root: Path
    documents: int

    def write(self, corpus: Sequence[SourceDocument]) -> None:
        for doc in corpus:
            write_markdown(self.root / doc.uri, doc)

    async def source(self, indexer: Indexer, *, skip: bool = True) -> DirectorySource:
        stored = {}
        if skip:
            repository = indexer._repository
            source_id = await repository.source_id("bench")
            if source_id is not None:
                stored = await repository.documents_of(source_id=source_id)
        return DirectorySource(name="bench", root=self.root, url_style="none", previous=stored)

    async def converted(self) -> list[SourceDocument]:
        """What the directory source makes of the files (the texts the indexer chunks)."""
        items: list[SourceItem] = [item async for item in (await self._plain()).documents()]
        return [item for item in items if isinstance(item, SourceDocument)]

    async def _plain(self) -> DirectorySource:
        return DirectorySource(name="bench", root=self.root, url_style="none")

    def convert_one(self, uri: str) -> SourceDocument:
        """One file as the source converts it, in this process (for the edit analysis)."""
        task = FileTask(self.root / uri, uri, "markdown", PageUrls("none"), max_bytes=10**8)
        converted = convert_file(task).document
        return SourceDocument(uri=uri, title=converted.title, url=None, text=converted.text)


def write_markdown(path: Path, doc: SourceDocument) -> None:
    """A Markdown file with the document's title in its front matter and its text as body."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # A JSON string is a valid YAML scalar, whatever the title holds.
    path.write_text(f"---\ntitle: {json.dumps(doc.title)}\n---\n\n{doc.text}\n")


async def run(config: BenchConfig) -> Figures:
    figures = Figures(config=config, load_start=os.getloadavg())
    figures.started_at = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    started = time.perf_counter()
    pages = await load_handbook()
    corpus = build_corpus(pages, config.docs)
    with tempfile.TemporaryDirectory(prefix="kb-bench-") as temp:
        folder = Folder(Path(temp) / "corpus", len(corpus))
        folder.write(corpus)
        converted = {doc.uri: doc for doc in await folder.converted()}
        figures.corpus, texts = chunk_corpus(list(converted.values()), len(pages))
        await _against_database(figures, Path(temp) / "data", folder, corpus, converted, texts)
    figures.load_end = os.getloadavg()
    figures.wall_seconds = time.perf_counter() - started
    return figures


async def _against_database(
    figures: Figures,
    data_dir: Path,
    folder: Folder,
    corpus: list[SourceDocument],
    converted: dict[str, SourceDocument],
    texts: list[str],
) -> None:
    server = await start_embedded_postgres(data_dir)
    timings = Timings()
    embedder = BenchEmbedder(timings)
    try:
        pool = await open_pool(server.dsn)
        try:
            await embedder.load()
            await embedder.raw_encode_seconds(texts[:32])  # warm-up, not measured
            indexer = Indexer(repository=TimedRepository(pool, timings), embedder=embedder)
            await _measure(figures, indexer, embedder, folder, corpus, converted, texts)
            figures.database = await database_facts(pool, data_dir)
            figures.machine = machine_facts(figures.database)
        finally:
            await pool.close()
    finally:
        embedder.close()
        server.stop()


async def _measure(
    figures: Figures,
    indexer: Indexer,
    embedder: BenchEmbedder,
    folder: Folder,
    corpus: list[SourceDocument],
    converted: dict[str, SourceDocument],
    texts: list[str],
) -> None:
    rng = random.Random(figures.config.seed)
    parts = baseline_parts(
        texts, sample=figures.config.baseline_sample, batch_size=BATCH_SIZE, rng=rng
    )
    sampled = [text for part in parts for text in part]
    tokens = dict(zip(sampled, embedder.token_lengths(sampled), strict=True))
    baseline = RawBaseline(embedder, parts, expected=len(texts), tokens=tokens)
    await baseline.run_part("before the full index")
    baseline.interleave()
    figures.phases["full"] = await run_phase("full index", indexer, folder, embedder)
    await baseline.finish()
    figures.baseline = baseline.parts
    full_calls, embedder.calls = embedder.calls, []
    figures.phases["none"] = await run_phase("no-change reindex", indexer, folder, embedder)
    figures.phases["reread"] = await run_phase(
        "no-change, every file re-read", indexer, folder, embedder, skip=False
    )
    await _measure_edits(figures, indexer, embedder, folder, corpus, converted, rng)
    figures.padding = padding_facts(embedder, full_calls)


async def _measure_edits(
    figures: Figures,
    indexer: Indexer,
    embedder: BenchEmbedder,
    folder: Folder,
    corpus: list[SourceDocument],
    converted: dict[str, SourceDocument],
    rng: random.Random,
) -> None:
    """Edit one paragraph of `edit_share` of the files on disk, then reindex the folder."""
    edited, chosen = edit_corpus(corpus, share=figures.config.edit_share, rng=rng)
    folder.write([edited[i] for i in chosen])
    figures.edited_documents = len(chosen)
    before = [converted[doc.uri] for doc in corpus]
    after = list(before)
    for i in chosen:
        after[i] = folder.convert_one(corpus[i].uri)
    figures.predicted_changes = predicted_changes(before, after, chosen)
    name = f"{figures.config.edit_share:.0%} edited reindex"
    figures.phases["edit"] = await run_phase(name, indexer, folder, embedder)


def padding_facts(embedder: BenchEmbedder, calls: list[list[str]]) -> list[tuple[str, int]]:
    """Tokens the model computes (padding included) for the full index's texts, by grouping.

    Each batch is padded to its longest text in tokens, so the grouping into calls and the
    sort key decide how much padding is computed. `encode` sorts a call's texts by
    characters; `SentenceTransformerEmbedder` sorts an index call's texts by tokens.
    """
    texts = [text for call in calls for text in call]
    if not texts:
        return []
    tokens = dict(zip(texts, embedder.token_lengths(texts), strict=True))
    by_chars: Callable[[str], int] = len
    by_tokens: Callable[[str], int] = tokens.__getitem__
    big = [texts[i : i + 4096] for i in range(0, len(texts), 4096)]
    return [
        ("the texts themselves, no padding", sum(tokens.values())),
        (
            "one `encode` of every text (what the raw baseline samples)",
            _padded([texts], tokens, by_chars),
        ),
        (
            f"the indexer's {len(calls)} `embed_batch` calls (~{len(texts) // len(calls)} texts "
            "each), batches cut by token count as the embedder cuts them",
            _padded(calls, tokens, by_tokens),
        ),
        (
            "for comparison: the same calls, batches cut by `encode`'s character sort",
            _padded(calls, tokens, by_chars),
        ),
        ("what if: calls of 4096 texts in index order", _padded(big, tokens, by_chars)),
    ]


def _padded(
    groups: Iterable[Sequence[str]], tokens: dict[str, int], key: Callable[[str], int]
) -> int:
    total = 0
    for group in groups:
        ordered = sorted(group, key=key, reverse=True)
        for i in range(0, len(ordered), BATCH_SIZE):
            batch = ordered[i : i + BATCH_SIZE]
            total += len(batch) * max(tokens[text] for text in batch)
    return total


def predicted_changes(
    before: Sequence[SourceDocument], after: Sequence[SourceDocument], chosen: Iterable[int]
) -> Counter[int]:
    """How many edited documents get 1, 2, … chunk texts they did not have before."""
    changes: Counter[int] = Counter()
    for i in chosen:
        old = {chunk_hash(c.embedding_text()) for c in chunk_text(before[i].text)}
        new = [chunk_hash(c.embedding_text()) for c in chunk_text(after[i].text)]
        changes[sum(1 for h in new if h not in old)] += 1
    return changes


async def database_facts(pool: asyncpg.Pool, data_dir: Path) -> dict[str, str]:
    row = await pool.fetchrow(
        """SELECT current_setting('server_version') AS version,
                  (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS pgvector,
                  pg_database_size(current_database()) AS database_bytes,
                  pg_total_relation_size('chunks') AS chunks_bytes,
                  pg_relation_size('chunks_embedding_hnsw') AS hnsw_bytes"""
    )
    return {
        "postgres": str(row["version"]),
        "pgvector": str(row["pgvector"]),
        "data_dir_mb": f"{directory_mb(data_dir):.0f}",
        "database_mb": f"{row['database_bytes'] / 1e6:.0f}",
        "chunks_mb": f"{row['chunks_bytes'] / 1e6:.0f}",
        "hnsw_mb": f"{row['hnsw_bytes'] / 1e6:.0f}",
    }


def machine_facts(database: dict[str, str]) -> dict[str, str]:
    import sentence_transformers
    import torch
    import transformers

    return {
        "CPUs (nproc)": str(len(os.sched_getaffinity(0))),
        "CPU model": _cpu_model(),
        "RAM": _memory_total(),
        "OS": platform.platform(),
        "Python": platform.python_version(),
        "torch": f"{torch.__version__} ({torch.get_num_threads()} intra-op threads)",
        "sentence-transformers": sentence_transformers.__version__,
        "transformers": transformers.__version__,
        "numpy": np.__version__,
        "Postgres": f"{database['postgres']} (embedded, pgserver), pgvector {database['pgvector']}",
        "thread env": ", ".join(
            f"{k}={os.environ.get(k)}" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")
        ),
        "git commit": _git_commit(),
    }


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _memory_total() -> str:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    return "unknown"


def _git_commit() -> str:
    def git(*args: str) -> str:
        result = subprocess.run(
            ["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, check=False
        )
        return result.stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return f"{commit} (uncommitted changes)" if git("status", "--porcelain") else commit


# --- the report --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Row:
    measure: str
    value: str
    target: str = ""
    passed: bool | None = None


def result_rows(figures: Figures) -> list[Row]:
    return [
        *_full_rows(figures),
        *_full_diagnosis_rows(figures),
        *_no_change_rows(figures),
        *_edit_rows(figures),
        *_resource_rows(figures),
    ]


def _full_rows(figures: Figures) -> list[Row]:
    full = figures.phases["full"]
    raw_rate = baseline_rate(figures.baseline)
    embedded_rate = full.texts_embedded / full.seconds
    ratio = embedded_rate / raw_rate
    return [
        Row("full index: time", f"{full.seconds:.1f} s"),
        Row(
            "full index: chunks stored / s",
            f"{_chunks(full):,} chunks, {_chunks(full) / full.seconds:.2f}/s",
        ),
        Row(
            "full index: texts embedded / s",
            f"{full.texts_embedded:,} texts, {embedded_rate:.2f}/s",
        ),
        Row("raw `encode` of sampled batches of the same texts", f"{raw_rate:.2f} texts/s"),
        Row(
            "full index ÷ raw encode (texts/s)",
            f"{ratio:.3f}",
            f"≥ {TARGET_ENCODE_RATIO}",
            ratio >= TARGET_ENCODE_RATIO,
        ),
    ]


def _full_diagnosis_rows(figures: Figures) -> list[Row]:
    """Why the ratio is what it is: model share, model speed, padding."""
    full = figures.phases["full"]
    model_seconds = full.timings.seconds.get(EMBED_CALL, 0.0)
    if not model_seconds or len(figures.padding) < 3:
        return []
    share = model_seconds / full.seconds
    model_rate = full.texts_embedded / model_seconds
    padding = figures.padding[2][1] / figures.padding[1][1]
    return [
        Row("full index: share of its time inside `embed_batch`", f"{share:.1%}"),
        Row(
            "`embed_batch` rate in the index ÷ raw encode",
            f"{model_rate / baseline_rate(figures.baseline):.3f}",
        ),
        Row(
            "full index ÷ raw encode, token-count estimate without background load "
            "(share in `embed_batch` ÷ padding of the indexer's calls vs one `encode`)",
            f"{share / padding:.3f} ({share:.3f} ÷ {padding:.3f})",
        ),
    ]


def baseline_rate(parts: Sequence[BaselinePart]) -> float:
    return sum(p.texts for p in parts) / sum(p.seconds for p in parts)


def _no_change_rows(figures: Figures) -> list[Row]:
    full, none = figures.phases["full"], figures.phases["none"]
    reread = figures.phases["reread"]
    share = none.seconds / full.seconds
    embedded = f"{none.texts_embedded} (report: {none.report.chunks_embedded})"
    return [
        Row(
            "no-change reindex: time ÷ full index",
            f"{share:.3%} ({none.seconds:.2f} s)",
            f"≤ {TARGET_NO_CHANGE_SHARE:.1%}",
            share <= TARGET_NO_CHANGE_SHARE,
        ),
        Row(
            "no-change reindex with every file re-read and converted (the baseline): "
            "time ÷ full index",
            f"{reread.seconds / full.seconds:.3%} ({reread.seconds:.2f} s; "
            f"{reread.seconds / none.seconds:.0f}× the skipping pass)",
        ),
        Row(
            "no-change reindex: embeddings computed",
            embedded,
            "0",
            none.texts_embedded == 0 and none.report.chunks_embedded == 0,
        ),
    ]


def _edit_rows(figures: Figures) -> list[Row]:
    edit, full_seconds = figures.phases["edit"], figures.phases["full"].seconds
    ratio = edit.report.chunks_embedded / figures.edited_documents
    share = f"{figures.config.edit_share:.0%}"
    return [
        Row(
            f"{share} edited ({figures.edited_documents} docs, one paragraph each): "
            "chunks re-embedded ÷ edited paragraphs",
            f"{ratio:.2f} ({edit.report.chunks_embedded} chunks, "
            f"{edit.texts_embedded} texts embedded)",
            f"≤ {TARGET_EDIT_RATIO}",
            ratio <= TARGET_EDIT_RATIO and edit.texts_embedded == edit.report.chunks_embedded,
        ),
        Row(
            f"{share} edited: time",
            f"{edit.seconds:.2f} s ({edit.seconds / full_seconds:.2%} of the full index)",
        ),
    ]


def _resource_rows(figures: Figures) -> list[Row]:
    return [
        Row(
            "peak RSS of this process",
            f"{max(p.peak_rss_mb for p in figures.phases.values()):.0f} MB",
        ),
        Row(
            "Postgres on disk",
            "{data_dir_mb} MB data folder; database {database_mb} MB, chunks table "
            "{chunks_mb} MB incl. HNSW index {hnsw_mb} MB".format(**figures.database),
        ),
    ]


def _chunks(phase: Phase) -> int:
    return phase.report.chunks_embedded + phase.report.chunks_reused


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def results_table(figures: Figures) -> str:
    def verdict(row: Row) -> str:
        return "" if row.passed is None else ("pass" if row.passed else "**FAIL**")

    rows = result_rows(figures)
    return markdown_table(
        ["measure", "value", "target", "result"],
        [(r.measure, r.value, r.target, verdict(r)) for r in rows],
    )


def corpus_table(figures: Figures) -> str:
    corpus = figures.corpus
    assert corpus is not None
    sample = sum(part.texts for part in figures.baseline)
    return markdown_table(
        ["corpus", "size"],
        [
            (
                "documents",
                f"{corpus.documents:,} ({corpus.pages} handbook pages × up to "
                f"{corpus.copies} copies)",
            ),
            ("text", f"{corpus.characters / 1e6:.1f} M characters, {corpus.words:,} words"),
            ("chunks", f"{corpus.chunks:,} ({corpus.words / corpus.chunks:.0f} words/chunk avg)"),
            ("distinct chunk embedding texts", f"{corpus.unique_texts:,}"),
            ("raw-encode sample", f"{sample:,} of those texts, in whole batches of {BATCH_SIZE}"),
            ("chunk + hash of the whole corpus, standalone", f"{corpus.chunk_hash_seconds:.2f} s"),
        ],
    )


def baseline_table(figures: Figures) -> str:
    """Each raw-encode part; tokens/s (padding included) shows the load, whatever the lengths."""
    return markdown_table(
        ["raw-encode part", "texts", "tokens", "seconds", "texts/s", "tokens/s"],
        [
            (
                part.when,
                str(part.texts),
                f"{part.tokens:,}",
                f"{part.seconds:.1f}",
                f"{part.texts / part.seconds:.2f}",
                f"{part.tokens / part.seconds:,.0f}",
            )
            for part in figures.baseline
        ],
    )


def padding_table(figures: Figures) -> str:
    if not figures.padding:
        return "(nothing was embedded)"
    reference = figures.padding[1][1]
    return markdown_table(
        ["full index's texts, grouped as", "tokens computed (with padding)", "vs one `encode`"],
        [(name, f"{tokens:,}", f"{tokens / reference:.3f}") for name, tokens in figures.padding],
    )


def profile_table(figures: Figures) -> str:
    """Where each indexing phase's time went, per instrumented call."""
    rows: list[tuple[str, ...]] = []
    for phase in figures.phases.values():
        accounted = 0.0
        for name, seconds in sorted(phase.timings.seconds.items(), key=lambda kv: -kv[1]):
            accounted += seconds
            rows.append(
                (
                    phase.name,
                    name,
                    str(phase.timings.calls[name]),
                    f"{seconds:.2f}",
                    f"{seconds / phase.seconds:.1%}",
                )
            )
        rest = phase.seconds - accounted
        rows.append(
            (
                phase.name,
                "rest: listing, chunking, hashing, Python",
                "",
                f"{rest:.2f}",
                f"{rest / phase.seconds:.1%}",
            )
        )
    return markdown_table(["phase", "operation", "calls", "seconds", "share"], rows)


def edit_distribution(figures: Figures) -> str:
    parts = [
        f"{n} new chunk text(s): {docs} docs"
        for n, docs in sorted(figures.predicted_changes.items())
    ]
    return "; ".join(parts)


def machine_table(figures: Figures) -> str:
    load = [
        ("load average at start (1/5/15 min)", _loads(figures.load_start)),
        ("load average at end (1/5/15 min)", _loads(figures.load_end)),
        (
            "load average (1 min) after each phase",
            ", ".join(f"{p.name} {p.load_after:.2f}" for p in figures.phases.values()),
        ),
    ]
    return markdown_table(["machine", ""], [*figures.machine.items(), *load])


def _loads(loads: tuple[float, float, float]) -> str:
    return " / ".join(f"{value:.2f}" for value in loads)


METHOD = """\
- Corpus: the bundled handbook's {pages} pages (`jobs.directory.handbook_source`), repeated;
  copy k ≥ 1 gets "(copy k)" at the end of every paragraph (and every {every} words
  inside long ones), so its chunk texts differ from every other copy's while paragraph
  and heading structure stay as they are. Each document is written as a Markdown file
  (title in the front matter, cleaned text as the body) into a temporary folder, and
  the folder is indexed with `jobs.directory.DirectorySource` (`url_style` none): every
  phase lists, stats and (unless skipped) reads and converts real files in the worker
  processes, as `kb index` does. Corpus figures are from what the source makes of the
  files. Default chunking policy and `IndexOptions`.
- The source is built as `ReindexJob` builds it, with the stored documents, so files
  whose size, modification time and settings match their stored fingerprint are not
  opened; the "every file re-read" pass builds it without them (the behaviour before
  the fingerprints), the same folder and index, as the baseline.
- One run against a fresh embedded Postgres in a temporary folder: full index (with the
  raw-encode baseline in parts before, during and after it), no-change reindex, the
  no-change reindex re-reading every file, then a reindex with one paragraph edited
  (its middle word replaced, the file rewritten) in {share:.0%} of the documents (at
  least one).
- Raw baseline: `SentenceTransformer.encode` as the embedder runs it (its `_encode`: the
  same model, worker thread, torch threads, batch size {batch}, arguments), over a
  random sample of whole batches of the length-sorted distinct chunk embedding texts
  (`Chunk.embedding_text()`): the batches one `encode` of every text would run, so their
  padding is that of one call (a random sample of single texts would pad much more).
  Its parts run before, at even points during (time left out of the index's time) and
  after the full index, so the load from other jobs weighs on both sides alike. The
  ratio compares texts embedded per second (the indexer embeds each distinct text once).
- Profile: every repository and embedder call the indexer makes is timed by wrappers
  (`TimedRepository`, `BenchEmbedder`); "rest" is the phase time outside them (listing,
  hashing, chunking, the event loop). Padding: token counts from the model's tokenizer,
  batches formed as the embedder forms them; other rows regroup the same texts.
- The CPU is shared with other jobs: the load averages say how contended it was.
  Absolute rates move with the load; ratios measured in the same run are fairer.
"""


def results_markdown(figures: Figures) -> str:
    corpus = figures.corpus
    assert corpus is not None
    method = METHOD.format(
        pages=corpus.pages, every=_MARK_EVERY, share=figures.config.edit_share, batch=BATCH_SIZE
    )
    sections = [
        "# Reindex benchmark",
        f"Run {figures.started_at}, {figures.wall_seconds / 60:.1f} min in all. Command "
        f"(from the repository root): `{figures.config.command}`",
        results_table(figures),
        "## Corpus",
        corpus_table(figures),
        "## Raw-encode baseline",
        baseline_table(figures),
        "## Where the time went",
        profile_table(figures),
        "## Padding",
        padding_table(figures),
        "## Edits",
        "Chunk texts new to each edited document (from chunking the old and new text): "
        f"{edit_distribution(figures)}.",
        "## Machine",
        machine_table(figures),
        "## Method",
        method.rstrip(),
    ]
    return "\n\n".join(sections) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    config = parse_args(sys.argv[1:] if argv is None else argv)
    figures = asyncio.run(run(config))
    text = results_markdown(figures)
    print("\n" + text)
    if config.output is not None:
        config.output.parent.mkdir(parents=True, exist_ok=True)
        config.output.write_text(text)
        print(f"written to {config.output}")


if __name__ == "__main__":
    main()
