"""A reindex spread over real `kb jobs --worker` processes, one of them SIGKILLed mid-batch.

Two workers and a coordinating `kb index` share one database. B is paused (SIGSTOP) so
that A takes the first batches; A is frozen and killed once the queue shows it has
written some documents and holds others it has not finished, then B is resumed. Every document must
end up indexed exactly once, A's unfinished documents taken over once its lease expired,
both workers must have written some, and the result must equal one process indexing the
same folder alone.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import numpy as np
import pytest

from jobs.config import DirectorySettings, DirectorySourceConfig
from jobs.indexing import Indexer
from jobs.reindex import ReindexJob
from store.database import open_pool
from store.documents import DocumentRepository
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from store.index_runs import IndexRunRepository
from store.migrate import apply_migrations
from tests.conftest import with_database

REPO = Path(__file__).resolve().parents[2]
DOCS = 30
CHUNKS_PER_DOC = 3
LEASE = "3"
# Seconds the coordinating `kb index` may take (it needs ~1 min on 2 shared cores).
RUN_TIMEOUT = 420
# Words of every document; a worker's output must never contain document text.
MARKER = "files leave request"


def write_corpus(root: Path) -> None:
    root.mkdir()
    for d in range(DOCS):
        (root / f"doc{d:02}.md").write_text(
            f"# Doc {d}\n\nTeam {d} {MARKER} {d} with HR.\n\n"
            f"# Travel {d}\n\nTeam {d} books trips through desk {d}.\n\n"
            f"# Equipment {d}\n\nTeam {d} orders laptops from IT {d}.\n"
        )


def kb_env(database_url: str, tmp: Path, *, batch: int) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "KB_HOME": str(tmp / "home"),
        "KB_INDEX_BATCH_SIZE": str(batch),
        "KB_WORKER_LEASE_SECONDS": LEASE,
        "KB_TORCH_THREADS": "1",
    }


async def start_kb(env: dict[str, str], *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", *args, env=env, cwd=REPO,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def poll(conn: asyncpg.Connection, query: str, *args: Any, timeout: float = 180) -> Any:
    """The first truthy value of `query`, polled every 20 ms."""
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        if value := await conn.fetchval(query, *args):
            return value
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting on: {query}")


def claimer_of(process: asyncio.subprocess.Process) -> str:
    """How a worker process names itself in the queue (jobs.worker.process_name)."""
    return f"worker:%:{process.pid}:%"


@pytest.fixture
async def second_database(pg_server: EmbeddedPostgres) -> AsyncIterator[str]:
    """Another empty database on the session's server, for the single-process index."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(pg_server.dsn)
    await admin.execute(f'CREATE DATABASE "{name}"')
    await admin.close()
    yield with_database(pg_server.dsn, name)
    admin = await asyncpg.connect(pg_server.dsn)
    await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await admin.close()


async def single_process_index(
    database_url: str, corpus: Path, embedder: SentenceTransformerEmbedder
) -> dict[str, Any]:
    pool = await open_pool(database_url)
    try:
        documents = DocumentRepository(pool)
        job = ReindexJob(
            pool=pool,
            indexer=Indexer(repository=documents, embedder=embedder),
            documents=documents,
            runs=IndexRunRepository(pool),
            base_dir=corpus.parent,
        )
        config = DirectorySourceConfig(name="corpus", settings=DirectorySettings(root="corpus"))
        outcome = await job.run([config])
        return outcome.reports[0].as_dict()
    finally:
        await pool.close()


async def index_state(database_url: str) -> tuple[list[tuple[Any, ...]], dict[str, np.ndarray]]:
    """Every document and chunk as rows to compare, and each chunk text's vector."""
    pool = await open_pool(database_url)
    try:
        rows = await pool.fetch(
            """SELECT d.uri, d.title, d.url, d.text, d.content_hash, d.metadata_hash,
                      c.ordinal, c.text AS chunk, c.text_hash, c.char_start, c.char_end,
                      c.heading_path, c.embedding
               FROM documents d JOIN chunks c ON c.document_id = d.id
               ORDER BY d.uri, c.ordinal"""
        )
    finally:
        await pool.close()
    state = [tuple(v for k, v in r.items() if k != "embedding") for r in rows]
    return state, {r["text_hash"]: r["embedding"].to_numpy() for r in rows}


