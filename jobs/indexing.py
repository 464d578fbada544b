"""One indexing pass over a source: hash diff, embed only new chunk texts, swap per document.

For each listed document: same content hash → skipped (no chunking, no embedding);
only the metadata changed → rows updated, vectors kept; otherwise → re-chunked, chunk
texts already embedded reuse their stored vectors, the rest are embedded in batches, and
the document's chunks are swapped in one transaction. Documents gone from the source
are deleted, unless the listing looks incomplete.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from jobs.chunking import Chunk, ChunkingPolicy, chunk_text
from jobs.documents import (
    FailedDocument,
    GoneDocument,
    Source,
    SourceDocument,
    SourceItem,
    UnchangedDocument,
)
from jobs.hashing import chunk_hash, content_hash, metadata_hash
from jobs.model_change import ModelChange
from store.documents import ChunkRecord, DocumentRecord, DocumentRepository, StoredDocument
from store.embedding import Embedder

log = logging.getLogger(__name__)

ProgressCallback = Callable[[int, int], None]
"""Called with (documents done, documents listed) as the pass goes."""


@dataclass(slots=True)
class IndexReport:
    source: str
    documents_added: int = 0
    documents_updated: int = 0
    documents_unchanged: int = 0
    documents_deleted: int = 0
    documents_failed: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0
    chunks_deleted: int = 0
    # Chunk texts of every source re-embedded first because the embedding model changed.
    chunks_reembedded: int = 0
    seconds: float = 0.0
    failures: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    dry_run: bool = False
    # A dry run lists each document it would change: {"uri": ..., "change": added|updated|deleted}.
    changes: list[dict[str, str]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether the run added, changed or deleted any document."""
        return bool(self.documents_added or self.documents_updated or self.documents_deleted)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def would(self, change: str, uri: str) -> None:
        """Record, on a dry run, one document the run would add, update or delete."""
        if self.dry_run:
            self.changes.append({"uri": uri, "change": change})


@dataclass(frozen=True, slots=True)
class _Pending:
    document: DocumentRecord
    chunks: list[Chunk]
    hashes: list[str]
    is_new: bool
    previous_chunks: int


@dataclass(frozen=True, slots=True)
class IndexOptions:
    kind: str = "directory"
    collection: str = "default"
    dry_run: bool = False
    # Refuse to delete when the listing shrank below this share of the stored documents.
    min_listing_ratio: float = 0.5


class Indexer:
    def __init__(
        self,
        *,
        repository: DocumentRepository,
        embedder: Embedder,
        policy: ChunkingPolicy | None = None,
        embed_batch_size: int = 256,
    ) -> None:
        self._repository = repository
        self._embedder = embedder
        self._policy = policy or ChunkingPolicy()
        self.embed_batch_size = embed_batch_size

    async def run(
        self,
        source: Source,
        *,
        options: IndexOptions | None = None,
        progress: ProgressCallback | None = None,
    ) -> IndexReport:
        options = options or IndexOptions()
        started = time.perf_counter()
        report = IndexReport(source=source.name, dry_run=options.dry_run)
        model_change = ModelChange(
            space=self._repository.embedding_space(),
            embedder=self._embedder,
            batch_size=self.embed_batch_size,
        )
        warning, report.chunks_reembedded = await model_change.prepare(
            dry_run=options.dry_run, progress=progress
        )
        if warning:
            report.warnings.append(warning)
        items = [item async for item in source.documents()]
        source_id = await self._source_id(source, options)
        stored = (
            await self._repository.documents_of(source_id=source_id)
            if source_id is not None
            else {}
        )
        batch = _Batch(self, source_id, report, options)
        for done, item in enumerate(items, start=1):
            await self._process(item, stored, batch, report)
            if progress:
                progress(done, len(items))
        await batch.flush()
        await self._delete_missing(source, source_id, items, stored, report, options)
        if report.changed and not options.dry_run:
            await self._repository.refresh_statistics()
        report.seconds = round(time.perf_counter() - started, 3)
        return report

    async def _source_id(self, source: Source, options: IndexOptions) -> int | None:
        """The source's row; a dry run only looks it up (None: never indexed), never writes."""
        if options.dry_run:
            return await self._repository.source_id(source.name)
        return await self._repository.ensure_source(
            name=source.name, kind=options.kind, collection=options.collection
        )

    async def _process(
        self,
        item: SourceItem,
        stored: dict[str, StoredDocument],
        batch: _Batch,
        report: IndexReport,
    ) -> None:
        if isinstance(item, UnchangedDocument):
            report.documents_unchanged += 1
            return
        if isinstance(item, GoneDocument):
            return  # not listed, so _delete_missing removes any stored copy
        if isinstance(item, FailedDocument):
            report.documents_failed += 1
            report.failures.append({"uri": item.uri, "reason": item.reason})
            log.warning("skipped %s: %s", item.uri, item.reason)
            return
        report.warnings.extend(f"{item.uri}: {note}" for note in item.notes)
        record = _record(item)
        previous = stored.get(item.uri)
        if previous and previous.content_hash == record.content_hash:
            if previous.metadata_hash == record.metadata_hash:
                report.documents_unchanged += 1
            else:
                report.documents_updated += 1
                report.would("updated", item.uri)
                if batch.source_id is not None and not batch.options.dry_run:
                    await self._repository.update_metadata(
                        source_id=batch.source_id, document=record
                    )
            return
        chunks = chunk_text(record.text, self._policy)
        if not chunks:
            report.documents_failed += 1
            report.failures.append({"uri": item.uri, "reason": "no text to index after cleaning"})
            return
        previous_chunks = (
            await self._repository.chunk_count(document_id=previous.id) if previous else 0
        )
        hashes = [chunk_hash(c.embedding_text()) for c in chunks]
        await batch.add(_Pending(record, chunks, hashes, previous is None, previous_chunks))

    async def _delete_missing(
        self,
        source: Source,
        source_id: int | None,
        items: Sequence[SourceItem],
        stored: dict[str, StoredDocument],
        report: IndexReport,
        options: IndexOptions,
    ) -> None:
        listed = {item.uri for item in items if not isinstance(item, GoneDocument)}
        missing = sorted(uri for uri in stored if uri not in listed)
        if not missing:
            return
        reason = _unsafe_to_delete(source, len(listed), len(stored), options)
        if reason:
            report.warnings.append(
                f"kept {len(missing)} documents missing from the listing: {reason}"
            )
            log.warning("%s: %s", source.name, report.warnings[-1])
            return
        report.documents_deleted = len(missing)
        for uri in missing:
            report.would("deleted", uri)
        if source_id is not None and not options.dry_run:
            report.chunks_deleted += await self._repository.delete_documents(
                source_id=source_id, uris=missing
            )

    async def embed_pending(
        self, pending: Sequence[_Pending], report: IndexReport
    ) -> list[np.ndarray]:
        """Vectors for every chunk of `pending`: stored ones reused, the rest embedded."""
        all_hashes = [h for p in pending for h in p.hashes]
        known = await self._repository.stored_embeddings(text_hashes=all_hashes)
        texts: dict[str, str] = {}
        for p in pending:
            for chunk, digest in zip(p.chunks, p.hashes, strict=True):
                if digest not in known:
                    texts.setdefault(digest, chunk.embedding_text())
        report.chunks_reused += sum(1 for h in all_hashes if h in known)
        report.chunks_embedded += len(all_hashes) - sum(1 for h in all_hashes if h in known)
        if texts:
            vectors = await self._embedder.embed_batch(list(texts.values()))
            known.update(zip(texts.keys(), vectors, strict=True))
        return [np.stack([known[h] for h in p.hashes]) for p in pending]


