from __future__ import annotations

import asyncpg
import numpy as np

from store.documents import ChunkRecord, DocumentRecord, DocumentRepository
from store.embedding import ModelIdentity
from store.embedding_space import HNSW_INDEX
from store.filters import ChunkFilter
from store.vector_search import SEARCH_SQL, VectorSearch

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
        plan = await conn.fetch(f"EXPLAIN {SEARCH_SQL}", _unit(rng, 1)[0], 10, None, None)
    assert HNSW_INDEX in "\n".join(r[0] for r in plan)


async def test_after_a_statistics_refresh_a_source_filter_still_uses_the_hnsw_index(
    pool: asyncpg.Pool,
) -> None:
    rng = np.random.default_rng(10)
    await _store_vectors(pool, _unit(rng, 3000))
    await DocumentRepository(pool).refresh_statistics()
    plan = await pool.fetch(f"EXPLAIN {SEARCH_SQL}", _unit(rng, 1)[0], 10, ["random"], None)
    assert HNSW_INDEX in "\n".join(r[0] for r in plan)


async def test_filtering_by_source_only_returns_that_sources_chunks(pool: asyncpg.Pool) -> None:
    rng = np.random.default_rng(9)
    await _store_vectors(pool, _unit(rng, 100))
    search, query = VectorSearch(pool), _unit(rng, 1)[0]
    assert await search.nearest(query, limit=5, where=ChunkFilter(sources=["elsewhere"])) == []
    assert len(await search.nearest(query, limit=5, where=ChunkFilter(sources=["random"]))) == 5
