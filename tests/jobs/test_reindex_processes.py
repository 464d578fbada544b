"""Reindex runs as real `kb index` processes: killed mid-run, and two at once."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from jobs.chunking import chunk_text
from jobs.hashing import content_hash
from store.migrate import apply_migrations

REPO = Path(__file__).resolve().parents[2]
DOCS = 40


def write_corpus(root: Path, *, version: int) -> None:
    root.mkdir(exist_ok=True)
    for d in range(DOCS):
        paragraphs = [
            " ".join(
                f"Policy {d}.{p}.{s} (revision {version}) explains how team {d} files request {s}."
                for s in range(14)
            )
            for p in range(5)
        ]
        (root / f"doc{d:02}.md").write_text(f"# Document {d}\n\n" + "\n\n".join(paragraphs))


async def start_index(corpus: Path, database_url: str, tmp: Path) -> asyncio.subprocess.Process:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "KB_HOME": str(tmp / "home"),
        "KB_INDEX_BATCH_SIZE": "6",
    }
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "index", str(corpus), "--name", "corpus", "--json",
        env=env, cwd=REPO, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def documents_without_chunks(conn: asyncpg.Connection) -> int:
    return await conn.fetchval(
        """SELECT count(*) FROM documents d
           WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.document_id = d.id)"""
    )


async def wait_for(
    conn: asyncpg.Connection, query: str, predicate: Callable[[Any], bool], timeout: float = 180
) -> None:
    """Poll the database until `predicate(value)`; checks the no-empty-document invariant too."""
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        assert await documents_without_chunks(conn) == 0
        if predicate(await conn.fetchval(query)):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting on: {query}")


async def assert_consistent(conn: asyncpg.Connection, allowed_texts: dict[str, set[str]]) -> None:
    """Every document is whole: its stored text is one known version and its chunks match it."""
    rows = await conn.fetch("SELECT id, uri, text, content_hash FROM documents")
    for row in rows:
        assert row["text"] in allowed_texts[row["uri"]]
        assert row["content_hash"] == content_hash(row["text"])
        chunks = await conn.fetch(
            "SELECT ordinal, text, char_start, char_end FROM chunks WHERE document_id = $1"
            " ORDER BY ordinal",
            row["id"],
        )
        expected = chunk_text(row["text"])
        assert [c["text"] for c in chunks] == [c.text for c in expected]
        assert [c["ordinal"] for c in chunks] == list(range(len(expected)))
        assert all(row["text"][c["char_start"] : c["char_end"]] == c["text"] for c in chunks)


def texts(root: Path) -> dict[str, set[str]]:
    return {p.name: {p.read_text()} for p in root.glob("*.md")}


async def connect_migrated(database_url: str) -> asyncpg.Connection:
    conn = await asyncpg.connect(database_url)
    await apply_migrations(conn)
    return conn


async def kill_mid_run(
    corpus: Path, database_url: str, tmp: Path, conn: asyncpg.Connection
) -> None:
    """Start `kb index`, let it commit a few documents, then SIGKILL it."""
    before = await conn.fetchval("SELECT coalesce(max(id), 0) FROM index_runs")
    process = await start_index(corpus, database_url, tmp)
    await wait_for(
        conn,
        f"SELECT count(*) FROM documents WHERE updated_at > (SELECT started_at FROM index_runs"
        f" WHERE id > {before} ORDER BY id LIMIT 1)",
        lambda n: n is not None and n >= 6,
    )
    process.send_signal(signal.SIGKILL)
    await process.wait()


@pytest.mark.slow
async def test_a_reindex_killed_mid_run_leaves_every_document_whole_and_the_next_run_finishes(
    database_url: str, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus, version=1)
    old = texts(corpus)
    conn = await connect_migrated(database_url)
    try:
        # A first run killed part-way: some documents are in, none is partial.
        await kill_mid_run(corpus, database_url, tmp_path, conn)
        stored = await conn.fetchval("SELECT count(*) FROM documents")
        assert 0 < stored < DOCS
        await assert_consistent(conn, old)

        # The next run finishes the work.
        finished = await start_index(corpus, database_url, tmp_path)
        out, err = await finished.communicate()
        assert finished.returncode == 0, err.decode()
        record = json.loads(out)
        assert record["documents_added"] == DOCS - stored
        assert record["documents_unchanged"] == stored
        assert await conn.fetchval("SELECT count(*) FROM documents") == DOCS
        await assert_consistent(conn, old)
        statuses = await conn.fetch("SELECT status FROM index_runs ORDER BY id")
        assert [r["status"] for r in statuses] == ["failed", "succeeded"]

        # An update run killed part-way: each document is entirely old or entirely new.
        write_corpus(corpus, version=2)
        new = texts(corpus)
        await kill_mid_run(corpus, database_url, tmp_path, conn)
        both = {uri: old[uri] | new[uri] for uri in old}
        await assert_consistent(conn, both)
        versions = {
            await conn.fetchval("SELECT text FROM documents WHERE uri = $1", u) in new[u]
            for u in new
        }
        assert versions == {True, False}

        finished = await start_index(corpus, database_url, tmp_path)
        out, err = await finished.communicate()
        assert finished.returncode == 0, err.decode()
        await assert_consistent(conn, new)
        assert await conn.fetchval("SELECT count(*) FROM documents") == DOCS
    finally:
        await conn.close()


async def test_two_concurrent_index_runs_one_runs_and_one_skips(
    database_url: str, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus, version=1)
    conn = await connect_migrated(database_url)
    try:
        first = await start_index(corpus, database_url, tmp_path)
        await wait_for(conn, "SELECT count(*) FROM index_runs WHERE status = 'running'", bool)
        second = await start_index(corpus, database_url, tmp_path)
        out2, err2 = await second.communicate()
        out1, err1 = await first.communicate()
    finally:
        await conn.close()
    assert second.returncode == 0, err2.decode()
    assert json.loads(out2) == {"skipped": True, "reason": "another reindex is running"}
    assert first.returncode == 0, err1.decode()
    assert json.loads(out1)["documents_added"] == DOCS
