"""Keyword search: BM25 over chunk text (with document title and heading path), in memory.

Scoring is rank-bm25's `BM25Okapi` exactly (k1, b, and negative idfs replaced by
epsilon × the mean idf), computed eagerly: every (term, chunk) weight is worked out when
the index is built and stored by term, so a query only adds up the postings of its own
terms. That is what bm25s does too; doing it here keeps rank-bm25's idf (bm25s has no
epsilon floor) and lets a filter mask apply before the top-k cut. At 100k chunks a query
takes milliseconds where rank-bm25 takes ~150 ms (bench/retrieval_latency.py).

Each process keeps its own index. Before a search, the corpus version in Postgres is
compared with the index's (every reindex bumps it); when it moved, the index is rebuilt
in a worker thread, re-analysing only chunks it has not seen. While a rebuild runs,
searches are answered from the previous index.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from store.corpus import ChunkText, CorpusListing, CorpusReader
from store.filters import NO_FILTER, ChunkFilter
from store.text_analysis import TextAnalyzer, TitleMentions
from store.vector_search import ChunkHit

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Bm25Parameters:
    """rank-bm25's BM25Okapi defaults."""

    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25


class Vocabulary:
    """Term → id, growing as new terms are seen (ids are never reused)."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def encode(self, terms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(term ids, counts) of a document, one entry per distinct term."""
        counts = Counter(terms)
        ids = np.fromiter(
            (self._ids.setdefault(t, len(self._ids)) for t in counts),
            dtype=np.int32,
            count=len(counts),
        )
        return ids, np.fromiter(counts.values(), dtype=np.float32, count=len(counts))

    def lookup(self, terms: Sequence[str]) -> dict[int, int]:
        """Known term id → how often the query repeats it; unknown terms score nothing."""
        found: dict[int, int] = {}
        for term in terms:
            term_id = self._ids.get(term)
            if term_id is not None:
                found[term_id] = found.get(term_id, 0) + 1
        return found


