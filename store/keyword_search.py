"""Keyword search: BM25 over chunk text (with document title and heading path), in memory.

Scoring is rank-bm25's `BM25Okapi` exactly (k1, b, and negative idfs replaced by
epsilon × the mean idf), computed eagerly: every (term, chunk) weight is worked out when
the index is built and stored by term, so a query only adds up the postings of its own
terms. That is what bm25s does too; doing it here keeps rank-bm25's idf (bm25s has no
epsilon floor) and lets a filter mask apply before the top-k cut. At 100k chunks a query
takes milliseconds where rank-bm25 takes ~150 ms (bench/retrieval_latency.py).

A second BM25 index counts adjacent word pairs ("sick leave"): a chunk that has the
question's words next to each other, as a phrase, scores there too. Pairs are int64 keys
made of the two words' ids, so the index keeps no string per pair (a corpus has tens of
distinct pairs per chunk). Each chunk is kept as one int32 array of its term ids in
reading order, from which both indexes are rebuilt without analysing text again.

Each process keeps its own index. Before a search, the corpus version in Postgres is
compared with the index's (every reindex bumps it); when it moved, the index is rebuilt
in a worker thread, re-analysing only chunks it has not seen. While a rebuild runs,
searches are answered from the previous index.
"""

from __future__ import annotations

