"""Sentence vectors are embedded once per (model, text): memory first, then the store."""

from __future__ import annotations

import asyncpg
import numpy as np

from agent.sentence_vectors import SentenceVectors
from store.sentence_vectors import SentenceVectorRepository


async def test_a_sentence_is_embedded_once_per_model_across_instances(
    pool: asyncpg.Pool, hashing_embedder: type
) -> None:
    store = SentenceVectorRepository(pool)
    model = hashing_embedder("hash-a", 16)
    texts = [f"sentence number {i} about leave" for i in range(6)]
    first = SentenceVectors(embedder=model, store=store)
    vectors = await first.vectors(texts)
    again = await first.vectors([texts[2], "a new one"])
    assert first.embedded == 7 and model.texts_embedded == 7
    assert np.allclose(again[0], vectors[2])
    # Another process (a new instance) reads them from the store.
    second = SentenceVectors(embedder=model, store=store)
    assert np.allclose(await second.vectors(texts), vectors)
    assert second.embedded == 0
    # Another model never reads the first model's vectors.
    other = SentenceVectors(embedder=hashing_embedder("hash-b", 16), store=store)
    await other.vectors(texts[:2])
    assert other.embedded == 2
