"""KeywordSearch: BM25 over single terms and word pairs, kept in step with Postgres.

Each process keeps its own index (store/keyword_search/segmented.py). The first search
(or `refresh`) reads every chunk once, in batches, into a few large segments. Before
each later search the corpus version in Postgres is compared with the index's (every
write bumps it); when it moved, the documents written since the index's Postgres
snapshot are read from the change log (migration 0005) and applied before the search is
answered: their old chunks masked, their chunks as they are now analysed into one small
segment. Only when more documents changed than `max_changed_documents` (a new embedding
model, say) is everything read again, in the background, with searches answered from
the previous index meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from store.corpus import CorpusChanges, CorpusPoint, CorpusReader, IndexedChunk
from store.filters import NO_FILTER, ChunkFilter
from store.keyword_search import ranking
from store.keyword_search.bm25 import Bm25Parameters
from store.keyword_search.live import LiveBm25
from store.keyword_search.pairs import PairVocabulary, pair_occurrences, query_pairs
from store.keyword_search.segmented import (
    ChunkColumns,
    Segment,
    SegmentedIndex,
    SegmentPolicy,
    collection_code,
)
from store.keyword_search.segments import Postings
from store.keyword_search.terms import BREAK, TermSequences, Vocabulary
from store.text_analysis import TextAnalyzer, TitleMentions
from store.vector_search import ChunkHit

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class KeywordHits:
    """A keyword search's best (chunk id, BM25 score) pairs, and the scores' distribution:
    mean and (population) spread over every chunk that matched a term and passed the
    filters, not only the best ones."""

    top: list[tuple[int, float]]
    matched: int
    mean: float
    spread: float


@dataclass(frozen=True, slots=True)
class BuildStats:
    """What the last change of the index did: a full read of the corpus or an update."""

    kind: Literal["full", "update"]
    version: int
    chunks: int  # live chunks indexed
    analysed: int  # chunks whose text was analysed for this change
    seconds: float
    segments: int
    # What the index holds, in MB: its arrays, the vocabularies and the title table
    # (the vocabulary's Python strings are measured on full builds only).
    megabytes: float


@dataclass(frozen=True, slots=True)
class KeywordOptions:
    # Anserini's BM25 setting for BEIR; measured better than rank-bm25's defaults on both
    # eval sets (bench/results/retrieval_eval.md). The scoring formula is BM25Okapi's.
    parameters: Bm25Parameters = field(default_factory=lambda: Bm25Parameters(k1=0.9, b=0.4))
    # The title counts this many times (a cheap BM25F): titles name what a document is about.
    title_weight: int = 2
    # Also index adjacent word pairs (`search_pairs`).
    word_pairs: bool = True
    # Seconds between corpus-version checks; 0 checks before every search.
    check_interval: float = 0.0
    # Answer from the previous index while a full read runs (False: wait for it).
    serve_stale: bool = True
    # More changed documents than this since the index's snapshot: read everything again.
    max_changed_documents: int = 2_000
    # Chunks per segment of a full read: bounds the memory one build step takes.
    segment_chunks: int = 100_000
    segments: SegmentPolicy = field(default_factory=SegmentPolicy)


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """One consistent state of the index: what it holds and where in Postgres it stands."""

    point: CorpusPoint
    index: SegmentedIndex
    vocabulary: Vocabulary
    pairs: PairVocabulary
    titles: TitleMentions
    held_vocabulary_bytes: int

    @property
    def version(self) -> int:
        return self.point.version

    def allowed(self, where: ChunkFilter, at: np.ndarray | None = None) -> np.ndarray:
        """Which positions (all, or those `at`) are live and pass `where`."""
        columns, mask = self.index.columns, self.index.alive
        source_ids, updated_at = columns.source_ids, columns.updated_at
        codes = columns.collection_codes
        if at is not None:
            mask, source_ids, updated_at, codes = (
                mask[at],
                source_ids[at],
                updated_at[at],
                codes[at],
            )
        sources = self.point.sources
        if where.sources is not None:
            wanted = set(where.sources)
            ids = [i for i, (name, _) in sources.items() if name in wanted]
            mask = mask & np.isin(source_ids, ids)
        if where.collections is not None:
            wanted = set(where.collections)
            ids = [i for i, (_, collection) in sources.items() if collection in wanted]
            # A document's own collection (code != 0) decides; else its source's.
            own = np.isin(codes, [collection_code(c) for c in wanted])
            mask = mask & np.where(codes != 0, own, np.isin(source_ids, ids))
        if where.excluded_collections:
            unwanted = set(where.excluded_collections)
            ids = [i for i, (_, collection) in sources.items() if collection in unwanted]
            own = np.isin(codes, [collection_code(c) for c in unwanted])
            mask = mask & ~np.where(codes != 0, own, np.isin(source_ids, ids))
        if where.updated_after is not None:
            mask = mask & (updated_at >= where.updated_after.timestamp())
        if where.updated_before is not None:
            mask = mask & (updated_at < where.updated_before.timestamp())
        return mask

    def best(
        self, scorer: LiveBm25, query: dict[int, int], where: ChunkFilter, limit: int
    ) -> KeywordHits:
        """The `limit` best live chunks that pass `where` (ties by chunk id), and the
        distribution of every such chunk's positive score (store/keyword_search/ranking.py)."""
        docs, weights = scorer.postings(query)
        if not len(docs):
            return KeywordHits(top=[], matched=0, mean=0.0, spread=0.0)
        if ranking.sparse(len(docs), scorer.size):
            positions, scores = ranking.summed(docs, weights)
            keep = (scores > 0) & self.allowed(where, at=positions)
            positions, scores = positions[keep], scores[keep]
            matched = ranking.Distribution.of(scores)
        else:
            # In place: at 1M chunks every fresh array of them costs its page faults.
            dense = np.bincount(docs, weights, minlength=scorer.size)
            np.multiply(dense, self.allowed(where), out=dense)
            np.maximum(dense, 0.0, out=dense)
            matched = ranking.Distribution.of(dense)
            positions = ranking.candidates(dense, limit)
            scores = dense[positions]
        top = ranking.best(self.index.columns.chunk_ids[positions], scores, limit)
        return KeywordHits(top, matched.count, matched.mean, matched.spread)


