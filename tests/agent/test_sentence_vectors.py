"""Sentence vectors are embedded once per (model, text): memory first, then the store."""

from __future__ import annotations

import logging

import asyncpg
import numpy as np
import pytest

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


async def test_a_store_write_that_fails_costs_a_log_line_not_the_answer(
    pool: asyncpg.Pool, hashing_embedder: type, caplog: pytest.LogCaptureFixture
) -> None:
    # A real Postgres error on the write (as a deadlock or a full disk would raise one).
    await pool.execute(
        "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS"
        " $$ BEGIN RAISE EXCEPTION 'disk full'; END $$;"
        " CREATE TRIGGER refuse BEFORE INSERT ON sentence_vectors"
        " FOR EACH ROW EXECUTE FUNCTION refuse();"
    )
    model = hashing_embedder("hash-a", 16)
    texts = ["annual leave accrues monthly", "sick leave is separate"]
    with caplog.at_level(logging.WARNING, logger="agent.sentence_vectors"):
        vectors = await SentenceVectors(
            embedder=model, store=SentenceVectorRepository(pool)
        ).vectors(texts)
    assert vectors.shape == (2, 16)
    assert np.allclose(vectors, await SentenceVectors(embedder=model).vectors(texts))
    assert "could not store 2 sentence vectors" in caplog.text
    assert await SentenceVectorRepository(pool).count(model="hash-a") == 0
