"""Hybrid retrieval end to end: indexed documents, keyword + vector, fused, filtered, re-ranked."""

from __future__ import annotations

import asyncio
import gc
import inspect
import warnings
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import asyncpg
import pytest

from agent.retrieval.fusion import FusionOptions, ScoreDistribution, fuse
from agent.retrieval.hybrid import HybridOptions, HybridRetriever
from agent.retrieval.rerank import TitleLinkReranker
from jobs.chunking import ChunkingPolicy
from jobs.documents import SourceDocument, StaticSource
from jobs.indexing import Indexer, IndexOptions
from store.corpus import CorpusReader
from store.documents import DocumentRepository
from store.embedding import SentenceTransformerEmbedder
from store.filters import ChunkFilter
from store.keyword_search import KeywordSearch
from store.vector_search import VectorSearch


def doc(uri: str, title: str, text: str, updated: datetime | None = None) -> SourceDocument:
    return SourceDocument(uri=uri, title=title, url=None, text=text, updated_at=updated)


HANDBOOK = [
    doc("leave.md", "Leave", "To request annual leave, submit it in HRLinks two weeks ahead."),
    doc("travel.md", "Travel", "Book flights and hotels through the travel agency; keep receipts."),
    doc(
        "laptops.md",
        "Laptops",
        "New staff get a laptop from the IT desk on day one. See Deploy failures for outages.",
    ),
]
RUNBOOKS = [
    doc(
        "deploy.md",
        "Deploy failures",
        "A deploy that stops with error_code_42 needs the cache warmed first.",
        datetime(2024, 1, 10, tzinfo=UTC),
    ),
    doc(
        "deploy-2026.md",
        "Deploy failures (2026)",
        "A deploy that stops with error_code_42 now retries by itself.",
        datetime(2026, 6, 1, tzinfo=UTC),
    ),
]


