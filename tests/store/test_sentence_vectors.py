"""Cached sentence vectors: stored once per (model, text), never handed to another model."""

from __future__ import annotations

import asyncpg
import numpy as np

from store.sentence_vectors import SentenceVectorRepository, text_hash


async def test_vectors_come_back_for_their_model_only_and_a_second_put_keeps_the_first(
    pool: asyncpg.Pool,
) -> None:
    repo = SentenceVectorRepository(pool)
    key = text_hash("You earn 4 hours per pay period.")
    first = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    await repo.put(model="m1", vectors={key: first})
    await repo.put(model="m1", vectors={key: np.array([0.0, 1.0, 0.0], dtype=np.float32)})
    await repo.put(model="m2", vectors={key: np.array([0.0, 0.0, 1.0, 0.0], dtype=np.float32)})
    got = await repo.get(model="m1", hashes=[key, text_hash("unknown")])
    assert list(got) == [key] and np.allclose(got[key], first)
    assert (await repo.get(model="m2", hashes=[key]))[key].shape == (4,)
    assert await repo.get(model="m3", hashes=[key]) == {}
    assert await repo.forget_model(keep="m1") == 1
    assert await repo.count(model="m2") == 0 and await repo.count(model="m1") == 1