import asyncio
import logging
import sys
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

    def held_bytes(self) -> int:
        """Bytes of the term → id map: the dict, its strings and its ints."""
        entries = sum(sys.getsizeof(t) + sys.getsizeof(i) for t, i in self._ids.items())
        return sys.getsizeof(self._ids) + entries

    def encode(self, terms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(term ids, counts) of a document, one entry per distinct term."""
        counts = Counter(terms)
        ids = np.fromiter(
            (self._ids.setdefault(t, len(self._ids)) for t in counts),
            dtype=np.int32,
            count=len(counts),
        )
        return ids, np.fromiter(counts.values(), dtype=np.float32, count=len(counts))

    def ids(self, terms: Sequence[str]) -> np.ndarray:
        """The id of each term, in order (new terms get new ids)."""
        ids = self._ids
        return np.fromiter(
            (ids.setdefault(t, len(ids)) for t in terms), dtype=np.int64, count=len(terms)
        )

    def known_ids(self, terms: Sequence[str]) -> np.ndarray:
        """The id of each term, in order; -1 for a term never seen."""
        return np.fromiter((self._ids.get(t, -1) for t in terms), dtype=np.int64, count=len(terms))

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
        n = len(encoded)
        terms = _concat([ids for ids, _ in encoded], np.int64)
        tf = _concat([counts for _, counts in encoded], np.float32)
        distinct = np.fromiter((len(ids) for ids, _ in encoded), dtype=np.int64, count=n)
        owner = np.repeat(np.arange(n, dtype=np.int64), distinct)
        order = np.lexsort((owner, terms))
        return cls.from_sorted_postings(
            terms[order],
            owner[order],
            tf[order],
            size=n,
            vocabulary_size=vocabulary_size,
            parameters=parameters,
        )

    @classmethod
    def from_sequences(
        cls,
        sequences: TermSequences,
        *,
        vocabulary_size: int,
        parameters: Bm25Parameters | None = None,
    ) -> Bm25Index:
        """Index documents given as term sequences (order and BREAKs do not matter here)."""
        present = sequences.terms != BREAK
        term, document, tf = _grouped(
            sequences.terms[present], sequences.owner[present], sequences.size
        )
        return cls.from_sorted_postings(
            term,
            document,
            tf,
            size=sequences.size,
            vocabulary_size=vocabulary_size,
            parameters=parameters,
        )

    @classmethod
    def from_sorted_postings(
        cls,
        terms: np.ndarray,
        documents: np.ndarray,
        tf: np.ndarray,
        *,
        size: int,
        vocabulary_size: int,
        parameters: Bm25Parameters | None = None,
    ) -> Bm25Index:
        """Index (term, document, tf) postings sorted by term, then document."""
        p = parameters or Bm25Parameters()
        tf = tf.astype(np.float64)
        lengths = np.bincount(documents, weights=tf, minlength=size)
        df = np.bincount(terms, minlength=vocabulary_size)
        idf = _okapi_idf(df, size, p.epsilon)
        average = lengths.sum() / size if size else 1.0
        norm = p.k1 * (1 - p.b + p.b * lengths / (average or 1.0))
        weights = idf[terms] * tf * (p.k1 + 1) / (tf + norm[documents])
        start = np.zeros(vocabulary_size + 1, dtype=np.int64)
        np.cumsum(df, out=start[1:])
        return cls(size, start, documents.astype(np.int32), weights.astype(np.float32))

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


BREAK = -1  # in a term sequence: between runs that no word pair spans


@dataclass(frozen=True, slots=True)
class TermSequences:
    """Documents' term ids in reading order, flat: `terms[i]` belongs to document
    `owner[i]`. BREAK separates runs (title, heading, text, each identifier) so that no
    word pair spans two of them."""

    terms: np.ndarray  # int32
    owner: np.ndarray  # int32
    size: int

    @classmethod
    def of(cls, sequences: Sequence[np.ndarray]) -> TermSequences:
        lengths = np.fromiter((len(s) for s in sequences), np.int64, count=len(sequences))
        owner = np.repeat(np.arange(len(sequences), dtype=np.int32), lengths)
        return cls(_concat(sequences, np.int32), owner, len(sequences))


def _grouped(
    major: np.ndarray, minor: np.ndarray, minor_size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (major, minor) pairs, sorted by major then minor, and how often each
    occurs: one sort of packed int64 keys, or a two-key sort when they would overflow."""
    major, minor = major.astype(np.int64), minor.astype(np.int64)
    if not len(major):
        return major, minor, np.zeros(0, np.float32)
    if int(major.max()) < np.iinfo(np.int64).max // max(minor_size, 1) - 1:
        keys, counts = np.unique(major * minor_size + minor, return_counts=True)
        return keys // minor_size, keys % minor_size, counts.astype(np.float32)
    order = np.lexsort((minor, major))
    major, minor = major[order], minor[order]
    first = np.flatnonzero(np.r_[True, (major[1:] != major[:-1]) | (minor[1:] != minor[:-1])])
    counts = np.diff(np.r_[first, len(major)]).astype(np.float32)
    return major[first], minor[first], counts


@dataclass(frozen=True, slots=True)
class PairIndex:
    """BM25 over adjacent word pairs. A pair (a, b) of word ids has the key a × width + b;
    its term id is the key's position in the sorted `keys`."""

    keys: np.ndarray  # int64, sorted, distinct
    width: int  # one more than the largest word id indexed
    index: Bm25Index

    @classmethod
    def build(
        cls, sequences: TermSequences, *, parameters: Bm25Parameters | None = None
    ) -> PairIndex:
        t, owner = sequences.terms.astype(np.int64), sequences.owner
        width = int(t.max()) + 1 if len(t) else 1
        adjacent = (t[:-1] != BREAK) & (t[1:] != BREAK) & (owner[:-1] == owner[1:])
        keys = (t[:-1] * width + t[1:])[adjacent]
        key, document, tf = _grouped(keys, owner[:-1][adjacent], sequences.size)
        first = np.r_[True, key[1:] != key[:-1]] if len(key) else np.zeros(0, bool)
        index = Bm25Index.from_sorted_postings(
            np.cumsum(first) - 1,
            document,
            tf,
            size=sequences.size,
            vocabulary_size=int(first.sum()),
            parameters=parameters,
        )
        return cls(key[first], width, index)

    def query(self, word_ids: np.ndarray) -> dict[int, int]:
        """Pair term id → how often the query has that pair, given the query's word ids in
        order (-1 for a word the vocabulary does not know)."""
        ids = word_ids.astype(np.int64)
        known = (ids[:-1] >= 0) & (ids[1:] >= 0) & (ids[:-1] < self.width) & (ids[1:] < self.width)
        keys = (ids[:-1] * self.width + ids[1:])[known]
        if not len(self.keys) or not len(keys):
            return {}
        positions = np.searchsorted(self.keys, keys).clip(max=len(self.keys) - 1)
        found = positions[self.keys[positions] == keys]
        return dict(Counter(found.tolist()))


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
