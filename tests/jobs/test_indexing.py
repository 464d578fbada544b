"""Hash-based incremental indexing, counted exactly, against the real store and model."""

from __future__ import annotations

import asyncpg
import pytest

from jobs.chunking import ChunkingPolicy
from jobs.documents import FailedDocument, GoneDocument, SourceDocument, StaticSource
from jobs.indexing import Indexer, IndexOptions
from store.documents import DocumentRepository
from store.embedding import SentenceTransformerEmbedder


def _paragraph(topic: str, n: int) -> str:
    return " ".join(
        f"Rule {i} about {topic} says staff should file form {n}-{i} before the deadline."
        for i in range(12)
    )


def _doc(uri: str, topic: str, paragraphs: int = 6, title: str | None = None) -> SourceDocument:
    body = "\n\n".join(_paragraph(topic, n) for n in range(paragraphs))
    return SourceDocument(
        uri=uri, title=title or topic.title(), url=f"https://kb/{uri}", text=f"# {topic}\n\n{body}"
    )


POLICY = ChunkingPolicy(min_words=100, max_words=250)


@pytest.fixture
def indexer(pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder) -> Indexer:
    return Indexer(repository=DocumentRepository(pool), embedder=embedder, policy=POLICY)


async def test_first_run_adds_and_embeds_every_chunk(indexer: Indexer, pool: asyncpg.Pool) -> None:
    report = await indexer.run(StaticSource("s", [_doc("a", "leave"), _doc("b", "travel")]))
    chunks = await pool.fetchval("SELECT count(*) FROM chunks")
    assert (report.documents_added, report.documents_unchanged) == (2, 0)
    assert report.chunks_embedded == chunks > 2
    assert report.chunks_reused == 0


async def test_a_second_run_without_changes_embeds_nothing(
    indexer: Indexer, embedder: SentenceTransformerEmbedder
) -> None:
    source = StaticSource("s", [_doc("a", "leave"), _doc("b", "travel")])
    await indexer.run(source)
    before = embedder.texts_embedded
    report = await indexer.run(source)
    assert report.documents_unchanged == 2
    assert (report.documents_added, report.documents_updated, report.chunks_embedded) == (0, 0, 0)
    assert embedder.texts_embedded == before


async def test_editing_one_paragraph_re_embeds_only_its_chunks(indexer: Indexer) -> None:
    original = _doc("a", "leave", paragraphs=12)
    await indexer.run(StaticSource("s", [original]))
    edited_text = original.text.replace("Rule 3 about leave says", "Rule 3 about leave now says", 1)
    edited = SourceDocument(original.uri, original.title, original.url, edited_text)
    report = await indexer.run(StaticSource("s", [edited]))
    assert report.documents_updated == 1
    assert 1 <= report.chunks_embedded <= 2
    assert report.chunks_reused >= 3


async def test_a_metadata_only_change_updates_rows_without_embedding(
    indexer: Indexer, pool: asyncpg.Pool
) -> None:
    await indexer.run(StaticSource("s", [_doc("a", "leave")]))
    report = await indexer.run(StaticSource("s", [_doc("a", "leave", title="Leave (renamed)")]))
    assert (report.documents_updated, report.chunks_embedded) == (1, 0)
    assert await pool.fetchval("SELECT title FROM documents") == "Leave (renamed)"


async def test_a_document_gone_from_the_source_is_deleted_with_its_chunks(
    indexer: Indexer, pool: asyncpg.Pool
) -> None:
    await indexer.run(StaticSource("s", [_doc("a", "leave"), _doc("b", "travel")]))
    before = await pool.fetchval("SELECT count(*) FROM chunks")
    report = await indexer.run(StaticSource("s", [_doc("a", "leave")]))
    after = await pool.fetchval("SELECT count(*) FROM chunks")
    assert report.documents_deleted == 1
    assert report.chunks_deleted == before - after > 0


async def test_a_renamed_file_reuses_every_vector(indexer: Indexer) -> None:
    await indexer.run(StaticSource("s", [_doc("a", "leave"), _doc("b", "travel")]))
    report = await indexer.run(StaticSource("s", [_doc("a", "leave"), _doc("b2", "travel")]))
    assert (report.documents_added, report.documents_deleted) == (1, 1)
    assert report.chunks_embedded == 0
    assert report.chunks_reused > 0


async def test_a_failed_document_is_reported_and_its_old_copy_kept(
    indexer: Indexer, pool: asyncpg.Pool
) -> None:
    await indexer.run(StaticSource("s", [_doc("a", "leave"), _doc("b", "travel")]))
    report = await indexer.run(
        StaticSource("s", [_doc("a", "leave"), FailedDocument("b", "not valid UTF-8")])
    )
    assert report.documents_failed == 1
    assert report.failures == [{"uri": "b", "reason": "not valid UTF-8"}]
    assert report.documents_deleted == 0
    assert await pool.fetchval("SELECT count(*) FROM documents") == 2


async def test_a_listing_that_shrinks_sharply_deletes_nothing(
    indexer: Indexer, pool: asyncpg.Pool
) -> None:
    docs = [_doc(f"d{i}", f"topic {i}", paragraphs=1) for i in range(6)]
    await indexer.run(StaticSource("s", docs))
    report = await indexer.run(
        StaticSource("s", docs[:1]), options=IndexOptions(min_listing_ratio=0.5)
    )
    assert report.documents_deleted == 0
    assert report.warnings and "kept 5 documents" in report.warnings[0]
    assert await pool.fetchval("SELECT count(*) FROM documents") == 6


async def test_dry_run_reports_changes_and_writes_nothing(
    indexer: Indexer, pool: asyncpg.Pool
) -> None:
    await indexer.run(StaticSource("s", [_doc("a", "leave")]))
    report = await indexer.run(
        StaticSource("s", [_doc("a", "leave"), _doc("b", "travel")]),
        options=IndexOptions(dry_run=True),
    )
    assert (report.documents_added, report.chunks_embedded) == (1, 0)
    assert await pool.fetchval("SELECT count(*) FROM documents") == 1


async def _times_analysed(pool: asyncpg.Pool) -> dict[str, int]:
    rows = await pool.fetch(
        """SELECT relname, analyze_count FROM pg_stat_user_tables
           WHERE relname IN ('sources', 'documents', 'chunks')"""
    )
    return {r["relname"]: r["analyze_count"] for r in rows}


async def test_a_run_that_changes_documents_refreshes_the_planner_statistics(
    indexer: Indexer, pool: asyncpg.Pool
) -> None:
    source = StaticSource("s", [_doc("a", "leave")])
    await indexer.run(source)
    after_first = await _times_analysed(pool)
    assert after_first == {"sources": 1, "documents": 1, "chunks": 1}
    await indexer.run(source)  # nothing changed: nothing to analyse
    await indexer.run(StaticSource("s", [_doc("a", "leave"), _doc("b", "travel")]),
                      options=IndexOptions(dry_run=True))  # fmt: skip
    assert await _times_analysed(pool) == after_first


async def test_a_document_the_source_reports_gone_is_deleted(
    indexer: Indexer, pool: asyncpg.Pool
) -> None:
    await indexer.run(StaticSource("s", [_doc("a", "leave"), _doc("b", "travel")]))
    report = await indexer.run(
        StaticSource("s", [_doc("a", "leave"), GoneDocument("b", "HTTP 404: the page is gone")])
    )
    assert report.documents_deleted == 1
    assert await pool.fetchval("SELECT count(*) FROM documents") == 1
