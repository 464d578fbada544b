"""Vectors for a group of changed documents: stored ones reused by chunk hash, the rest embedded.

The in-process pass (jobs/indexing.py) and whoever takes queued documents
(jobs/queue_consumer.py) both call `vectors_for`, so a document's chunks are embedded and
counted the same way wherever it is indexed: a chunk whose text already has a vector
from the active model reuses it, and the other texts of the group go to the model in one
call (embedding in large batches is faster).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from store.documents import DocumentRepository
from store.embedding import Embedder


@dataclass(frozen=True, slots=True)
class ChunkToVector:
    text_hash: str
    embedding_text: str


@dataclass(frozen=True, slots=True)
class DocumentVectors:
    matrix: np.ndarray  # one row per chunk, in the document's order
    embedded: int  # chunks whose text had no stored vector
    reused: int  # chunks whose text's stored vector was reused


async def vectors_for(
    documents: Sequence[Sequence[ChunkToVector]],
    *,
    repository: DocumentRepository,
    embedder: Embedder,
) -> list[DocumentVectors]:
    """Each document's vectors, embedding each missing text once for the whole group."""
    known = await repository.stored_embeddings(
        text_hashes=[c.text_hash for chunks in documents for c in chunks]
    )
    missing: dict[str, str] = {}
    for chunks in documents:
        for chunk in chunks:
            if chunk.text_hash not in known:
                missing.setdefault(chunk.text_hash, chunk.embedding_text)
    if missing:
        vectors = await embedder.embed_batch(list(missing.values()))
        known.update(zip(missing, vectors, strict=True))
    return [
        DocumentVectors(
            matrix=np.stack([known[c.text_hash] for c in chunks]),
            embedded=sum(1 for c in chunks if c.text_hash in missing),
            reused=sum(1 for c in chunks if c.text_hash not in missing),
        )
        for chunks in documents
    ]