class KeywordSearch:
    """BM25 over the stored chunks, kept current with the corpus."""

    def __init__(
        self,
        corpus: CorpusReader,
        *,
        analyzer: TextAnalyzer | None = None,
        options: KeywordOptions | None = None,
    ) -> None:
        self._corpus = corpus
        self._analyzer = analyzer or TextAnalyzer()
        self._options = options or KeywordOptions()
        # One worker: index changes happen one at a time, in order.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bm25")
        self._snapshot: _Snapshot | None = None
        self._checked_at = float("-inf")
        self._lock = asyncio.Lock()
        self._rebuild: asyncio.Task[None] | None = None
        self.last_build: BuildStats | None = None

    @property
    def analyzer(self) -> TextAnalyzer:
        return self._analyzer

    def named_documents(self, text: str) -> set[int]:
        """Ids of the documents whose title `text` names (see TitleMentions), as last indexed."""
        return self._snapshot.titles.named_in(text) if self._snapshot else set()

    def rarity(self, terms: Iterable[str]) -> dict[str, float]:
        """How much finding each term tells, in this knowledge base: its BM25 idf over the
        live chunks as last indexed (at least 0.25; a term no chunk has is the rarest of
        all). Every term weighs 1.0 before the first build."""
        snapshot = self._snapshot
        terms = list(dict.fromkeys(terms))
        if snapshot is None or not terms:
            return dict.fromkeys(terms, 1.0)
        statistics = snapshot.index.words.statistics
        ids = snapshot.vocabulary.known_ids(terms)
        known = (ids >= 0) & (ids < len(statistics.df))
        df = np.zeros(len(terms), np.float64)
        df[known] = statistics.df[ids[known]]
        chunks = max(statistics.chunks, 1)
        idf = np.log(chunks - df + 0.5) - np.log(df + 0.5)
        return {t: max(float(w), 0.25) for t, w in zip(terms, idf, strict=True)}

    def known(self, terms: Iterable[str]) -> set[str]:
        """Which of `terms` some live chunk has, as last indexed (all of them before the
        first build: nothing is known to be missing yet)."""
        snapshot = self._snapshot
        terms = list(dict.fromkeys(terms))
        if snapshot is None:
            return set(terms)
        df = snapshot.index.words.statistics.df
        ids = snapshot.vocabulary.known_ids(terms)
        return {t for t, i in zip(terms, ids, strict=True) if 0 <= i < len(df) and df[i] > 0}

    @property
    def version(self) -> int | None:
        """The corpus version the current index reflects (None before the first build)."""
        return self._snapshot.version if self._snapshot else None

    async def search(
        self, query: str, *, limit: int = 10, where: ChunkFilter = NO_FILTER
    ) -> list[ChunkHit]:
        """The best-scoring chunks for `query`; `score` is the BM25 score."""
        found = await self.search_scored(self._analyzer.terms(query), limit=limit, where=where)
        return await self._corpus.hits(found.top)

    async def search_scored(
        self, terms: Sequence[str], *, limit: int = 10, where: ChunkFilter = NO_FILTER
    ) -> KeywordHits:
        """The best chunks for already-analysed query terms, best first, and the mean and
        spread of every matching chunk's score."""
        snapshot = await self.current()
        if snapshot is None or not terms:
            return KeywordHits(top=[], matched=0, mean=0.0, spread=0.0)
        query = snapshot.vocabulary.lookup(terms)

        # Not the index's worker thread: a search never waits behind an index change.
        return await asyncio.to_thread(snapshot.best, snapshot.index.words, query, where, limit)

    async def search_pairs(
        self, words: Sequence[str], *, limit: int = 10, where: ChunkFilter = NO_FILTER
    ) -> list[tuple[int, float]]:
        """The best (chunk id, BM25 score) pairs by the query's adjacent word pairs, given
        the query's words in order (`AnalysedText.words`); empty without a pair index."""
        snapshot = await self.current()
        if snapshot is None or snapshot.index.pairs is None or len(words) < 2:
            return []
        pairs = snapshot.index.pairs
        query = snapshot.pairs.known(query_pairs(snapshot.vocabulary.known_ids(words)))
        if not query:
            return []
        found = await asyncio.to_thread(snapshot.best, pairs, query, where, limit)
        return found.top

    async def current(self) -> _Snapshot | None:
        """The index to search now, brought up to date first if the corpus moved (unless
        a full read is under way and stale answers are allowed)."""
        now = time.monotonic()
        if self._snapshot is not None and now - self._checked_at < self._options.check_interval:
            return self._snapshot
        self._checked_at = now
        if self._snapshot is not None:
            if self._snapshot.version == await self._corpus.version():
                return self._snapshot
            if self._options.serve_stale and self._rebuild is not None and not self._rebuild.done():
                return self._snapshot
        await self._catch_up(in_background=self._options.serve_stale)
        return self._snapshot

    async def refresh(self) -> bool:
        """Bring the index up to date with the corpus, waiting for a full read if one is
        needed or under way; True if the index changed."""
        if self._rebuild is not None and not self._rebuild.done():
            await asyncio.gather(self._rebuild, return_exceptions=True)
        before = self._snapshot
        await self._catch_up(in_background=False)
        return self._snapshot is not before

    async def close(self) -> None:
        if self._rebuild is not None and not self._rebuild.done():
            self._rebuild.cancel()
            await asyncio.gather(self._rebuild, return_exceptions=True)
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def _catch_up(self, *, in_background: bool) -> None:
        async with self._lock:
            snapshot = self._snapshot
            if snapshot is None:
                return await self._full_read()
            if snapshot.version == await self._corpus.version():
                return None
            changes = await self._corpus.changes_since(
                snapshot.point.snapshot, max_documents=self._options.max_changed_documents
            )
            if changes is None and in_background:
                self._rebuild = asyncio.create_task(self._locked_full_read())
                self._rebuild.add_done_callback(_log_failure)
                return None
            if changes is None:
                return await self._full_read()
            await self._apply(snapshot, changes)

    async def _locked_full_read(self) -> None:
        async with self._lock:
            await self._full_read()

    async def _full_read(self) -> None:
        """Read and index every chunk; the new index replaces the old one when done."""
        started = time.perf_counter()
        loop = asyncio.get_running_loop()
        builder = _FullBuild(self._analyzer, self._options)
        async with self._corpus.full_read() as read:
            async for batch in read.batches(5_000):
                await loop.run_in_executor(self._executor, builder.add, batch)
            point = read.point
        snapshot = await loop.run_in_executor(self._executor, builder.finish, point)
        self._publish(snapshot, "full", builder.analysed, started)

    async def _apply(self, snapshot: _Snapshot, changes: CorpusChanges) -> None:
        """Mask the changed documents' old chunks, add their current ones, merge if due."""
        started = time.perf_counter()
        loop = asyncio.get_running_loop()
        updated = await loop.run_in_executor(
            self._executor, _updated, snapshot, changes, self._analyzer, self._options
        )
        self._publish(updated, "update", len(changes.chunks), started)
        merged = await loop.run_in_executor(
            self._executor, updated.index.merge_small, self._options.segments
        )
        if merged is not None:
            self._snapshot = _replace_index(updated, merged)

    def _publish(
        self, snapshot: _Snapshot, kind: Literal["full", "update"], analysed: int, started: float
    ) -> None:
        self._snapshot = snapshot
        held = snapshot.index.nbytes() + snapshot.pairs.nbytes() + snapshot.held_vocabulary_bytes
        self.last_build = BuildStats(
            kind=kind,
            version=snapshot.version,
            chunks=snapshot.index.live,
            analysed=analysed,
            seconds=round(time.perf_counter() - started, 3),
            segments=len(snapshot.index.segments),
            megabytes=round(held / 2**20, 1),
        )
        log.info(
            "keyword index %s: %s", "rebuilt" if kind == "full" else "updated", self.last_build
        )


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("keyword index rebuild failed", exc_info=task.exception())


