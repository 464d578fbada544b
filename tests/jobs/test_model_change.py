"""A model change re-embeds every source beside the old vectors, resumes, and deletes nothing."""

from __future__ import annotations

from typing import Any

import asyncpg
import numpy as np

from jobs.chunking import ChunkingPolicy
from jobs.documents import SourceDocument, StaticSource
from jobs.indexing import Indexer, IndexOptions
from jobs.model_change import ModelChange
from store.documents import DocumentRepository
from store.embedding import ModelIdentity

POLICY = ChunkingPolicy(min_words=30, max_words=60)


def _doc(uri: str, topic: str) -> SourceDocument:
    body = "\n\n".join(
        " ".join(f"Rule {n}.{i} about {topic} says file form {n}-{i} on time." for i in range(8))
        for n in range(4)
    )
    return SourceDocument(uri=uri, title=topic, url=None, text=f"# {topic}\n\n{body}")


async def _index(pool: asyncpg.Pool, embedder: Any, name: str, docs: list[SourceDocument]) -> Any:
    indexer = Indexer(
        repository=DocumentRepository(pool), embedder=embedder, policy=POLICY, embed_batch_size=4
    )
    return await indexer.run(StaticSource(name, docs))


async def _vectors(pool: asyncpg.Pool) -> list[asyncpg.Record]:
    return await pool.fetch(
        "SELECT c.text, c.heading_path, c.embedding, c.embedding_next FROM chunks c ORDER BY c.id"
    )


async def test_a_new_model_re_embeds_every_source_and_keeps_every_document(
    pool: asyncpg.Pool, hashing_embedder: Any
) -> None:
    model_a, model_b = hashing_embedder("a", 32), hashing_embedder("b", 16)
    await _index(pool, model_a, "one", [_doc("a", "leave"), _doc("b", "travel")])
    await _index(pool, model_a, "two", [_doc("c", "badges")])
    documents = await pool.fetchval("SELECT count(*) FROM documents")

    # Only source "one" is indexed with model B, yet source "two" is re-embedded too.
    report = await _index(pool, model_b, "one", [_doc("a", "leave"), _doc("b", "travel")])

    assert report.documents_unchanged == 2 and report.documents_added == 0
    assert report.chunks_reembedded == await pool.fetchval(
        "SELECT count(DISTINCT text_hash) FROM chunks"
    )
    assert "re-embedded beside the old vectors" in report.warnings[0]
    assert await pool.fetchval("SELECT count(*) FROM documents") == documents
    space = DocumentRepository(pool).embedding_space()
    assert await space.active() == ModelIdentity("b", 16)
    assert await space.next() is None
    rows = await _vectors(pool)
    expected = await model_b.embed_batch(
        [" > ".join(r["heading_path"]) + "\n\n" + r["text"] for r in rows]
    )
    assert all(r["embedding_next"] is None for r in rows)
    assert np.allclose(np.stack([r["embedding"].to_numpy() for r in rows]), expected)


async def test_an_interrupted_re_embed_resumes_and_covers_chunks_written_meanwhile(
    pool: asyncpg.Pool, hashing_embedder: Any
) -> None:
    model_a, model_b = hashing_embedder("a", 32), hashing_embedder("b", 16)
    await _index(pool, model_a, "one", [_doc("a", "leave"), _doc("b", "travel")])
    space = DocumentRepository(pool).embedding_space()

    # A re-embed that stopped after one batch: model A still answers.
    await space.begin_next(model_b.identity)
    batch = await space.missing_next(limit=3)
    await space.store_next([c.text_hash for c in batch], await model_b.embed_batch(["x"] * 3))
    assert await space.active() == ModelIdentity("a", 32)
    # Meanwhile an ordinary reindex with model A adds a document.
    await _index(pool, model_a, "one", [_doc("a", "leave"), _doc("b", "travel"), _doc("c", "pay")])
    missing = await space.count_missing_next()
    assert missing > 0
    assert await space.switch_to_next() is False  # not everything is covered yet

    change = ModelChange(space=space, embedder=model_b, batch_size=4)
    warning, embedded = await change.prepare(dry_run=False)

    assert embedded == missing  # only what was missing, not what the first batch did
    assert warning is not None
    assert await space.active() == ModelIdentity("b", 16)
    assert await pool.fetchval("SELECT count(*) FROM documents") == 3
    assert await pool.fetchval("SELECT count(*) FROM chunks WHERE embedding IS NULL") == 0
    dims = await pool.fetch("SELECT DISTINCT vector_dims(embedding) AS d FROM chunks")
    assert [r["d"] for r in dims] == [16]


async def test_a_dry_run_with_a_new_model_changes_nothing(
    pool: asyncpg.Pool, hashing_embedder: Any
) -> None:
    await _index(pool, hashing_embedder("a", 32), "one", [_doc("a", "leave")])
    indexer = Indexer(
        repository=DocumentRepository(pool), embedder=hashing_embedder("b", 16), policy=POLICY
    )
    report = await indexer.run(
        StaticSource("one", [_doc("a", "leave")]), options=IndexOptions(dry_run=True)
    )
    assert "would change from a (32 dims) to b (16 dims)" in report.warnings[0]
    space = DocumentRepository(pool).embedding_space()
    assert (await space.active(), await space.next()) == (ModelIdentity("a", 32), None)