@pytest.mark.slow
async def test_workers_share_a_reindex_and_a_killed_worker_loses_nothing(
    database_url: str,
    second_database: str,
    tmp_path: Path,
    embedder: SentenceTransformerEmbedder,
) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus)
    env = kb_env(database_url, tmp_path, batch=2 * CHUNKS_PER_DOC)
    conn = await asyncpg.connect(database_url)
    await apply_migrations(conn)  # before the processes start, so the test can watch
    processes: list[asyncio.subprocess.Process] = []
    try:
        a = await start_kb(env, "jobs", "--worker")
        b = await start_kb(env, "jobs", "--worker", "--concurrency", "2")
        processes = [a, b]
        await poll(conn, "SELECT count(*) = 2 FROM index_workers")
        b.send_signal(signal.SIGSTOP)
        index = await start_kb(env, "index", str(corpus), "--name", "corpus", "--json")
        processes.append(index)

        # A is killed once it has written documents and holds others not yet written.
        # It is frozen first, so it can't claim or start writing anything more before it
        # dies; a COMMIT it sent just before may still land, so it must hold two pending
        # documents (it writes one at a time): at least one is surely left unwritten.
        killed: list[asyncpg.Record] = []
        while len(killed) < 2:
            await poll(
                conn,
                """SELECT bool_or(status = 'done') AND bool_or(status = 'pending')
                   FROM index_queue WHERE claimed_by LIKE $1""",
                claimer_of(a),
            )
            a.send_signal(signal.SIGSTOP)
            killed = await conn.fetch(
                "SELECT id FROM index_queue WHERE claimed_by LIKE $1 AND status = 'pending'",
                claimer_of(a),
            )
            if len(killed) < 2:
                a.send_signal(signal.SIGCONT)
        a.send_signal(signal.SIGKILL)
        await a.wait()
        b.send_signal(signal.SIGCONT)

        # Bounded: a run left waiting on a claim that never expires fails here.
        out, err = await asyncio.wait_for(index.communicate(), timeout=RUN_TIMEOUT)
        assert index.returncode == 0, err.decode()
        record = json.loads(out)
        b.send_signal(signal.SIGTERM)
        log = (await b.communicate())[1].decode()
        assert b.returncode == 0, log
        items = await conn.fetch("SELECT * FROM index_queue ORDER BY id")
        version = await conn.fetchval("SELECT version FROM corpus_version")
        left = await conn.fetch("SELECT id FROM index_workers")
        runs = await conn.fetch("SELECT status, counts FROM index_runs")
    finally:
        for process in processes:
            if process.returncode is None:
                process.send_signal(signal.SIGCONT)
                process.kill()
                await process.wait()
        await conn.close()

    # Every document queued once and written once; A's unfinished ones by B, on a retry.
    assert [i["status"] for i in items] == ["done"] * DOCS
    assert len({i["uri"] for i in items}) == DOCS
    assert version == DOCS  # the corpus version moves once per document written
    by_id = {i["id"]: i for i in items}
    held = [by_id[k["id"]] for k in killed]
    taken_over = [i for i in held if f":{b.pid}:" in i["done_by"]]
    assert taken_over and all(i["attempts"] == 2 for i in taken_over)
    # At most the one document whose COMMIT was already on its way was written by A.
    assert [i["attempts"] for i in held if i not in taken_over] in ([], [1])
    writers = {int(i["done_by"].split(":")[2]) for i in items}
    assert writers == {a.pid, b.pid}  # the work was shared
    # B left the registry when stopped; only A's row, no longer alive, is left.
    assert [r["id"].split(":")[2] for r in left] == [str(a.pid)]
    assert "documents so far" in log and MARKER not in log

    # The run record and the state equal those of one process indexing the folder alone.
    alone = await single_process_index(second_database, corpus, embedder)
    assert record.keys() == alone.keys()
    counts = ("documents_added", "documents_updated", "documents_failed", "chunks_embedded")
    assert [record[k] for k in counts] == [alone[k] for k in counts] == [DOCS, 0, 0, 90]
    assert record["chunks_reused"] == alone["chunks_reused"] == 0
    # One run record for the whole reindex, holding the counts summed across workers.
    assert [r["status"] for r in runs] == ["succeeded"]
    stored = json.loads(runs[0]["counts"])
    assert {k: stored[k] for k in counts} == {k: record[k] for k in counts}
    state, vectors = await index_state(database_url)
    state_alone, vectors_alone = await index_state(second_database)
    assert state == state_alone and len(state) == DOCS * CHUNKS_PER_DOC
    for digest, vector in vectors.items():
        assert float(vector @ vectors_alone[digest]) > 0.999