class _Batch:
    """Documents waiting to be embedded together (embedding in large batches is faster)."""

    def __init__(
        self, indexer: Indexer, source_id: int | None, report: IndexReport, options: IndexOptions
    ):
        self.indexer = indexer
        self.source_id = source_id
        self.report = report
        self.options = options
        self.pending: list[_Pending] = []

    async def add(self, pending: _Pending) -> None:
        self.pending.append(pending)
        if sum(len(p.chunks) for p in self.pending) >= self.indexer.embed_batch_size:
            await self.flush()

    async def flush(self) -> None:
        if not self.pending:
            return
        pending, self.pending = self.pending, []
        for p in pending:
            if p.is_new:
                self.report.documents_added += 1
            else:
                self.report.documents_updated += 1
                self.report.chunks_deleted += p.previous_chunks
            self.report.would("added" if p.is_new else "updated", p.document.uri)
        if self.source_id is None or self.options.dry_run:
            return
        vectors = await self.indexer.embed_pending(pending, self.report)
        repository = self.indexer._repository
        for p, matrix in zip(pending, vectors, strict=True):
            await repository.replace_document(
                source_id=self.source_id, document=p.document, chunks=_chunk_records(p, matrix)
            )


def _record(doc: SourceDocument) -> DocumentRecord:
    return DocumentRecord(
        uri=doc.uri,
        title=doc.title,
        url=doc.url,
        text=doc.text,
        content_hash=content_hash(doc.text),
        metadata_hash=metadata_hash(title=doc.title, url=doc.url, metadata=doc.metadata),
        metadata=doc.metadata,
        source_updated_at=doc.updated_at,
    )


def _chunk_records(pending: _Pending, vectors: np.ndarray) -> list[ChunkRecord]:
    return [
        ChunkRecord(
            ordinal=chunk.ordinal,
            text=chunk.text,
            text_hash=digest,
            char_start=chunk.start,
            char_end=chunk.end,
            heading_path=chunk.heading_path,
            embedding=vector,
        )
        for chunk, digest, vector in zip(pending.chunks, pending.hashes, vectors, strict=True)
    ]


def _unsafe_to_delete(
    source: Source, listed: int, stored: int, options: IndexOptions
) -> str | None:
    if getattr(source, "listing_complete", True) is False:
        return "the source reported an incomplete listing"
    if stored and listed < stored * options.min_listing_ratio:
        return (
            f"the source listed {listed} documents where {stored} are stored (below "
            f"{options.min_listing_ratio:.0%}); if that is right, set a lower "
            "min_listing_ratio for this source in the sources file (0 turns the check off)"
        )
    return None
