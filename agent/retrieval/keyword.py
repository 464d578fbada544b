"""Keyword search alone (BM25) as a `Retriever`: for a search made of a quote's own words,
where the words are the point (the corroboration search, agent/corroboration.py) and
embedding the query would cost more than the search itself."""

from __future__ import annotations

from store.filters import NO_FILTER, ChunkFilter
from store.keyword_search import KeywordSearch
from store.vector_search import ChunkHit


class KeywordRetriever:
    def __init__(self, search: KeywordSearch) -> None:
        self._search = search

    async def retrieve(
        self, query: str, *, limit: int = 10, where: ChunkFilter | None = None
    ) -> list[ChunkHit]:
        """The best `limit` chunks for `query` by BM25; `score` is the BM25 score."""
        return await self._search.search(query, limit=limit, where=where or NO_FILTER)
