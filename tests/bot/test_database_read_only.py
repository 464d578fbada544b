"""The embedded database's data folder turned read-only: one clear line, the index whole.

How the fault is injected, and why this one: the embedded Postgres (pgserver) never runs
as root; started by root it runs as its own `pgserver` user, otherwise as the user who
started it. So taking the write bits off the database's files really stops the server
from opening them (it opens relation files read-write), even though these tests run as
root in CI. A full disk needs a small filesystem (tmpfs or a loop mount: CAP_SYS_ADMIN)
or `chattr +i` (CAP_LINUX_IMMUTABLE), neither of which a default Docker container
grants; RLIMIT_FSIZE on the server hits its 16 MB WAL segments before any table file
and PANICs the server instead. The same one-line message covers disk_full (SQLSTATE
53100) and I/O errors (class 58); only the read-only folder is exercised here.

`kb index` runs as a user runs it, against the database whose folder is read-only: it
exits 1 with one line naming the problem and what to check, no traceback. With the
permissions back, the index is exactly as before (same documents, chunks and
embeddings; a vector search still answers) and `kb index` works again.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import asyncpg

from store.database import open_pool
from store.embedded import start_embedded_postgres
from tests.bot.slack.conftest import index_fixture_corpus

REPO = Path(__file__).resolve().parents[2]
FIXTURE_KB = REPO / "tests" / "fixtures" / "kb"

SNAPSHOT = """
    SELECT d.uri, d.content_hash, c.ordinal, md5(c.text), md5(c.embedding::text)
    FROM documents d JOIN chunks c ON c.document_id = d.id
    ORDER BY 1, 3"""
NEAREST = """
    SELECT count(*) FROM (SELECT id FROM chunks
        ORDER BY embedding <=> (SELECT embedding FROM chunks ORDER BY id LIMIT 1) LIMIT 3) n"""


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """Take every write bit off `folder` and what is in it; put them back after."""
    paths = [folder, *folder.rglob("*")]
    modes = {p: p.stat().st_mode for p in paths}
    for path in paths:
        path.chmod(modes[path] & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        yield
    finally:
        for path in reversed(paths):
            path.chmod(stat.S_IMODE(modes[path]))


async def kb_index(dsn: str, home: Path, corpus: Path) -> tuple[int, str]:
    env = {**os.environ, "DATABASE_URL": dsn, "KB_HOME": str(home)}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "index", str(corpus), "--name", "more",
        env=env, cwd=REPO, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await process.communicate()
    return process.returncode or 0, err.decode()


async def test_a_read_only_database_folder_is_one_clear_line_and_the_index_stays_whole(
    tmp_path: Path, embedder
) -> None:
    server = await start_embedded_postgres(tmp_path / "pg")
    try:
        conn = await asyncpg.connect(server.dsn)
        pool = await open_pool(server.dsn, max_size=2)
        await index_fixture_corpus(pool, embedder)
        await pool.close()
        before = await conn.fetch(SNAPSHOT)
        oid = await conn.fetchval("SELECT oid FROM pg_database WHERE datname = current_database()")
        await conn.close()
        corpus = tmp_path / "more"
        shutil.copytree(FIXTURE_KB, corpus)
        (corpus / "new.md").write_text("# New\n\nA new page about parking permits.\n")

        with read_only(tmp_path / "pg" / "base" / str(oid)):
            code, err = await kb_index(server.dsn, tmp_path / "home", corpus)
        lines = [line for line in err.splitlines() if line.startswith("error:")]
        assert code == 1, err
        assert "Traceback" not in err
        (line,) = lines
        assert "cannot use its files" in line and "Permission denied" in line
        assert "data folder is writable" in line

        conn = await asyncpg.connect(server.dsn)
        try:
            assert await conn.fetch(SNAPSHOT) == before
            assert await conn.fetchval("SELECT count(*) FROM documents") == 3
            assert await conn.fetchval(NEAREST) == 3
        finally:
            await conn.close()
        code, err = await kb_index(server.dsn, tmp_path / "home", corpus)
        assert code == 0, err
    finally:
        server.stop()