@pytest.fixture
async def parts(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[tuple[CorpusReader, KeywordSearch]]:
    indexer = Indexer(
        repository=DocumentRepository(pool),
        embedder=embedder,
        policy=ChunkingPolicy(min_words=20, max_words=60),
    )
    await indexer.run(StaticSource("handbook", HANDBOOK))
    await indexer.run(
        StaticSource("runbooks", RUNBOOKS), options=IndexOptions(collection="engineering")
    )
    corpus = CorpusReader(pool)
    keyword = KeywordSearch(corpus)
    yield corpus, keyword
    await keyword.close()


def retriever(
    pool: asyncpg.Pool,
    embedder: SentenceTransformerEmbedder,
    parts: tuple[CorpusReader, KeywordSearch],
    **kwargs: object,
) -> HybridRetriever:
    corpus, keyword = parts
    return HybridRetriever(
        embedder=embedder,
        vector_search=VectorSearch(pool),
        keyword_search=keyword,
        corpus=corpus,
        **kwargs,
    )


async def test_an_identifier_and_a_paraphrase_are_both_found(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, parts: tuple
) -> None:
    hybrid = retriever(pool, embedder, parts)
    assert (await hybrid.retrieve("error_code_42", limit=2))[0].source == "runbooks"
    assert (await hybrid.retrieve("How do I take days off work?", limit=1))[0].uri == "leave.md"


async def test_retrieved_hits_carry_their_cosine_similarity(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, parts: tuple
) -> None:
    hits = await retriever(pool, embedder, parts).retrieve("booking hotels", limit=3)
    query = (await embedder.embed_batch(["booking hotels"]))[0]
    texts = [h.text for h in hits]  # chunks without headings embed their own text
    expected = (await embedder.embed_batch(texts)) @ query
    assert [h.score for h in hits] == pytest.approx(expected.tolist(), abs=1e-4)


async def test_search_reports_every_stage(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, parts: tuple
) -> None:
    result = await retriever(pool, embedder, parts).search("error_code_42 cache")
    assert result.keyword and result.vector and result.fused
    assert {h.chunk_id for h in result.ranked} == {cid for cid, _ in result.fused}
    assert result.fused[0][1] == 1.0 and all(0 <= s <= 1 for _, s in result.fused)
    assert {"keyword", "embed", "vector", "fusion", "fetch"} <= set(result.timings_ms)


async def test_keyword_scores_can_be_scaled_by_every_match(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, parts: tuple
) -> None:
    query = "staff travel leave policy"
    # Two candidates per list, so the keyword list is a part of the matches.
    plain = await retriever(pool, embedder, parts, options=HybridOptions(candidates=2)).search(
        query
    )
    scaled = await retriever(
        pool, embedder, parts, options=HybridOptions(candidates=2, keyword_scale="matches")
    ).search(query)
    _, keyword = parts
    found = await keyword.search_scored(keyword.analyzer.terms(query), limit=2)
    assert found.matched > len(found.top) == 2
    matches = ScoreDistribution(found.mean, found.spread)
    expected = fuse(
        [scaled.keyword, scaled.vector], FusionOptions(method="zscore"),
        distributions=[matches, None],
    )  # fmt: skip
    high, low = expected[0][1], expected[-1][1]
    assert [c for c, _ in scaled.fused] == [c for c, _ in expected]
    assert [s for _, s in scaled.fused] == pytest.approx(
        [(s - low) / (high - low) for _, s in expected]
    )
    assert plain.keyword == scaled.keyword and plain.fused != scaled.fused


async def _uris(parts: tuple, ranked: list[tuple[int, float]]) -> list[str]:
    corpus, _ = parts
    return [h.uri for h in await corpus.hits(ranked)]


async def test_word_pairs_join_the_fusion_at_their_weight(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, parts: tuple
) -> None:
    query = "deploy stops with error_code_42, cache warmed"
    result = await retriever(pool, embedder, parts).search(query)
    # Both runbooks say "deploy that stops with error_code_42"; one adds "cache warmed".
    assert [uri for uri in await _uris(parts, result.pairs)] == ["deploy.md", "deploy-2026.md"]
    expected = fuse(
        [result.keyword, result.vector, result.pairs],
        FusionOptions(method="zscore", weights=(1, 1, HybridOptions().pair_weight)),
    )
    assert [c for c, _ in result.fused] == [c for c, _ in expected]
    without = await retriever(pool, embedder, parts, options=HybridOptions(pair_weight=0)).search(
        query
    )
    assert without.pairs == [] and without.keyword == result.keyword
    two_lists = fuse([without.keyword, without.vector], FusionOptions(method="zscore"))
    assert [c for c, _ in without.fused] == [c for c, _ in two_lists]
    assert [s for _, s in without.fused] != [s for _, s in result.fused]


async def test_filters_apply_to_every_list(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, parts: tuple
) -> None:
    only_handbook = retriever(
        pool, embedder, parts, search_filter=ChunkFilter(sources=("handbook",))
    )
    hits = await only_handbook.retrieve("error_code_42 deploy failures", limit=10)
    assert hits and {h.source for h in hits} == {"handbook"}
    # "Deploy failures" titles both runbooks; in the handbook only laptops.md names it.
    assert await _uris(parts, (await only_handbook.search("deploy failures")).pairs) == [
        "laptops.md"
    ]
    recent = retriever(
        pool,
        embedder,
        parts,
        search_filter=ChunkFilter(
            collections=("engineering",), updated_after=datetime(2025, 1, 1, tzinfo=UTC)
        ),
    )
    assert [h.uri for h in await recent.retrieve("error_code_42", limit=5)] == ["deploy-2026.md"]


async def test_a_question_about_what_is_recent_prefers_the_newer_document(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, parts: tuple
) -> None:
    hybrid = retriever(pool, embedder, parts)
    now = datetime(2026, 7, 1, tzinfo=UTC)
    plain = await hybrid.search("deploy stops with error_code_42 cache", now=now)
    assert plain.ranked[0].uri == "deploy.md"
    recent = await hybrid.search("latest: deploy stops with error_code_42 cache", now=now)
    assert recent.ranked[0].uri == "deploy-2026.md"


async def test_title_links_lift_the_documents_a_top_hit_names(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, parts: tuple
) -> None:
    _, keyword = parts
    question = "Who hands out a laptop on the first day?"
    linked = await retriever(
        pool, embedder, parts, reranker=TitleLinkReranker(titles=keyword)
    ).search(question)
    plain = await retriever(pool, embedder, parts).search(question)
    assert linked.ranked[0].uri == plain.ranked[0].uri == "laptops.md"

    def score(result: object, uri: str) -> float:
        return next(h.score for h in result.ranked if h.uri == uri)  # type: ignore[attr-defined]

    # laptops.md names "Deploy failures", the title of both runbook pages.
    for uri in ("deploy.md", "deploy-2026.md"):
        assert score(linked, uri) > score(plain, uri)
    assert score(linked, "travel.md") == score(plain, "travel.md")


async def test_candidates_per_list_are_bounded(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, parts: tuple
) -> None:
    result = await retriever(pool, embedder, parts, options=HybridOptions(candidates=2)).search(
        "deploy travel leave laptop"
    )
    assert len(result.keyword) <= 2 and len(result.vector) <= 2


async def test_vector_search_honours_the_date_range_and_agrees_with_the_exact_scan(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, parts: tuple
) -> None:
    search = VectorSearch(pool)
    query = (await embedder.embed_batch(["deploy error"]))[0]
    approximate = await search.nearest(query, limit=5)
    exact = await search.nearest_exact(query, limit=5)
    assert [h.chunk_id for h in approximate] == [h.chunk_id for h in exact]
    assert all(h.updated_at is not None for h in approximate)
    before_2025 = await search.nearest(
        query, limit=5, where=ChunkFilter(updated_before=datetime(2025, 1, 1, tzinfo=UTC))
    )
    assert [h.uri for h in before_2025] == ["deploy.md"]


async def test_only_the_best_fused_candidates_are_fetched(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, parts: tuple
) -> None:
    query = "deploy travel leave laptop"
    everything = await retriever(pool, embedder, parts, options=HybridOptions(fetch=None)).search(
        query
    )
    assert len(everything.fused) >= 4
    head = retriever(pool, embedder, parts, options=HybridOptions(fetch=2))
    fetched = await head.search(query)
    assert fetched.fused == everything.fused
    assert [h.chunk_id for h in fetched.ranked] == [c for c, _ in everything.fused[:2]]
    # Asked for more hits than it fetches, it fetches as many as asked for.
    hits = await head.retrieve(query, limit=4)
    assert [h.chunk_id for h in hits] == [h.chunk_id for h in everything.ranked[:4]]


async def test_the_keyword_stage_finds_the_same_beside_the_vector_stage_or_before_it(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, parts: tuple
) -> None:
    results = {}
    for overlap in ("off", "vector", "all"):
        hybrid = retriever(pool, embedder, parts, options=HybridOptions(overlap=overlap))
        for query in ("deploy stops with error_code_42", "How do I take days off work?"):
            result = await hybrid.search(query)
            assert {"keyword", "embed", "vector"} <= set(result.timings_ms)
            ids = [[c for c, _ in stage] for stage in (result.vector, result.fused)]
            results.setdefault(overlap, []).append((result.keyword, result.pairs, ids))
    assert results["off"] == results["vector"] == results["all"]


async def test_a_search_cancelled_as_its_stages_start_leaves_no_coroutine_unawaited(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, parts: tuple
) -> None:
    """The agent cancels an early search no step took (`SearchDriver.drop_early`). Cancelled
    just after the keyword and vector stages were gathered, before either ran, the search
    must not leave a coroutine it built never awaited (a RuntimeWarning at collection)."""
    hybrid = retriever(pool, embedder, parts, options=HybridOptions(overlap="all"))
    await hybrid.search("warm up")  # the keyword index and the speller read once

    def gathered_unstarted() -> bool:
        return any(
            inspect.getcoroutinestate(t.get_coro()) == inspect.CORO_CREATED
            and t.get_coro().__qualname__ == "HybridRetriever._vector_candidates"
            for t in asyncio.all_tasks()
        )

    caught = 0
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(20):
            search = asyncio.create_task(hybrid.search("How do I take days off work?"))
            for _ in range(1000):
                await asyncio.sleep(0)
                if search.done() or gathered_unstarted():
                    break
            if gathered_unstarted():
                caught += 1
                search.cancel()
            await asyncio.wait([search])
        gc.collect()
    assert caught > 0  # the cancel did land between the gather and its stages' start
    assert [str(w.message) for w in seen if w.category is RuntimeWarning] == []


async def test_a_typo_is_searched_as_the_pages_spell_it(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, parts: tuple
) -> None:
    """'reciepts' is no word any page has, so BM25 finds nothing by it; respelled as the
    index's "receipts" (one swap away), its keyword list holds the travel page's chunk."""
    _, keyword = parts
    await keyword.refresh()
    travel = [h.chunk_id for h in await keyword.search("receipts", limit=1)]
    spelled = await retriever(pool, embedder, parts).search("reciepts")
    as_written = await retriever(pool, embedder, parts, options=HybridOptions(spell=False)).search(
        "reciepts"
    )
    assert travel and [c for c, _ in spelled.keyword] == travel
    assert as_written.keyword == []


async def test_the_first_search_of_a_process_respells_too(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, parts: tuple
) -> None:
    """A `kb ask` searches once, before its keyword index was ever read: the speller must
    not take that empty index's "nothing is known to be missing" for every word known."""
    _, keyword = parts
    assert keyword.version is None  # never read: this search is the process's first
    spelled = await retriever(pool, embedder, parts).search("reciepts")
    receipts = [h.chunk_id for h in await keyword.search("receipts", limit=1)]
    assert receipts and [c for c, _ in spelled.keyword] == receipts
