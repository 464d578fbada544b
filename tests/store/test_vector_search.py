from __future__ import annotations

import asyncpg
import numpy as np
import pytest

from store.database import open_pool
from store.documents import ChunkRecord, DocumentRecord, DocumentRepository
from store.embedding import ModelIdentity
from store.embedding_space import HNSW_INDEX
from store.errors import DatabaseUnavailable
from store.filters import ChunkFilter
from store.pgvector_version import parse_version, supported
from store.vector_search import SEARCH_SQL, VectorSearch, session_settings

DIM = 16


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


async def _store_vectors(pool: asyncpg.Pool, vectors: np.ndarray) -> None:
    repo = DocumentRepository(pool)
    await repo.adopt_model(ModelIdentity("test-random", DIM))
    source_id = await repo.ensure_source(name="random", kind="test")
    for d in range(0, len(vectors), 50):
        chunks = [
            ChunkRecord(i - d, f"chunk {i}", f"h{i}", 0, 7, (), vectors[i])
            for i in range(d, min(d + 50, len(vectors)))
        ]
        doc = DocumentRecord(f"doc{d}", f"Doc {d}", None, "x" * 7, f"c{d}", f"m{d}")
        await repo.replace_document(source_id=source_id, document=doc, chunks=chunks)


async def test_vector_search_returns_the_true_nearest_neighbours(pool: asyncpg.Pool) -> None:
    rng = np.random.default_rng(7)
    vectors = _unit(rng, 500)
    await _store_vectors(pool, vectors)
    query = _unit(rng, 1)[0]
    hits = await VectorSearch(pool, ef_search=100).nearest(query, limit=10)
    exact = np.argsort(-(vectors @ query))[:10]
    assert [h.text for h in hits] == [f"chunk {i}" for i in exact]
    assert np.allclose([h.score for h in hits], (vectors @ query)[exact], atol=1e-5)


async def test_vector_search_uses_the_hnsw_index(pool: asyncpg.Pool) -> None:
    rng = np.random.default_rng(8)
    await _store_vectors(pool, _unit(rng, 3000))
    async with pool.acquire() as conn:
        await conn.execute("ANALYZE chunks")
        plan = await conn.fetch(f"EXPLAIN {SEARCH_SQL}", _unit(rng, 1)[0], 10, None, None, None)
    assert HNSW_INDEX in "\n".join(r[0] for r in plan)


async def test_after_a_statistics_refresh_a_source_filter_still_uses_the_hnsw_index(
    pool: asyncpg.Pool,
) -> None:
    rng = np.random.default_rng(10)
    await _store_vectors(pool, _unit(rng, 3000))
    await DocumentRepository(pool).refresh_statistics()
    plan = await pool.fetch(f"EXPLAIN {SEARCH_SQL}", _unit(rng, 1)[0], 10, ["random"], None, None)
    assert HNSW_INDEX in "\n".join(r[0] for r in plan)


async def test_filtering_by_source_only_returns_that_sources_chunks(pool: asyncpg.Pool) -> None:
    rng = np.random.default_rng(9)
    await _store_vectors(pool, _unit(rng, 100))
    search, query = VectorSearch(pool), _unit(rng, 1)[0]
    assert await search.nearest(query, limit=5, where=ChunkFilter(sources=["elsewhere"])) == []
    assert len(await search.nearest(query, limit=5, where=ChunkFilter(sources=["random"]))) == 5


async def test_an_excluded_collection_is_never_returned_by_either_plan(
    pool: asyncpg.Pool,
) -> None:
    rng = np.random.default_rng(10)
    await _store_vectors(pool, _unit(rng, 100))  # source "random", collection "default"
    search, query = VectorSearch(pool), _unit(rng, 1)[0]
    hidden = ChunkFilter(excluded_collections=["default"])
    assert await search.nearest(query, limit=5, where=hidden) == []
    assert await search.nearest_exact(query, limit=5, where=hidden) == []
    other = ChunkFilter(excluded_collections=["private-help"])
    assert len(await search.nearest(query, limit=5, where=other)) == 5


