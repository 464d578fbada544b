"""Fixtures for the jobs tests: the bundled handbook, loaded once, a PDF writer, and a
reindex job over the session's database and model with the credentials a test gives."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import asyncpg
import pytest

from bot import sample_kb
from jobs.directory import handbook_source
from jobs.documents import FailedDocument, SourceDocument
from jobs.indexing import Indexer
from jobs.reindex import ReindexJob
from store.documents import DocumentRepository
from store.embedding import SentenceTransformerEmbedder
from store.index_runs import IndexRunRepository

HANDBOOK_ROOT = sample_kb.handbook_root()


@pytest.fixture(scope="session")
def handbook_root() -> Path:
    return HANDBOOK_ROOT


@pytest.fixture(scope="session")
async def handbook_items() -> list[SourceDocument | FailedDocument]:
    items = [item async for item in handbook_source(HANDBOOK_ROOT).documents()]
    assert all(isinstance(item, SourceDocument | FailedDocument) for item in items)
    return items  # type: ignore[return-value]


@pytest.fixture(scope="session")
def handbook_page(
    handbook_items: list[SourceDocument | FailedDocument],
) -> Callable[[str], SourceDocument]:
    """Look up one converted handbook page by its path below `pages/`."""
    by_uri = {item.uri: item for item in handbook_items}

    def page(path: str) -> SourceDocument:
        item = by_uri[f"pages/{path}"]
        assert isinstance(item, SourceDocument), item
        return item

    return page


def write_minimal_pdf(lines: list[str], *, title: str | None = None) -> bytes:
    """A one-page PDF whose text layer holds `lines` in Helvetica (ASCII only)."""
    content = (
        "BT /F1 12 Tf 72 720 Td 14 TL " + " ".join(f"({line}) Tj T*" for line in lines) + " ET"
    )
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        " /Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(content)} >>\nstream\n{content}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    if title is not None:
        objects.append(f"<< /Title ({title}) >>")
    pdf = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(pdf))
        pdf += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref_at = len(pdf)
    pdf += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    pdf += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    info = f" /Info {len(objects)} 0 R" if title is not None else ""
    trailer = (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info} >>\nstartxref\n{xref_at}\n%%EOF\n"
    )
    return pdf + trailer.encode()


@pytest.fixture
def minimal_pdf() -> Callable[..., bytes]:
    return write_minimal_pdf


@pytest.fixture
def reindex_job(
    pool: asyncpg.Pool, embedder: SentenceTransformerEmbedder, tmp_path: Path
) -> Callable[[dict[str, str]], ReindexJob]:
    """`reindex_job(credentials)`: the real job, with credentials as the environment gives them."""

    def make(credentials: dict[str, str]) -> ReindexJob:
        documents = DocumentRepository(pool)
        return ReindexJob(
            pool=pool,
            indexer=Indexer(repository=documents, embedder=embedder),
            documents=documents,
            runs=IndexRunRepository(pool),
            base_dir=tmp_path,
            credentials=credentials,
        )

    return make
