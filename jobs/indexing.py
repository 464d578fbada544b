"""One indexing pass over a source: hash diff, embed only new chunk texts, swap per document.

For each listed document: same content hash → skipped (no chunking, no embedding);
only the metadata changed → rows updated, vectors kept; otherwise → re-chunked, chunk
texts already embedded reuse their stored vectors, the rest are embedded in batches, and
the document's chunks are swapped in one transaction. Documents gone from the source
are deleted, unless the listing looks incomplete.

The listing is consumed as the source yields it: a connector that reads its system page
by page has its first documents embedded and written while it is still listing, and the
pass keeps only the listed uris (for the deletions at the end), not the documents. A
source that fails half-way leaves what it had written; each document is whole, and a
change feed's cursor is saved only after a complete run (jobs/connectors/base.py).

Where the changed documents are embedded depends on the caller. A reindex run
(jobs/reindex.py) passes a `QueuedRun`: they are queued for `kb jobs --worker` processes
and the pass waits for them (jobs/queued_writes.py), embedding them itself when no worker
is alive, from the first queued group on, while the listing still runs. Without one
(library callers, benchmarks, dry runs) they are embedded here, in batches. Both ways
reuse stored vectors by chunk hash (jobs/chunk_vectors.py) and swap each document's chunks
in one transaction, and the report counts the same.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Protocol

import numpy as np

from jobs.chunk_vectors import ChunkToVector, vectors_for
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
from jobs.queue_consumer import QueueConsumer
from jobs.queued_writes import Distribution, QueuedWrites
from store.documents import ChunkRecord, DocumentRecord, DocumentRepository, StoredDocument
from store.embedding import Embedder
from store.index_queue import QueuedChunk, QueuedDocument

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
    previous_id: int | None  # the stored copy's id; None for a new document


@dataclass(frozen=True, slots=True)
class QueuedRun:
    """A run whose changed documents go through the index queue (jobs/queued_writes.py)."""

    distribution: Distribution
    run_id: int
    # Who this process is when it takes queued documents itself.
    claimer: str


class _Writes(Protocol):
    """Where the pass sends each changed document to be embedded and written."""

    written: int

    async def add(self, pending: _Pending) -> None: ...

    async def finish(self, progress: Callable[[int], None] | None) -> None: ...

    async def abandon(self) -> None: ...


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
        queue: QueuedRun | None = None,
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
        # Items are settled as the source yields them, so a source that lists lazily (a
        # change feed reading page after page) has its first documents written while it
        # is still listing, and memory holds a batch, not the whole source; what is kept
        # of the listing is its uris, for the deletions at the end.
        listing = _Listing()
        target: _Target | None = None
        settled = 0  # items done without going through `writes`
        try:
            async for item in source.documents():
                if target is None:  # the source row is made once the source answers
                    target = await self._target(source, report, options, queue)
                listing.note(item)
                if not await self._process(
                    item, target.stored, target.writes, report, target.source_id, options
                ):
                    settled += 1
                if progress:
                    progress(settled + target.writes.written, listing.count)
        except BaseException:
            if target is not None:
                await target.writes.abandon()
            raise
        if target is None:
            target = await self._target(source, report, options, queue)
        await target.writes.finish(
            (lambda written: progress(settled + written, listing.count)) if progress else None
        )
        await self._delete_missing(
            source, target.source_id, listing, target.stored, report, options
        )
        if report.changed and not options.dry_run:
            await self._repository.refresh_statistics()
        report.seconds = round(time.perf_counter() - started, 3)
        return report

    async def _target(
        self,
        source: Source,
        report: IndexReport,
        options: IndexOptions,
        queue: QueuedRun | None,
    ) -> _Target:
        source_id = await self._source_id(source, options)
        stored = (
            await self._repository.documents_of(source_id=source_id)
            if source_id is not None
            else {}
        )
        return _Target(source_id, stored, self._writes(source_id, report, options, queue))

    def _writes(
        self,
        source_id: int | None,
        report: IndexReport,
        options: IndexOptions,
        queue: QueuedRun | None,
    ) -> _Writes:
        if queue is None or source_id is None or options.dry_run:
            return _Batch(self, source_id, report, options)
        consumer = QueueConsumer(
            queue=queue.distribution.queue,
            documents=self._repository,
            embedder=self._embedder,
            claimer=queue.claimer,
            # The pass's own batch size, whether it embeds in-process or takes queued work.
            options=replace(queue.distribution.options, batch_chunks=self.embed_batch_size),
        )
        writes = QueuedWrites(
            distribution=queue.distribution,
            run_id=queue.run_id,
            source_id=source_id,
            model=self._embedder.identity,
            consumer=consumer,
        )
        return _Queued(writes, report)

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
        writes: _Writes,
        report: IndexReport,
        source_id: int | None,
        options: IndexOptions,
    ) -> bool:
        """Settle one listed item; True if it went to `writes` to be embedded."""
        if isinstance(item, UnchangedDocument):
            report.documents_unchanged += 1
            return False
        if isinstance(item, GoneDocument):
            return False  # not listed, so _delete_missing removes any stored copy
        if isinstance(item, FailedDocument):
            report.documents_failed += 1
            report.failures.append({"uri": item.uri, "reason": item.reason})
            log.warning("skipped %s: %s", item.uri, item.reason)
            return False
        report.warnings.extend(f"{item.uri}: {note}" for note in item.notes)
        record = _record(item)
        previous = stored.get(item.uri)
        if previous and previous.content_hash == record.content_hash:
            if previous.metadata_hash == record.metadata_hash:
                report.documents_unchanged += 1
            else:
                report.documents_updated += 1
                report.would("updated", item.uri)
                if source_id is not None and not options.dry_run:
                    await self._repository.update_metadata(source_id=source_id, document=record)
            return False
        chunks = chunk_text(record.text, self._policy)
        if not chunks:
            report.documents_failed += 1
            report.failures.append({"uri": item.uri, "reason": "no text to index after cleaning"})
            return False
        hashes = [chunk_hash(c.embedding_text()) for c in chunks]
        await writes.add(_Pending(record, chunks, hashes, previous.id if previous else None))
        return True

    async def _delete_missing(
        self,
        source: Source,
        source_id: int | None,
        listing: _Listing,
        stored: dict[str, StoredDocument],
        report: IndexReport,
        options: IndexOptions,
    ) -> None:
        listed = listing.listed
        missing = sorted(uri for uri in stored if uri not in listed)
        if not missing:
            return
        # A GoneDocument is the source saying so (a change feed's deletion, an HTTP 410),
        # not a listing that came back short: it counts as accounted for, so one thread
        # deleted in Slack is deleted even when it was the source's only document.
        gone = sum(1 for uri in listing.gone if uri in stored)
        reason = _unsafe_to_delete(source, len(listed) + gone, len(stored), options)
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
        found = await vectors_for(
            [_to_vectors(p) for p in pending],
            repository=self._repository,
            embedder=self._embedder,
        )
        report.chunks_reused += sum(f.reused for f in found)
        report.chunks_embedded += sum(f.embedded for f in found)
        return [f.matrix for f in found]


@dataclass(slots=True)
class _Listing:
    """What a pass keeps of the source's listing: uris, not documents."""

    listed: set[str] = field(default_factory=set)  # every uri but the gone ones
    gone: set[str] = field(default_factory=set)
    count: int = 0

    def note(self, item: SourceItem) -> None:
        self.count += 1
        (self.gone if isinstance(item, GoneDocument) else self.listed).add(item.uri)


