"""A model change as a user makes it: `kb index` with a new model, killed half-way, restarted.

Model A is the packaged MiniLM; model B is MiniLM plus a fixed random Dense(384 → 64)
layer, saved to a folder and configured as `KB_EMBEDDING_MODEL=/that/folder` (a real
sentence-transformers model of another dimension, loaded by the product's own code).
While the re-embed runs, this test keeps asking the store questions and counting the
documents: nothing may be deleted and every question must find passages.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sys
from pathlib import Path

import asyncpg
import numpy as np
import pytest

from bot.settings import Settings
from bot.wiring import open_runtime
from jobs.chunking import Chunk
from jobs.config import DirectorySettings, DirectorySourceConfig
from jobs.indexing import Indexer
from jobs.reindex import ReindexJob
from store.database import open_pool
from store.documents import DocumentRepository
from store.embedding import ModelIdentity, SentenceTransformerEmbedder, packaged_model_path
from store.embedding_space import EmbeddingSpace
from store.errors import EmbeddingModelMismatch
from store.index_runs import IndexRunRepository
from store.vector_search import VectorSearch

REPO = Path(__file__).resolve().parents[2]
FIXTURE_KB = REPO / "tests" / "fixtures" / "kb"
QUESTION = "How do I request annual leave?"


def build_model_b(folder: Path) -> Path:
    """MiniLM with a seeded Dense(384 → 64) on top, saved as a sentence-transformers model."""
    import torch
    from sentence_transformers import SentenceTransformer, models

    torch.manual_seed(1234)
    base = SentenceTransformer(str(packaged_model_path()), device="cpu", local_files_only=True)
    dense = models.Dense(384, 64, activation_function=torch.nn.Identity())
    SentenceTransformer(modules=[*base, dense], device="cpu").save(str(folder))
    return folder


def write_second_source(root: Path) -> None:
    root.mkdir()
    for d in range(12):
        paragraphs = [
            " ".join(
                f"Procedure {d}.{p}.{s} says team {d} files badge request {s} with security."
                for s in range(9)
            )
            for p in range(4)
        ]
        (root / f"badge{d:02}.md").write_text(f"# Badges {d}\n\n" + "\n\n".join(paragraphs))


class Watcher:
    """Asks the store a question over and over with whichever model is active."""

    def __init__(self, pool: asyncpg.Pool, embedders: dict[ModelIdentity, object]) -> None:
        self.pool = pool
        self.embedders = embedders
        self.answered = 0
        self.documents: set[int] = set()
        self.stop = asyncio.Event()

    async def run(self) -> None:
        space, search = EmbeddingSpace(self.pool), VectorSearch(self.pool)
        while not self.stop.is_set():
            self.documents.add(await self.pool.fetchval("SELECT count(*) FROM documents"))
            for attempt in range(2):
                active = await space.active()
                assert active is not None
                vector = (await self.embedders[active].embed_batch([QUESTION]))[0]  # type: ignore[attr-defined]
                try:
                    hits = await search.nearest(vector, limit=3)
                    break
                except asyncpg.DataError:  # the switch landed between the two reads: re-read
                    assert attempt == 0
            assert hits, "a question found nothing during the model change"
            self.answered += 1
            await asyncio.sleep(0.05)


def kb_index(database_url: str, tmp_path: Path, model: Path) -> asyncio.Future:  # type: ignore[type-arg]
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "KB_HOME": str(tmp_path / "home"),
        "KB_SOURCES": str(tmp_path / "sources.toml"),
        "KB_EMBEDDING_MODEL": str(model),
        "KB_INDEX_BATCH_SIZE": "3",
    }
    return asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            "index",
            "--source",
            "one",
            "--json",
            env=env,
            cwd=REPO,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    )


async def wait_until(pool: asyncpg.Pool, query: str, check, timeout: float = 240) -> int:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        value = await pool.fetchval(query)
        if check(value):
            return value
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting on {query}")


@pytest.mark.slow
async def test_a_model_change_killed_half_way_resumes_and_loses_nothing(
    database_url: str, tmp_path: Path, embedder: SentenceTransformerEmbedder
) -> None:
    model_b = build_model_b(tmp_path / "model-b")
    second = tmp_path / "badges"
    write_second_source(second)
    (tmp_path / "sources.toml").write_text(
        f'[[source]]\nname = "one"\nkind = "directory"\n[source.settings]\nroot = "{FIXTURE_KB}"\n'
        f'[[source]]\nname = "two"\nkind = "directory"\n[source.settings]\nroot = "{second}"\n'
    )
    pool = await open_pool(database_url)
    embedder_b = SentenceTransformerEmbedder(model=str(model_b), torch_threads=1)
    try:
        # Both sources indexed with model A.
        documents = DocumentRepository(pool)
        job = ReindexJob(
            pool=pool,
            indexer=Indexer(repository=documents, embedder=embedder),
            documents=documents,
            runs=IndexRunRepository(pool),
            base_dir=tmp_path,
        )
        configs = [
            DirectorySourceConfig(name="one", settings=DirectorySettings(root=str(FIXTURE_KB))),
            DirectorySourceConfig(name="two", settings=DirectorySettings(root=str(second))),
        ]
        await job.run(configs)
        identity_b = await embedder_b.load()
        stored = await pool.fetchval("SELECT count(*) FROM documents")
        chunks = await pool.fetchval("SELECT count(*) FROM chunks")
        texts = await pool.fetchval("SELECT count(DISTINCT text_hash) FROM chunks")

        # A process configured with B answers with A while A is active (it can load A).
        settings = Settings(DATABASE_URL=database_url, KB_EMBEDDING_MODEL=str(model_b))  # type: ignore[call-arg]
        async with open_runtime(settings) as runtime:
            assert (await runtime.query_embedder()).identity == embedder.identity

        watcher = Watcher(pool, {embedder.identity: embedder, identity_b: embedder_b})
        watching = asyncio.create_task(watcher.run())

        # `kb index` with model B, SIGKILLed once some (not all) B vectors are committed.
        process = await kb_index(database_url, tmp_path, model_b)
        filled = await wait_until(
            pool, "SELECT count(*) FROM chunks WHERE embedding_next IS NOT NULL", lambda n: n >= 6
        )
        process.send_signal(signal.SIGKILL)
        await process.wait()
        assert filled < chunks
        assert await EmbeddingSpace(pool).active() == embedder.identity

        # Restarted, it embeds only what is missing, for both sources, then switches.
        restarted = await kb_index(database_url, tmp_path, model_b)
        out, err = await restarted.communicate()
        assert restarted.returncode == 0, err.decode()
        record = json.loads(out)
        assert 0 < record["chunks_reembedded"] < texts
        await asyncio.sleep(0.3)  # a few questions with model B too
        watcher.stop.set()
        await watching
    finally:
        await pool.close()

    pool = await open_pool(database_url)
    try:
        assert watcher.documents == {stored}
        assert watcher.answered > 5
        assert await EmbeddingSpace(pool).active() == identity_b
        assert await EmbeddingSpace(pool).next() is None
        rows = await pool.fetch(
            "SELECT text, heading_path, embedding, embedding_next FROM chunks ORDER BY id"
        )
        assert len(rows) == chunks
        assert all(r["embedding_next"] is None for r in rows)
        assert {len(r["embedding"].to_numpy()) for r in rows} == {64}
        sample = rows[:: max(1, len(rows) // 5)]
        expected = await embedder_b.embed_batch(
            [Chunk(0, r["text"], 0, 0, tuple(r["heading_path"])).embedding_text() for r in sample]
        )
        stored_b = np.stack([r["embedding"].to_numpy() for r in sample])
        assert np.allclose(stored_b, expected, atol=1e-4)
    finally:
        await pool.close()
        embedder_b.close()

    # A process that cannot load the index's model refuses, and deletes nothing.
    shutil.rmtree(model_b)
    settings = Settings(DATABASE_URL=database_url)  # type: ignore[call-arg]
    async with open_runtime(settings) as runtime:
        with pytest.raises(EmbeddingModelMismatch, match="run `kb index` to re-embed"):
            await runtime.query_embedder()
        assert (await runtime.documents.counts())["documents"] == stored
