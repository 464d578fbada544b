"""KeywordSearch: the BM25 and word-pair indexes kept in step with Postgres.

Each process keeps its own index. Before a search, the corpus version in Postgres is
compared with the index's (every reindex bumps it); when it moved, the index is rebuilt
in a worker thread, re-analysing only chunks it has not seen. While a rebuild runs,
searches are answered from the previous index. Each chunk is kept as one int32 array
of its term ids in reading order, from which both indexes are rebuilt without analysing
text again.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from store.corpus import ChunkText, CorpusListing, CorpusReader
from store.filters import NO_FILTER, ChunkFilter
from store.keyword_search.bm25 import Bm25Index, Bm25Parameters, top_positive
from store.keyword_search.pairs import PairIndex
from store.keyword_search.terms import BREAK, TermSequences, Vocabulary
from store.text_analysis import TextAnalyzer, TitleMentions
from store.vector_search import ChunkHit

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """One built index with the chunk metadata the filters need, by index position."""

    version: int
    index: Bm25Index
    chunk_ids: np.ndarray
    document_ids: np.ndarray
    source_codes: np.ndarray
    source_names: tuple[str, ...]
    collection_codes: np.ndarray
    collection_names: tuple[str, ...]
    updated_at: np.ndarray
    titles: TitleMentions
    pairs: PairIndex | None

    def allowed(self, where: ChunkFilter) -> np.ndarray | None:
        """Which index positions pass `where` (None: all of them)."""
        mask = None
        if where.sources is not None:
            mask = _and(mask, _in(self.source_codes, self.source_names, where.sources))
        if where.collections is not None:
            mask = _and(mask, _in(self.collection_codes, self.collection_names, where.collections))
        if where.updated_after is not None:
            mask = _and(mask, self.updated_at >= where.updated_after.timestamp())
        if where.updated_before is not None:
            mask = _and(mask, self.updated_at < where.updated_before.timestamp())
        return mask


def _in(codes: np.ndarray, names: tuple[str, ...], wanted: Sequence[str]) -> np.ndarray:
    chosen = set(wanted)
    return np.isin(codes, [i for i, name in enumerate(names) if name in chosen])


def _and(mask: np.ndarray | None, other: np.ndarray) -> np.ndarray:
    return other if mask is None else mask & other


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
class _Analysed:
    """One chunk as the index saw it: the title it was analysed with, and its term ids in
    reading order (a TermSequences entry), one int32 per term."""

    title: str
    sequence: np.ndarray


@dataclass(frozen=True, slots=True)
class BuildStats:
    """What the last rebuild did: how many chunks it indexed and how many it had to analyse."""

    version: int
    chunks: int
    analysed: int
    seconds: float
    # What the index and its per-chunk cache hold, in MB (arrays and their entries).
    megabytes: float


@dataclass(frozen=True, slots=True)
class KeywordOptions:
    # Anserini's BM25 setting for BEIR; measured better than rank-bm25's defaults on both
    # eval sets (bench/results/retrieval_eval.md). The scoring formula is BM25Okapi's.
    parameters: Bm25Parameters = field(default_factory=lambda: Bm25Parameters(k1=0.9, b=0.4))
    # The title counts this many times (a cheap BM25F): titles name what a document is about.
    title_weight: int = 2
    # Also index adjacent word pairs (`search_pairs`). At 100k chunks the index then holds
    # about 1.6× the memory (bench/results/retrieval_latency.md).
    word_pairs: bool = True
    # Seconds between corpus-version checks; 0 checks before every search.
    check_interval: float = 0.0
    # Answer from the previous index while a rebuild runs (False: wait for it).
    serve_stale: bool = True


class KeywordSearch:
    """BM25 over the stored chunks, kept current with the corpus version."""

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
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bm25")
        self._vocabulary = Vocabulary()
        self._analysed: dict[int, _Analysed] = {}  # by chunk id
        self._snapshot: _Snapshot | None = None
        self._checked_at = float("-inf")
        self._lock = asyncio.Lock()
        self._rebuild: asyncio.Task[bool] | None = None
        self.last_build: BuildStats | None = None

    @property
    def analyzer(self) -> TextAnalyzer:
        return self._analyzer

    def named_documents(self, text: str) -> set[int]:
        """Ids of the documents whose title `text` names (see TitleMentions), as last indexed."""
        return self._snapshot.titles.named_in(text) if self._snapshot else set()

    @property
    def version(self) -> int | None:
        """The corpus version the current index was built from (None before the first)."""
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
        query = self._vocabulary.lookup(terms)

        def score() -> KeywordHits:
            scores = snapshot.index.scores(query)
            allowed = snapshot.allowed(where)
            if allowed is not None:
                scores = np.where(allowed, scores, 0.0)
            matched = scores[scores > 0]
            return KeywordHits(
                top=[(int(snapshot.chunk_ids[i]), s) for i, s in top_positive(scores, limit)],
                matched=len(matched),
                mean=float(matched.mean()) if len(matched) else 0.0,
                spread=float(matched.std()) if len(matched) else 0.0,
            )

        # Not the rebuild thread: a search never waits behind a rebuild.
        return await asyncio.to_thread(score)

    async def search_pairs(
        self, words: Sequence[str], *, limit: int = 10, where: ChunkFilter = NO_FILTER
    ) -> list[tuple[int, float]]:
        """The best (chunk id, BM25 score) pairs by the query's adjacent word pairs, given
        the query's words in order (`AnalysedText.words`); empty without a pair index."""
        snapshot = await self.current()
        if snapshot is None or snapshot.pairs is None or len(words) < 2:
            return []
        query = snapshot.pairs.query(self._vocabulary.known_ids(words))
        if not query:
            return []
        pairs = snapshot.pairs

        def score() -> list[tuple[int, float]]:
            found = pairs.index.top(query, limit=limit, allowed=snapshot.allowed(where))
            return [(int(snapshot.chunk_ids[i]), s) for i, s in found]

        return await asyncio.to_thread(score)

    async def current(self) -> _Snapshot | None:
        """The index to search now, rebuilt first (or in the background) if the corpus moved."""
        now = time.monotonic()
        if self._snapshot is not None and now - self._checked_at < self._options.check_interval:
            return self._snapshot
        self._checked_at = now
        version = await self._corpus.version()
        if self._snapshot is not None and self._snapshot.version == version:
            return self._snapshot
        if self._snapshot is not None and self._options.serve_stale:
            if self._rebuild is None or self._rebuild.done():
                self._rebuild = asyncio.create_task(self.refresh())
                self._rebuild.add_done_callback(_log_failure)
            return self._snapshot
        await self.refresh()
        return self._snapshot

    async def refresh(self) -> bool:
        """Rebuild the index if the corpus version moved; True if it was rebuilt."""
        async with self._lock:
            if self._snapshot is not None and self._snapshot.version == (
                await self._corpus.version()
            ):
                return False
            started = time.perf_counter()
            listing = await self._corpus.listing()
            missing = [
                cid
                for cid, title in zip(listing.chunk_ids.tolist(), listing.titles, strict=True)
                if (seen := self._analysed.get(cid)) is None or seen.title != title
            ]
            texts = await self._corpus.chunk_texts(missing)
            loop = asyncio.get_running_loop()
            self._snapshot = await loop.run_in_executor(self._executor, self._build, listing, texts)
            held = await loop.run_in_executor(self._executor, self._held_bytes, self._snapshot)
            self.last_build = BuildStats(
                version=listing.version,
                chunks=self._snapshot.index.size,
                analysed=len(texts),
                seconds=round(time.perf_counter() - started, 3),
                megabytes=round(held / 2**20, 1),
            )
            log.info("keyword index rebuilt: %s", self.last_build)
            return True

    async def close(self) -> None:
        if self._rebuild is not None and not self._rebuild.done():
            self._rebuild.cancel()
            await asyncio.gather(self._rebuild, return_exceptions=True)
        self._executor.shutdown(wait=False, cancel_futures=True)

    def _build(self, listing: CorpusListing, texts: dict[int, ChunkText]) -> _Snapshot:
        """Runs in the worker thread: analyse new chunks, then build the index."""
        keep = np.ones(len(listing.chunk_ids), dtype=bool)
        analysed: dict[int, _Analysed] = {}
        for position, (cid, title) in enumerate(
            zip(listing.chunk_ids.tolist(), listing.titles, strict=True)
        ):
            entry = self._analysed.get(cid)
            if entry is None or entry.title != title:
                chunk = texts.get(cid)
                if chunk is None:  # deleted since the listing
                    keep[position] = False
                    continue
                entry = self._analyse(title, chunk)
            analysed[cid] = entry
        self._analysed = analysed
        return _snapshot(listing, keep, analysed, len(self._vocabulary), self._options)

    def _held_bytes(self, snapshot: _Snapshot) -> int:
        """Bytes of the index's arrays, the vocabulary and the per-chunk cache."""
        arrays: list[np.ndarray] = [snapshot.index.start, snapshot.index.documents]
        arrays.append(snapshot.index.weights)
        if snapshot.pairs is not None:
            pairs = snapshot.pairs
            arrays += [pairs.keys, pairs.index.start, pairs.index.documents, pairs.index.weights]
        cached = sum(sys.getsizeof(e) + sys.getsizeof(e.sequence) for e in self._analysed.values())
        held = sum(a.nbytes for a in arrays) + cached + sys.getsizeof(self._analysed)
        return held + self._vocabulary.held_bytes()

    def _analyse(self, title: str, chunk: ChunkText) -> _Analysed:
        """What BM25 sees of a chunk: its document's title (`title_weight` times), its
        section path and its text. Word pairs are taken within each of these, not across."""
        fields = [self._analyzer.analyse(text) for text in (title, *chunk.heading_path)]
        fields = [fields[0]] * self._options.title_weight + fields[1:]
        fields.append(self._analyzer.analyse(chunk.text))
        ids = self._vocabulary.ids
        runs = [ids(f.words) for f in fields] + [ids([t]) for f in fields for t in f.identifiers]
        sequence = np.concatenate([np.append(run, BREAK) for run in runs])
        return _Analysed(title, sequence.astype(np.int32))


