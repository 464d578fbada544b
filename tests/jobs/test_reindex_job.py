"""The reindex job in-process: run records, the lock, and a failing source."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from jobs.config import DirectorySettings, DirectorySourceConfig, SourceConfig
from jobs.indexing import Indexer
from jobs.reindex import ReindexJob
from store.documents import DocumentRepository
from store.embedding import SentenceTransformerEmbedder
from store.index_runs import IndexRunRepository
from store.locks import REINDEX_LOCK_KEY, try_advisory_lock

FIXTURE_KB = Path(__file__).resolve().parents[1] / "fixtures" / "kb"


@pytest.fixture
def job(pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder) -> ReindexJob:
    documents = DocumentRepository(pool)
    return ReindexJob(
        pool=pool,
        indexer=Indexer(repository=documents, embedder=embedder),
        documents=documents,
        runs=IndexRunRepository(pool),
        base_dir=FIXTURE_KB.parent,
    )


def kb_source(name: str = "kb", root: str = "kb") -> SourceConfig:
    return DirectorySourceConfig(name=name, settings=DirectorySettings(root=root))


async def test_each_run_is_recorded_with_its_counts(job: ReindexJob, pool: asyncpg.Pool) -> None:
    outcome = await job.run([kb_source()])
    (run,) = await IndexRunRepository(pool).latest()
    assert outcome.reports[0].documents_added == 3
    assert run.status == "succeeded"
    assert run.counts["documents_added"] == 3
    assert run.counts["chunks_embedded"] == outcome.reports[0].chunks_embedded > 0


async def test_a_pass_prunes_the_change_log_of_rows_older_than_a_day(
    job: ReindexJob, pool: asyncpg.Pool
) -> None:
    await job.run([kb_source()])
    written = await pool.fetchval("SELECT count(*) FROM corpus_changes")
    assert written > 0
    await pool.execute("UPDATE corpus_changes SET changed_at = now() - interval '25 hours'")
    await job.run([kb_source()])  # nothing changed: nothing new logged, the old rows go
    assert await pool.fetchval("SELECT count(*) FROM corpus_changes") == 0
    assert await pool.fetchval("SELECT through_xid::text::bigint FROM corpus_changes_pruned") > 0


async def test_a_run_skips_while_another_instance_holds_the_lock(
    job: ReindexJob, pool: asyncpg.Pool
) -> None:
    async with try_advisory_lock(pool, REINDEX_LOCK_KEY) as held:
        assert held
        outcome = await job.run([kb_source()])
    assert outcome.skipped and outcome.reports == []
    assert await IndexRunRepository(pool).latest() == []


async def test_a_failing_source_is_recorded_and_the_others_still_run(
    job: ReindexJob, pool: asyncpg.Pool
) -> None:
    outcome = await job.run([kb_source("missing", "no-such-folder"), kb_source()])
    assert "no-such-folder" in outcome.errors["missing"]
    assert outcome.reports[0].documents_added == 3
    runs = {r.source: r.status for r in await IndexRunRepository(pool).latest()}
    assert runs == {"missing": "failed", "kb": "succeeded"}


async def test_a_run_with_unreadable_documents_is_recorded_as_partial(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "good.md").write_text("# Leave\n\nAsk your manager for leave.\n")
    (tmp_path / "docs" / "bad.md").write_bytes(b"\x00\x01binary")
    documents = DocumentRepository(pool)
    job = ReindexJob(
        pool=pool,
        indexer=Indexer(repository=documents, embedder=embedder),
        documents=documents,
        runs=IndexRunRepository(pool),
        base_dir=tmp_path,
    )
    await job.run([kb_source("docs", "docs")])
    (run,) = await IndexRunRepository(pool).latest()
    assert run.status == "partial"
    assert run.failures == [{"uri": "bad.md", "reason": "looks like a binary file, not text"}]


async def test_a_run_left_running_by_a_killed_process_is_marked_failed_by_the_next(
    job: ReindexJob, pool: asyncpg.Pool
) -> None:
    stale = await IndexRunRepository(pool).start(source="kb")
    await job.run([kb_source()])
    runs = {r.id: r for r in await IndexRunRepository(pool).latest()}
    assert runs[stale].status == "failed"
    assert runs[stale].finished_at is not None
    assert "stopped before the run finished" in runs[stale].failures[0]["reason"]
    assert [r.status for r in runs.values() if r.id != stale] == ["succeeded"]


async def test_a_dry_run_leaves_a_stale_run_record_alone(
    job: ReindexJob, pool: asyncpg.Pool
) -> None:
    stale = await IndexRunRepository(pool).start(source="kb")
    await job.run([kb_source()], dry_run=True)
    (run,) = await IndexRunRepository(pool).latest()
    assert (run.id, run.status) == (stale, "running")


async def _snapshot(pool: asyncpg.Pool) -> dict[str, object]:
    """Every row of every table, to compare before and after."""
    tables = await pool.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    return {
        t["tablename"]: await pool.fetchval(
            f"SELECT md5(coalesce(string_agg(r::text, ',' ORDER BY r::text), '')) "
            f'FROM "{t["tablename"]}" r'
        )
        for t in tables
    }


async def test_a_dry_run_writes_nothing_at_all_and_lists_each_change(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("a", "b", "c"):
        (docs / f"{name}.md").write_text(f"# Page {name}\n\nText of page {name}.\n")
    documents = DocumentRepository(pool)
    job = ReindexJob(
        pool=pool,
        indexer=Indexer(repository=documents, embedder=embedder),
        documents=documents,
        runs=IndexRunRepository(pool),
        base_dir=tmp_path,
    )
    empty = await _snapshot(pool)
    first = await job.run([kb_source("docs", "docs")], dry_run=True)
    assert await _snapshot(pool) == empty  # not even the sources row
    assert {c["uri"]: c["change"] for c in first.reports[0].changes} == dict.fromkeys(
        ("a.md", "b.md", "c.md"), "added"
    )

    await job.run([kb_source("docs", "docs")])
    (docs / "a.md").write_text("# Page a\n\nNew text of page a.\n")
    (docs / "b.md").unlink()
    (docs / "d.md").write_text("# Page d\n\nText of page d.\n")
    indexed = await _snapshot(pool)
    outcome = await job.run([kb_source("docs", "docs")], dry_run=True)

    assert await _snapshot(pool) == indexed
    report = outcome.reports[0]
    assert sorted((c["change"], c["uri"]) for c in report.changes) == [
        ("added", "d.md"),
        ("deleted", "b.md"),
        ("updated", "a.md"),
    ]
    assert (report.documents_added, report.documents_updated, report.documents_deleted) == (1, 1, 1)
