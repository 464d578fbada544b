"""Keyword search: BM25 over chunk text (with document title and heading path), in memory.

- `bm25`: the scorer, rank-bm25's BM25Okapi over term ids;
- `pairs`: the same BM25 over adjacent word pairs;
- `terms`: the vocabulary and chunks as term-id sequences, shared by both;
- `service`: `KeywordSearch`, which keeps both in step with Postgres.
"""

from store.keyword_search.service import BuildStats, KeywordHits, KeywordOptions, KeywordSearch

__all__ = ["BuildStats", "KeywordHits", "KeywordOptions", "KeywordSearch"]