def _log_failure(task: asyncio.Task[bool]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("keyword index rebuild failed", exc_info=task.exception())


def _snapshot(
    listing: CorpusListing,
    keep: np.ndarray,
    analysed: dict[int, _Analysed],
    vocabulary_size: int,
    options: KeywordOptions,
) -> _Snapshot:
    chunk_ids = listing.chunk_ids[keep]
    sources = [s for s, k in zip(listing.sources, keep, strict=True) if k]
    collections = [c for c, k in zip(listing.collections, keep, strict=True) if k]
    source_names, source_codes = np.unique(np.array(sources, dtype=object), return_inverse=True)
    collection_names, collection_codes = np.unique(
        np.array(collections, dtype=object), return_inverse=True
    )
    sequences = TermSequences.of([analysed[cid].sequence for cid in chunk_ids.tolist()])
    index = Bm25Index.from_sequences(
        sequences, vocabulary_size=vocabulary_size, parameters=options.parameters
    )
    pairs = (
        PairIndex.build(sequences, parameters=options.parameters) if options.word_pairs else None
    )
    return _Snapshot(
        version=listing.version,
        index=index,
        chunk_ids=chunk_ids,
        document_ids=listing.document_ids[keep],
        source_codes=source_codes,
        source_names=tuple(source_names),
        collection_codes=collection_codes,
        collection_names=tuple(collection_names),
        updated_at=listing.updated_at[keep],
        titles=TitleMentions(
            dict(zip(listing.document_ids.tolist(), listing.titles, strict=True)).items()
        ),
        pairs=pairs,
    )
