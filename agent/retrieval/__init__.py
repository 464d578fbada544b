"""Retrieval tools: hybrid search (BM25 + vectors, fused), re-ranking, reading neighbours."""
