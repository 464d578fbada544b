"""Cached sentence vectors: stored once per (model, text), never handed to another model."""

from __future__ import annotations

import asyncio

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


async def test_concurrent_puts_of_the_same_sentences_in_other_orders_never_deadlock(
    pool: asyncpg.Pool,
) -> None:
    """Passages of one question are scored at the same time, and their sentences often
    overlap; embedded together (shared model calls), their vectors are stored at the same
    moment. Each put is one transaction, so two puts taking the same keys in opposite
    orders deadlocked (seen in CI). Keys are inserted in one order now."""
    repo = SentenceVectorRepository(pool)
    vector = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    for round_ in range(15):
        keys = [text_hash(f"round {round_} sentence {n}") for n in range(300)]
        forward = {key: vector for key in keys}
        backward = {key: vector for key in reversed(keys)}
        await asyncio.gather(
            repo.put(model="m", vectors=forward), repo.put(model="m", vectors=backward)
        )
    assert await repo.count(model="m") == 15 * 300