class _FullBuild:
    """Every chunk, batch by batch, into segments of `segment_chunks`; runs in the worker."""

    def __init__(self, analyzer: TextAnalyzer, options: KeywordOptions) -> None:
        self._analyzer = analyzer
        self._options = options
        self._vocabulary = Vocabulary()
        self._pairs = PairVocabulary()
        self._pending: list[IndexedChunk] = []
        self._segments: list[Segment] = []
        self._titles: dict[int, str] = {}
        self.analysed = 0

    def add(self, chunks: list[IndexedChunk]) -> None:
        self._pending += chunks
        self._titles.update((c.document_id, c.title) for c in chunks)
        if len(self._pending) >= self._options.segment_chunks:
            self._seal()

    def finish(self, point: CorpusPoint) -> _Snapshot:
        self._seal()
        index = SegmentedIndex.of(
            self._segments,
            vocabulary_sizes=(len(self._vocabulary), len(self._pairs)),
            parameters=self._options.parameters,
            with_pairs=self._options.word_pairs,
        )
        titles = TitleMentions(self._titles.items())
        held = self._vocabulary.held_bytes()
        return _Snapshot(point, index, self._vocabulary, self._pairs, titles, held)

    def _seal(self) -> None:
        if self._pending:
            segment = _segment(
                self._pending, self._vocabulary, self._pairs, self._analyzer, self._options
            )
            self._segments.append(segment)
            self.analysed += len(self._pending)
            self._pending = []


