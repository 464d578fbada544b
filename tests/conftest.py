"""Shared fixtures: one embedded Postgres and one loaded embedding model per test session.

Each test that needs a database gets its own freshly created one on that server, so
tests never see each other's rows.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import asyncpg
import pytest
from hypothesis import settings

from bot.sample_kb import handbook_root
from store.database import open_pool
from store.embedded import EmbeddedPostgres, start_embedded_postgres
from store.embedding import SentenceTransformerEmbedder

# Property tests draw the same examples on every run (`make test`, CI): a red run is a real
# failure, never the luck of a draw; the cases that matter are @examples of their tests.
# `HYPOTHESIS_PROFILE=explore make test` draws fresh random examples (each test's own count).
settings.register_profile("repeatable", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

HANDBOOK = handbook_root()
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def with_database(dsn: str, database: str) -> str:
    """The same server, another database."""
    parts = urlsplit(dsn)
    return urlunsplit(parts._replace(path=f"/{database}"))


@pytest.fixture(scope="session", autouse=True)
def kb_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """KB_HOME for everything the tests build in this process (Settings()): a folder of
    the session's, so no test reads or writes the developer's own (its slack.toml, the
    Slack journal). The `kb` processes tests start get their own KB_HOME."""
    home = tmp_path_factory.mktemp("kb-home")
    os.environ["KB_HOME"] = str(home)
    return home


@pytest.fixture(scope="session")
async def pg_server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[EmbeddedPostgres]:
    server = await start_embedded_postgres(tmp_path_factory.mktemp("pg") / "data")
    yield server
    server.stop()


@pytest.fixture
async def database_url(pg_server: EmbeddedPostgres) -> AsyncIterator[str]:
    """A new, empty database on the session's server; dropped after the test."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(pg_server.dsn)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    yield with_database(pg_server.dsn, name)
    admin = await asyncpg.connect(pg_server.dsn)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@pytest.fixture
async def pool(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    pool = await open_pool(database_url, max_size=4)
    yield pool
    await pool.close()


@pytest.fixture(scope="session", autouse=True)
def query_graph_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the ONNX query graph (store/query_graph.py) for the whole session.

    Exporting it takes seconds; every `kb` process a test starts inherits this folder
    through the environment, so the graph is exported once, not once per process.
    """
    folder = tmp_path_factory.mktemp("query-graphs")
    os.environ["KB_QUERY_GRAPH_DIR"] = str(folder)
    return folder


@pytest.fixture(scope="session")
async def embedder(query_graph_dir: Path) -> AsyncIterator[SentenceTransformerEmbedder]:
    """The packaged all-MiniLM-L6-v2, loaded once, with queries through its ONNX graph."""
    model = SentenceTransformerEmbedder(torch_threads=2, query_graph_dir=query_graph_dir)
    await model.load()
    yield model
    model.close()


class HashingEmbedder:
    """A deterministic stand-in embedding model: bag of hashed words, unit length.

    For tests about what the indexer does with an embedder (identity changes, counts),
    not about meaning; those use the real packaged model above.
    """

    def __init__(self, name: str, dimension: int) -> None:
        from store.embedding import ModelIdentity

        self.identity = ModelIdentity(name, dimension)
        self.texts_embedded = 0

    async def embed_batch(self, texts: list[str]):  # type: ignore[no-untyped-def]
        import zlib

        import numpy as np

        vectors = np.zeros((len(texts), self.identity.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                vectors[row, zlib.crc32(word.encode()) % self.identity.dimension] += 1.0
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        self.texts_embedded += len(texts)
        return vectors / np.where(norms == 0, 1, norms)


@pytest.fixture
def hashing_embedder() -> type[HashingEmbedder]:
    """The HashingEmbedder class, for tests that need embedders with chosen identities."""
    return HashingEmbedder
