"""Hybrid retrieval: keyword (BM25) and vector (pgvector) candidates, fused, then re-ranked.

One query runs the BM25 searches (single terms, and adjacent word pairs) while it embeds
the question and runs the vector search; the candidate lists are fused (z-score fusion by
default: measured better than RRF on both eval sets, see
bench/results/retrieval_eval.md) and scaled to [0, 1]; the best of them are fetched from
Postgres, optionally weighted by recency, and handed to the reranker. `retrieve` (the
`Retriever` protocol) returns hits in that final order with `score` = cosine similarity
to the question, the same meaning DenseRetriever's hits have, so score floors keep
working. `search` returns every stage, for evaluation and "why this answer?".
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, TypeVar

import numpy as np

from agent.retrieval.fusion import (
    FusionOptions,
    RecencyOptions,
    ScoreDistribution,
    asks_about_recent,
    fuse,
    recency_weighted,
)
from agent.retrieval.rerank import Reranker
from agent.retrieval.spelling import QuerySpeller
from store.corpus import CorpusReader
from store.embedding import Embedder
from store.filters import NO_FILTER, ChunkFilter
from store.keyword_search import KeywordHits, KeywordSearch
from store.text_analysis import AnalysedText
from store.vector_search import ChunkHit, VectorSearch

T = TypeVar("T")


# hnsw.ef_search for the vector list: from the recall-vs-exact curve in
# bench/results/retrieval_latency.md, 200 lifts recall@100 from 0.96 to 0.99 (10k real
# chunks) and 0.92 to 0.97 (100k) over ef_search = 100, for under a millisecond.
EF_SEARCH = 200


@dataclass(frozen=True, slots=True)
class HybridOptions:
    # Candidates taken from each list before fusion.
    candidates: int = 100
    fusion: FusionOptions = field(default_factory=lambda: FusionOptions(method="zscore"))
    # z-scores of the BM25 list: over its candidates ("candidates") or over every matching
    # chunk's score ("matches"). With word pairs on, matches lifts SciFact nDCG@10 by
    # 0.005 but, after the title-link rerank, costs HotpotQA 0.001 nDCG@10 and 0.004 Hit@1
    # (bench/results/keyword_scale.txt), so it is not the default.
    keyword_scale: Literal["matches", "candidates"] = "candidates"
    # Weight of the word-pair BM25 list in the fusion (terms and vectors weigh 1 each
    # unless `fusion.weights` says otherwise); 0 leaves it out. 0.2–0.5 all lifted nDCG@10
    # on both eval sets; 0.3 is the default (bench/results/retrieval_eval.md).
    pair_weight: float = 0.3
    # Fused candidates fetched from Postgres (text, metadata, cosine), best first; the rest
    # are dropped before recency and the reranker. The reader takes 5 per question, the
    # cross-encoder scores 30, and the title links lift HotpotQA answers from as far down
    # as the 60s (50 cost HotpotQA 0.004 nDCG@10 after the rerank, 60 cost 0.002, 75
    # nothing); fetching all ~200 cost 30 ms at p95 at 1M chunks
    # (bench/results/keyword_scale_1m_hybrid.md). None fetches every candidate.
    fetch: int | None = 75
    # What the keyword stage (numpy, on a thread of its own) runs beside: "all", the
    # embedding (one torch thread; the two threads contend for the GIL) and the vector
    # search (in Postgres); "vector", only the vector search, once the question is
    # embedded; "off", nothing. At 1M chunks on a quiet 2-core machine, p50/p95: all
    # 35.5/51.7 ms, vector 40.3/53.8, off 41.1/55.8 (bench/results/keyword_scale_1m_hybrid.md).
    overlap: Literal["off", "vector", "all"] = "all"
    # "auto": weight by recency only when the question asks about what is recent.
    recency_mode: Literal["auto", "always", "never"] = "auto"
    recency: RecencyOptions = field(default_factory=RecencyOptions)
    # Respell a query's typos as the pages spell them before searching
    # (agent/retrieval/spelling.py): "float differntial" finds the "float differential".
    spell: bool = True


@dataclass(slots=True)
class HybridResult:
    """Every stage of one search: (chunk id, score) lists, best first, and the final hits."""

    keyword: list[tuple[int, float]]
    vector: list[tuple[int, float]]
    pairs: list[tuple[int, float]]
    fused: list[tuple[int, float]]
    ranked: list[ChunkHit]
    # Cosine similarity to the question of every candidate read from Postgres: the vector
    # hits, and the fused candidates fetched (HybridOptions.fetch).
    similarity: dict[int, float]
    timings_ms: dict[str, float] = field(default_factory=dict)


class HybridRetriever:
    def __init__(
        self,
        *,
        embedder: Embedder,
        vector_search: VectorSearch,
        keyword_search: KeywordSearch,
        corpus: CorpusReader,
        reranker: Reranker | None = None,
        options: HybridOptions | None = None,
        search_filter: ChunkFilter = NO_FILTER,
    ) -> None:
        self._embedder = embedder
        self._vector = vector_search
        self._keyword = keyword_search
        self._corpus = corpus
        self._reranker = reranker
        self._options = options or HybridOptions()
        self._filter = search_filter
        self._speller = (
            QuerySpeller(keyword_search.analyzer, keyword_search) if self._options.spell else None
        )

    async def retrieve(
        self, query: str, *, limit: int = 10, where: ChunkFilter | None = None
    ) -> list[ChunkHit]:
        """The best `limit` chunks, in hybrid order, scored by cosine similarity."""
        result = await self._search(query, now=None, where=where, fetch_at_least=limit)
        return [
            dataclasses.replace(h, score=result.similarity.get(h.chunk_id, 0.0))
            for h in result.ranked[:limit]
        ]

    async def search(
        self, query: str, *, now: datetime | None = None, where: ChunkFilter | None = None
    ) -> HybridResult:
        """Every stage of one search; `where` (default: the retriever's own filter)
        restricts all three lists."""
        return await self._search(query, now=now, where=where, fetch_at_least=0)

    async def _search(
        self, query: str, *, now: datetime | None, where: ChunkFilter | None, fetch_at_least: int
    ) -> HybridResult:
        where = self._filter if where is None else where
        timings: dict[str, float] = {}
        if self._speller is not None:
            # The vocabulary first: before its first read the index knows no word to be
            # missing, and a process's first question (`kb ask`) would go unspelled.
            await self._keyword.current()
            query = self._speller.corrected(query, version=self._keyword.version)
        (found, pairs), query_vector, vector_hits = await self._candidates(query, where, timings)
        keyword = found.top
        vector = [(h.chunk_id, h.score) for h in vector_hits]
        started = time.perf_counter()
        fused = _unit_scaled(self._fuse(found, vector, pairs))
        timings["fusion"] = _ms_since(started)
        fetch = self._options.fetch
        head = fused if fetch is None else fused[: max(fetch, fetch_at_least)]
        hits, similarity = await _timed(
            timings, "fetch", self._materialise(head, vector_hits, query_vector)
        )
        if self._recency_applies(query):
            hits = self._by_recency(hits, now or datetime.now(UTC))
        if self._reranker is not None:
            hits = await _timed(timings, "rerank", self._reranker.rerank(query, hits))
        return HybridResult(keyword, vector, pairs, fused, hits, similarity, timings)

    async def _candidates(
        self, query: str, where: ChunkFilter, timings: dict[str, float]
    ) -> tuple[tuple[KeywordHits, list[tuple[int, float]]], np.ndarray, list[ChunkHit]]:
        """The keyword stage's hits, the question's vector and the vector search's hits,
        the keyword stage run beside what `HybridOptions.overlap` says."""
        analysed = self._keyword.analyzer.analyse(query)

        async def keyword() -> tuple[KeywordHits, list[tuple[int, float]]]:
            # A coroutine function, not one returning `_timed(...)`: that built the search's
            # coroutine at once, and a gather cancelled before `_timed` started (the agent's
            # `drop_early` cancelling a search no step took) left it never awaited, a
            # RuntimeWarning at its collection.
            return await _timed(timings, "keyword", self._keyword_candidates(analysed, where))

        if self._options.overlap == "all":
            found, (vector, hits) = await asyncio.gather(
                keyword(), self._vector_candidates(query, where, timings)
            )
        elif self._options.overlap == "vector":
            vector = await self._embedded(query, timings)
            found, hits = await asyncio.gather(keyword(), self._nearest(vector, where, timings))
        else:
            found = await keyword()
            vector, hits = await self._vector_candidates(query, where, timings)
        return found, vector, hits

    async def _keyword_candidates(
        self, query: AnalysedText, where: ChunkFilter
    ) -> tuple[KeywordHits, list[tuple[int, float]]]:
        limit = self._options.candidates
        found = await self._keyword.search_scored(query.terms, limit=limit, where=where)
        pairs = []
        if self._options.pair_weight > 0:
            pairs = await self._keyword.search_pairs(query.words, limit=limit, where=where)
        return found, pairs

    def _fuse(
        self,
        found: KeywordHits,
        vector: list[tuple[int, float]],
        pairs: list[tuple[int, float]],
    ) -> list[tuple[int, float]]:
        """Terms, vectors and word pairs, fused by the configured method (an empty list,
        such as the pairs of a one-word question, adds nothing to any candidate)."""
        matches = None
        if self._options.keyword_scale == "matches" and found.matched:
            matches = ScoreDistribution(mean=found.mean, spread=found.spread)
        weights = (*(self._options.fusion.weights or (1.0, 1.0)), self._options.pair_weight)
        return fuse(
            [found.top, vector, pairs],
            dataclasses.replace(self._options.fusion, weights=weights),
            distributions=[matches, None, None],
        )

    async def _vector_candidates(
        self, query: str, where: ChunkFilter, timings: dict[str, float]
    ) -> tuple[np.ndarray, list[ChunkHit]]:
        query_vector = await self._embedded(query, timings)
        return query_vector, await self._nearest(query_vector, where, timings)

    async def _embedded(self, query: str, timings: dict[str, float]) -> np.ndarray:
        return (await _timed(timings, "embed", self._embedder.embed_batch([query])))[0]

    async def _nearest(
        self, query_vector: np.ndarray, where: ChunkFilter, timings: dict[str, float]
    ) -> list[ChunkHit]:
        limit = self._options.candidates
        return await _timed(
            timings, "vector", self._vector.nearest(query_vector, limit=limit, where=where)
        )

    async def _materialise(
        self, fused: list[tuple[int, float]], known: list[ChunkHit], query_vector: np.ndarray
    ) -> tuple[list[ChunkHit], dict[int, float]]:
        """ChunkHits for these fused candidates (fused scores), and their cosines."""
        by_id = {h.chunk_id: h for h in known}
        similarity = {h.chunk_id: h.score for h in known}
        missing = [(cid, 0.0) for cid, _ in fused if cid not in by_id]
        for hit in await self._corpus.hits(missing, similar_to=query_vector):
            by_id[hit.chunk_id] = hit
            similarity[hit.chunk_id] = hit.score
        hits = [
            dataclasses.replace(by_id[cid], score=score) for cid, score in fused if cid in by_id
        ]
        return hits, similarity

    def _recency_applies(self, query: str) -> bool:
        mode = self._options.recency_mode
        return mode == "always" or (mode == "auto" and asks_about_recent(query))

    def _by_recency(self, hits: list[ChunkHit], now: datetime) -> list[ChunkHit]:
        weighted = recency_weighted(
            [(h.chunk_id, h.score) for h in hits],
            {h.chunk_id: h.updated_at for h in hits},
            now=now,
            options=self._options.recency,
        )
        by_id = {h.chunk_id: h for h in hits}
        return [dataclasses.replace(by_id[cid], score=score) for cid, score in weighted]


def _unit_scaled(fused: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """Scores mapped onto [0, 1] (order kept), so boosts and decays mean the same everywhere."""
    if not fused:
        return []
    high, low = fused[0][1], fused[-1][1]
    span = high - low
    return [(key, (score - low) / span if span else 1.0) for key, score in fused]


async def _timed(timings: dict[str, float], name: str, work: Awaitable[T]) -> T:
    started = time.perf_counter()
    result = await work
    timings[name] = _ms_since(started)
    return result


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