def _updated(
    snapshot: _Snapshot,
    changes: CorpusChanges,
    analyzer: TextAnalyzer,
    options: KeywordOptions,
) -> _Snapshot:
    """Runs in the worker thread: the snapshot with `changes` applied."""
    added = None
    if changes.chunks:
        added = _segment(changes.chunks, snapshot.vocabulary, snapshot.pairs, analyzer, options)
    index = snapshot.index.with_changes(
        removed_documents=np.array(changes.documents, dtype=np.int64),
        added=added,
        vocabulary_sizes=(len(snapshot.vocabulary), len(snapshot.pairs)),
    )
    titles: dict[int, str | None] = dict.fromkeys(changes.documents)
    titles.update((c.document_id, c.title) for c in changes.chunks)
    return _Snapshot(
        changes.point,
        index,
        snapshot.vocabulary,
        snapshot.pairs,
        snapshot.titles.changed(titles),
        snapshot.held_vocabulary_bytes,
    )


def _replace_index(snapshot: _Snapshot, index: SegmentedIndex) -> _Snapshot:
    return _Snapshot(
        snapshot.point,
        index,
        snapshot.vocabulary,
        snapshot.pairs,
        snapshot.titles,
        snapshot.held_vocabulary_bytes,
    )


def _segment(
    chunks: Sequence[IndexedChunk],
    vocabulary: Vocabulary,
    pairs: PairVocabulary,
    analyzer: TextAnalyzer,
    options: KeywordOptions,
) -> Segment:
    """Chunks analysed into one segment: their columns, term postings and pair postings."""
    sequences = TermSequences.of([_analyse(c, vocabulary, analyzer, options) for c in chunks])
    present = sequences.terms != BREAK
    words = Postings.build(sequences.terms[present], sequences.owner[present], sequences.size)
    pair_postings = None
    if options.word_pairs:
        keys, owner = pair_occurrences(sequences)
        pair_postings = Postings.build(pairs.ids(keys), owner, sequences.size)
    columns = ChunkColumns(
        np.fromiter((c.chunk_id for c in chunks), np.int64, count=len(chunks)),
        np.fromiter((c.document_id for c in chunks), np.int64, count=len(chunks)),
        np.fromiter((c.source_id for c in chunks), np.int64, count=len(chunks)),
        np.fromiter((c.updated_at for c in chunks), np.float64, count=len(chunks)),
        np.fromiter((collection_code(c.collection) for c in chunks), np.int64, count=len(chunks)),
    )
    return Segment(columns, words, pair_postings)


def _analyse(
    chunk: IndexedChunk, vocabulary: Vocabulary, analyzer: TextAnalyzer, options: KeywordOptions
) -> np.ndarray:
    """What BM25 sees of a chunk, as term ids in reading order: its document's title
    (`title_weight` times), its section path and its text. Word pairs are taken within
    each of these, not across."""
    fields = [analyzer.analyse(text) for text in (chunk.title, *chunk.heading_path)]
    fields = [fields[0]] * options.title_weight + fields[1:]
    fields.append(analyzer.analyse(chunk.text))
    ids = vocabulary.ids
    runs = [ids(f.words) for f in fields] + [ids([t]) for f in fields for t in f.identifiers]
    return np.concatenate([np.append(run, BREAK) for run in runs]).astype(np.int32)
