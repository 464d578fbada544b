"""Keyword search: BM25 over chunk text (with document title and heading path), in memory.

- `bm25`: the scorer, rank-bm25's BM25Okapi over term ids, eager (the reference form);
- `pairs`: the same BM25 over adjacent word pairs, and dense ids for pairs;
- `terms`: the vocabulary and chunks as term-id sequences, shared by both;
- `segments`, `live`, `segmented`: the index the service keeps: immutable segments of
  raw term counts, scored at query time from counts over the live chunks, with a
  deletion mask and merges;
- `service`: `KeywordSearch`, which keeps the index in step with Postgres.
"""

from store.keyword_search.service import BuildStats, KeywordHits, KeywordOptions, KeywordSearch

__all__ = ["BuildStats", "KeywordHits", "KeywordOptions", "KeywordSearch"]
