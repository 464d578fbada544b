"""Retrievers: turn a query into scored chunks. `DenseRetriever` is pgvector alone; the
product uses `agent.retrieval.hybrid.HybridRetriever`, which fits the same protocol."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from store.embedding import Embedder
from store.filters import ChunkFilter
from store.vector_search import ChunkHit, VectorSearch


class Retriever(Protocol):
    async def retrieve(
        self, query: str, *, limit: int = 10, where: ChunkFilter | None = None
    ) -> list[ChunkHit]:
        """The best `limit` chunks for `query`; `where` (default: the retriever's own
        filter) restricts them."""
        ...


class DenseRetriever:
    """Nearest chunks to the embedded query, by cosine similarity."""

    def __init__(
        self,
        *,
        embedder: Embedder,
        search: VectorSearch,
        sources: Sequence[str] | None = None,
    ) -> None:
        self._embedder = embedder
        self._search = search
        self._sources = sources

    async def embed_query(self, query: str) -> np.ndarray:
        return (await self._embedder.embed_batch([query]))[0]

    async def retrieve(
        self, query: str, *, limit: int = 10, where: ChunkFilter | None = None
    ) -> list[ChunkHit]:
        vector = await self.embed_query(query)
        where = ChunkFilter(sources=self._sources) if where is None else where
        return await self._search.nearest(vector, limit=limit, where=where)