@dataclass(frozen=True, slots=True)
class _Target:
    """Where a pass writes: the source's row, what it holds, and the writer."""

    source_id: int | None
    stored: dict[str, StoredDocument]
    writes: _Writes


class _Batch:
    """Documents embedded together in this process (embedding in large batches is faster)."""

    def __init__(
        self, indexer: Indexer, source_id: int | None, report: IndexReport, options: IndexOptions
    ):
        self.indexer = indexer
        self.source_id = source_id
        self.report = report
        self.options = options
        self.pending: list[_Pending] = []
        self.written = 0

    async def add(self, pending: _Pending) -> None:
        self.pending.append(pending)
        if sum(len(p.chunks) for p in self.pending) >= self.indexer.embed_batch_size:
            await self.flush()

    async def finish(self, progress: Callable[[int], None] | None) -> None:
        await self.flush()
        if progress:
            progress(self.written)

    async def abandon(self) -> None:
        """The listing failed: documents not yet embedded are dropped, as before."""

    async def flush(self) -> None:
        if not self.pending:
            return
        pending, self.pending = self.pending, []
        repository = self.indexer._repository
        for p in pending:
            if p.previous_id is None:
                self.report.documents_added += 1
            else:
                self.report.documents_updated += 1
                self.report.chunks_deleted += await repository.chunk_count(
                    document_id=p.previous_id
                )
            self.report.would("added" if p.previous_id is None else "updated", p.document.uri)
        if self.source_id is None or self.options.dry_run:
            self.written += len(pending)
            return
        vectors = await self.indexer.embed_pending(pending, self.report)
        for p, matrix in zip(pending, vectors, strict=True):
            await repository.replace_document(
                source_id=self.source_id, document=p.document, chunks=_chunk_records(p, matrix)
            )
            self.written += 1


class _Queued:
    """Documents queued for workers (jobs/queued_writes.py); counts come back from the queue."""

    def __init__(self, writes: QueuedWrites, report: IndexReport) -> None:
        self._writes = writes
        self._report = report
        self.written = 0

    async def add(self, pending: _Pending) -> None:
        chunks = tuple(
            QueuedChunk(c.ordinal, c.text, h, c.start, c.end, c.heading_path)
            for c, h in zip(pending.chunks, pending.hashes, strict=True)
        )
        await self._writes.add(QueuedDocument(pending.document, chunks))

    async def abandon(self) -> None:
        await self._writes.abandon()

    async def finish(self, progress: Callable[[int], None] | None) -> None:
        def written(done: int) -> None:
            self.written = done
            if progress:
                progress(done)

        totals, failures = await self._writes.finish(written)
        report = self._report
        report.documents_added += totals.documents_added
        report.documents_updated += totals.documents_updated
        report.chunks_embedded += totals.chunks_embedded
        report.chunks_reused += totals.chunks_reused
        report.chunks_deleted += totals.chunks_deleted
        report.documents_failed += len(failures)
        report.failures.extend(failures)


def _to_vectors(pending: _Pending) -> list[ChunkToVector]:
    return [
        ChunkToVector(digest, chunk.embedding_text())
        for chunk, digest in zip(pending.chunks, pending.hashes, strict=True)
    ]


def _record(doc: SourceDocument) -> DocumentRecord:
    return DocumentRecord(
        uri=doc.uri,
        title=doc.title,
        url=doc.url,
        text=doc.text,
        content_hash=content_hash(doc.text),
        metadata_hash=metadata_hash(
            title=doc.title, url=doc.url, metadata=doc.metadata, collection=doc.collection
        ),
        metadata=doc.metadata,
        source_updated_at=doc.updated_at,
        collection=doc.collection,
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