async def _two_sources(pool: asyncpg.Pool, vectors: np.ndarray, small: int) -> None:
    """The first `small` vectors in source "small", the rest in "big"."""
    repo = DocumentRepository(pool)
    await repo.adopt_model(ModelIdentity("test-random", DIM))
    for name, start, end in (("small", 0, small), ("big", small, len(vectors))):
        source_id = await repo.ensure_source(name=name, kind="test")
        for d in range(start, end, 50):
            chunks = [
                ChunkRecord(i - d, f"chunk {i}", f"h{i}", 0, 7, (), vectors[i])
                for i in range(d, min(d + 50, end))
            ]
            doc = DocumentRecord(f"doc{d}", f"Doc {d}", None, "x" * 7, f"c{d}", f"m{d}")
            await repo.replace_document(source_id=source_id, document=doc, chunks=chunks)
    await repo.refresh_statistics()


async def test_without_iterative_scans_a_selective_filter_still_finds_the_true_neighbours(
    pool: asyncpg.Pool,
) -> None:
    # pgvector 0.5-0.7 has no iterative scan: the same search with the capability off.
    rng = np.random.default_rng(11)
    vectors = _unit(rng, 3000)
    await _two_sources(pool, vectors, small=60)
    search = VectorSearch(pool, ef_search=40, iterative_scan=False)
    for query in _unit(rng, 5):
        where = ChunkFilter(sources=["small"])
        hits = await search.nearest(query, limit=10, where=where)
        exact = np.argsort(-(vectors[:60] @ query))[:10]
        assert [h.text for h in hits] == [f"chunk {i}" for i in exact]
        assert {h.source for h in hits} == {"small"}
        wide = await search.nearest(query, limit=10, where=ChunkFilter(sources=["big"]))
        assert len(wide) == 10 and {h.source for h in wide} == {"big"}


def test_a_pgvector_older_than_0_5_is_refused_and_0_8_enables_iterative_scans() -> None:
    with pytest.raises(DatabaseUnavailable, match=r"pgvector 0\.4\.4, and kb needs 0\.5 or newer"):
        supported(parse_version("0.4.4"))
    assert supported(parse_version("0.7.4")).iterative_scan is False
    assert supported(parse_version("0.8.0")).iterative_scan is True


async def test_a_pools_ef_search_holds_on_every_connection_after_each_release(
    database_url: str,
) -> None:
    pool = await open_pool(database_url, max_size=2, settings=session_settings(5))
    try:
        rng = np.random.default_rng(12)
        await _store_vectors(pool, _unit(rng, 3000))
        await pool.execute("ANALYZE chunks")
        # Without an iterative scan an HNSW scan hands back at most ef_search rows: 5
        # rows for LIMIT 20 show the index scan uses it (the default, 40, gives 20).
        query = _unit(rng, 1)[0]
        assert len(await pool.fetch(SEARCH_SQL, query, 20, None, None, None)) == 5
        for _ in range(3):  # released (RESET ALL) after each round, both connections
            async with pool.acquire() as first, pool.acquire() as second:
                for conn in (first, second):
                    assert await conn.fetchval("SHOW hnsw.ef_search") == "5"
                    await conn.execute("SET hnsw.ef_search = 300")  # undone on release
    finally:
        await pool.close()


async def test_a_search_at_the_pools_ef_search_is_one_statement_with_the_same_hits(
    database_url: str,
) -> None:
    pool = await open_pool(database_url, max_size=1, settings=session_settings(100))
    try:
        rng = np.random.default_rng(13)
        vectors = _unit(rng, 500)
        await _store_vectors(pool, vectors)
        sent: list[str] = []
        async with pool.acquire() as conn:  # the pool's one connection
            conn.add_query_logger(lambda record: sent.append(record.query))
            reset = conn.get_reset_query()
        query = _unit(rng, 1)[0]
        sent.clear()
        hits = await VectorSearch(pool, ef_search=100, pool_ef_search=100).nearest(query, limit=10)
        assert [q for q in sent if not q.startswith(reset)] == [SEARCH_SQL]
        exact = np.argsort(-(vectors @ query))[:10]
        assert [h.text for h in hits] == [f"chunk {i}" for i in exact]
        # Another ef_search than the pool's still sets its own, in a transaction.
        sent.clear()
        other = VectorSearch(pool, ef_search=200, pool_ef_search=100)
        assert await other.nearest(query, limit=10) == hits
        assert "SET LOCAL hnsw.ef_search = 200" in sent
    finally:
        await pool.close()
