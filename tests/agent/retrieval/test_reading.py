"""Reading around hits: neighbours within a budget, merged spans, exact document cuts."""

from __future__ import annotations

from itertools import pairwise

import asyncpg
import numpy as np
import pytest

from agent.retrieval.reading import Reader, ReadOptions, count_words
from store.corpus import CorpusReader
from store.documents import ChunkRecord, DocumentRecord, DocumentRepository
from store.embedding import ModelIdentity
from store.vector_search import ChunkHit
from tests.agent.conftest import statements_sent

PARAGRAPHS = [
    f"Paragraph {i} says " + " ".join(f"w{i}x{j}" for j in range(17)) + "." for i in range(8)
]
TEXT = "# Leave\n\n" + "\n\n".join(PARAGRAPHS)


async def _store(pool: asyncpg.Pool, text: str = TEXT, uri: str = "leave.md") -> list[int]:
    """One document whose chunks are its paragraphs, each overlapping the next by one word."""
    repo = DocumentRepository(pool)
    await repo.adopt_model(ModelIdentity("test-fixed", 2))
    source_id = await repo.ensure_source(name="handbook", kind="test")
    chunks, position = [], text.index("Paragraph")
    for ordinal, paragraph in enumerate(PARAGRAPHS):
        start = text.index(paragraph, position)
        end = start + len(paragraph)
        if ordinal + 1 < len(PARAGRAPHS):
            end = text.index("Paragraph", end) + len("Paragraph")  # overlap into the next
        chunks.append(
            ChunkRecord(
                ordinal,
                text[start:end],
                f"h{ordinal}-{uri}",
                start,
                end,
                ("Leave",),
                np.ones(2, dtype=np.float32),
            )
        )
        position = start + 1
    document = DocumentRecord(uri, "Leave", None, text, f"c-{hash(text)}", "m")
    await repo.replace_document(source_id=source_id, document=document, chunks=chunks)
    rows = await pool.fetch(
        "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id "
        "WHERE d.uri = $1 ORDER BY ordinal",
        uri,
    )
    return [r["id"] for r in rows]


async def _hits(pool: asyncpg.Pool, chunk_ids: list[int]) -> list[ChunkHit]:
    return await CorpusReader(pool).hits([(cid, 1.0 - i / 10) for i, cid in enumerate(chunk_ids)])


async def test_a_hit_grows_into_its_neighbours_and_is_an_exact_cut(pool: asyncpg.Pool) -> None:
    ids = await _store(pool)
    reader = Reader(CorpusReader(pool), options=ReadOptions(passage_tokens=70, neighbours=2))
    [passage] = await reader.read(await _hits(pool, [ids[3]]))
    assert passage.text == TEXT[passage.char_start : passage.char_end]
    assert PARAGRAPHS[3] in passage.text and PARAGRAPHS[4] in passage.text
    assert PARAGRAPHS[2] in passage.text  # next first, then previous, while it fits
    assert count_words(passage.text) <= 70
    assert passage.heading == "Leave"
    assert passage.chunk_ids == (ids[3],)


async def test_a_hit_larger_than_the_budget_is_kept_whole(pool: asyncpg.Pool) -> None:
    ids = await _store(pool)
    reader = Reader(CorpusReader(pool), options=ReadOptions(passage_tokens=5))
    [passage] = await reader.read(await _hits(pool, [ids[0]]))
    assert passage.text.startswith(PARAGRAPHS[0])
    assert PARAGRAPHS[1] not in passage.text


async def test_overlapping_hits_merge_and_no_text_is_read_twice(pool: asyncpg.Pool) -> None:
    ids = await _store(pool)
    reader = Reader(CorpusReader(pool), options=ReadOptions(passage_tokens=45, neighbours=1))
    passages = await reader.read(await _hits(pool, [ids[5], ids[1], ids[2], ids[6]]))
    assert [p.chunk_ids for p in passages] == [(ids[5], ids[6]), (ids[1], ids[2])]
    spans = sorted((p.char_start, p.char_end) for p in passages)
    assert all(a_end < b_start for (_, a_end), (b_start, _) in pairwise(spans))
    for p in passages:
        assert p.text == TEXT[p.char_start : p.char_end]
    assert passages[0].score == pytest.approx(1.0)


async def test_the_total_budget_drops_the_weakest_passages(pool: asyncpg.Pool) -> None:
    ids = await _store(pool)
    options = ReadOptions(passage_tokens=25, total_tokens=45, neighbours=0)
    passages = await Reader(CorpusReader(pool), options=options).read(
        await _hits(pool, [ids[0], ids[3], ids[6]])
    )
    assert [p.chunk_ids for p in passages] == [(ids[0],), (ids[3],)]


async def test_a_hit_whose_document_was_reindexed_is_read_as_found(pool: asyncpg.Pool) -> None:
    ids = await _store(pool)
    [hit] = await _hits(pool, [ids[2]])
    await _store(pool, text=TEXT.replace("# Leave", "# Leave policy"))
    [passage] = await Reader(CorpusReader(pool)).read([hit])
    assert passage.text == hit.text


async def test_hits_in_two_documents_are_read_in_one_statement(pool: asyncpg.Pool) -> None:
    """Neighbours and texts of every hit come in one round trip (at 50 questions at once,
    each statement waits for a pooled connection and a turn of the event loop)."""
    travel = TEXT.replace("Leave", "Travel")
    first = await _store(pool)
    other = await _store(pool, travel, uri="travel.md")
    hit_ids = [first[3], other[5], first[0]]
    hits = await _hits(pool, hit_ids)
    sent = await statements_sent(pool)
    reader = Reader(CorpusReader(pool), options=ReadOptions(passage_tokens=45, neighbours=1))
    passages = await reader.read(hits)
    # Not the pool's reset on release, nor asyncpg's own type introspection.
    reading = [q for q in sent if "FROM chunks" in q or "FROM documents" in q]
    assert len(reading) == 1
    assert len({p.document_id for p in passages}) == 2
    assert sorted(c for p in passages for c in p.chunk_ids) == sorted(hit_ids)
    for passage in passages:
        text = TEXT if first[3] in passage.chunk_ids or first[0] in passage.chunk_ids else travel
        assert passage.text == text[passage.char_start : passage.char_end]
        assert passage.spans and all(s.document_id == passage.document_id for s in passage.spans)