@dataclass(frozen=True, slots=True)
class Bm25Index:
    """Eager BM25 weights stored by term: postings of term t are [start[t], start[t + 1])."""

    size: int
    start: np.ndarray  # int64, one more than the vocabulary size
    documents: np.ndarray  # int32 document positions
    weights: np.ndarray  # float32 BM25 weight of the term in that document

    @classmethod
    def build(
        cls,
        encoded: Sequence[tuple[np.ndarray, np.ndarray]],
        *,
        vocabulary_size: int,
        parameters: Bm25Parameters | None = None,
    ) -> Bm25Index:
        """Index documents given as (term ids, counts), e.g. from `Vocabulary.encode`."""
        p = parameters or Bm25Parameters()
        n = len(encoded)
        terms = _concat([ids for ids, _ in encoded], np.int32)
        tf = _concat([counts for _, counts in encoded], np.float32)
        distinct = np.fromiter((len(ids) for ids, _ in encoded), dtype=np.int64, count=n)
        lengths = np.fromiter((counts.sum() for _, counts in encoded), np.float64, count=n)
        owner = np.repeat(np.arange(n, dtype=np.int32), distinct)
        df = np.bincount(terms, minlength=vocabulary_size)
        idf = _okapi_idf(df, n, p.epsilon)
        average = lengths.sum() / n if n else 1.0
        norm = p.k1 * (1 - p.b + p.b * lengths / (average or 1.0))
        weights = idf[terms] * tf * (p.k1 + 1) / (tf + norm[owner])
        order = np.argsort(terms, kind="stable")
        start = np.zeros(vocabulary_size + 1, dtype=np.int64)
        np.cumsum(df, out=start[1:])
        return cls(n, start, owner[order], weights[order].astype(np.float32))

    def scores(self, query: dict[int, int]) -> np.ndarray:
        """BM25 score of every document for a query given as term id → repeats."""
        spans = [
            (self.start[t], self.start[t + 1], repeats)
            for t, repeats in query.items()
            if t + 1 < len(self.start)
        ]
        if not spans:
            return np.zeros(self.size)
        docs = np.concatenate([self.documents[a:b] for a, b, _ in spans])
        weights = np.concatenate([self.weights[a:b] * r for a, b, r in spans])
        return np.bincount(docs, weights=weights, minlength=self.size)

    def top(
        self, query: dict[int, int], *, limit: int, allowed: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """The best (document position, score) pairs with a positive score, best first."""
        scores = self.scores(query)
        if allowed is not None:
            scores = np.where(allowed, scores, 0.0)
        return top_positive(scores, limit)


def top_positive(scores: np.ndarray, limit: int) -> list[tuple[int, float]]:
    """Positions of the `limit` highest positive scores, ties broken by position."""
    candidates = np.flatnonzero(scores > 0)
    if len(candidates) > limit:
        cut = np.argpartition(-scores[candidates], limit - 1)[:limit]
        candidates = candidates[cut]
    order = np.lexsort((candidates, -scores[candidates]))
    return [(int(candidates[i]), float(scores[candidates[i]])) for i in order]


def _okapi_idf(df: np.ndarray, n: int, epsilon: float) -> np.ndarray:
    """rank-bm25's idf: log((N - df + .5) / (df + .5)), negatives → epsilon × mean idf."""
    present = df > 0
    idf = np.zeros(len(df), dtype=np.float64)
    idf[present] = np.log(n - df[present] + 0.5) - np.log(df[present] + 0.5)
    if present.any():
        floor = epsilon * idf[present].mean()
        idf[present & (idf < 0)] = floor
    return idf


def _concat(parts: Sequence[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)


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
class BuildStats:
    """What the last rebuild did: how many chunks it indexed and how many it had to analyse."""

    version: int
    chunks: int
    analysed: int
    seconds: float


@dataclass(frozen=True, slots=True)
class KeywordOptions:
    # Anserini's BM25 setting for BEIR; measured better than rank-bm25's defaults on both
    # eval sets (bench/results/retrieval_eval.md). The scoring formula is BM25Okapi's.
    parameters: Bm25Parameters = field(default_factory=lambda: Bm25Parameters(k1=0.9, b=0.4))
    # The title counts this many times (a cheap BM25F): titles name what a document is about.
    title_weight: int = 2
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
        # chunk id → (title it was analysed with, term ids, counts)
        self._analysed: dict[int, tuple[str, np.ndarray, np.ndarray]] = {}
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
                if self._analysed.get(cid, (None,))[0] != title
            ]
            texts = await self._corpus.chunk_texts(missing)
            loop = asyncio.get_running_loop()
            self._snapshot = await loop.run_in_executor(self._executor, self._build, listing, texts)
            self.last_build = BuildStats(
                version=listing.version,
                chunks=self._snapshot.index.size,
                analysed=len(texts),
                seconds=round(time.perf_counter() - started, 3),
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
        analysed: dict[int, tuple[str, np.ndarray, np.ndarray]] = {}
        for position, (cid, title) in enumerate(
            zip(listing.chunk_ids.tolist(), listing.titles, strict=True)
        ):
            entry = self._analysed.get(cid)
            if entry is None or entry[0] != title:
                chunk = texts.get(cid)
                if chunk is None:  # deleted since the listing
                    keep[position] = False
                    continue
                entry = (title, *self._vocabulary.encode(self._terms(title, chunk)))
            analysed[cid] = entry
        self._analysed = analysed
        return _snapshot(listing, keep, analysed, len(self._vocabulary), self._options.parameters)

    def _terms(self, title: str, chunk: ChunkText) -> list[str]:
        """What BM25 sees of a chunk: its document's title, its section path, its text."""
        titles = [title] * self._options.title_weight
        return self._analyzer.terms("\n".join((*titles, *chunk.heading_path, chunk.text)))


def _log_failure(task: asyncio.Task[bool]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("keyword index rebuild failed", exc_info=task.exception())


def _snapshot(
    listing: CorpusListing,
    keep: np.ndarray,
    analysed: dict[int, tuple[str, np.ndarray, np.ndarray]],
    vocabulary_size: int,
    parameters: Bm25Parameters,
) -> _Snapshot:
    chunk_ids = listing.chunk_ids[keep]
    sources = [s for s, k in zip(listing.sources, keep, strict=True) if k]
    collections = [c for c, k in zip(listing.collections, keep, strict=True) if k]
    source_names, source_codes = np.unique(np.array(sources, dtype=object), return_inverse=True)
    collection_names, collection_codes = np.unique(
        np.array(collections, dtype=object), return_inverse=True
    )
    index = Bm25Index.build(
        [analysed[cid][1:] for cid in chunk_ids.tolist()],
        vocabulary_size=vocabulary_size,
        parameters=parameters,
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
    )
