"""Retrievers: turn a query into scored chunks. Dense (pgvector) for now; hybrid comes next."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from store.embedding import Embedder
from store.filters import ChunkFilter
from store.vector_search import ChunkHit, VectorSearch


class Retriever(Protocol):
    async def retrieve(self, query: str, *, limit: int = 10) -> list[ChunkHit]: ...


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

    async def retrieve(self, query: str, *, limit: int = 10) -> list[ChunkHit]:
        vector = await self.embed_query(query)
        return await self._search.nearest(
            vector, limit=limit, where=ChunkFilter(sources=self._sources)
        )
