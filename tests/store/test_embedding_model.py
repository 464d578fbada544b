from __future__ import annotations

import asyncpg
import pytest

from store.documents import DocumentRepository
from store.embedding import ModelIdentity, SentenceTransformerEmbedder
from store.errors import EmbeddingModelMismatch


async def test_the_packaged_model_embeds_offline_with_unit_vectors(
    embedder: SentenceTransformerEmbedder,
) -> None:
    vectors = await embedder.embed_batch(["annual leave", "vacation days", "PIV card reader"])
    assert vectors.shape == (3, 384)
    assert embedder.identity == ModelIdentity("sentence-transformers/all-MiniLM-L6-v2", 384)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


async def test_a_model_change_is_detected_and_never_adopted_by_wiping(pool: asyncpg.Pool) -> None:
    repo = DocumentRepository(pool)
    assert await repo.adopt_model(ModelIdentity("model-a", 8)) is True
    assert await repo.adopt_model(ModelIdentity("model-a", 8)) is False
    await repo.check_model(ModelIdentity("model-a", 8))
    with pytest.raises(EmbeddingModelMismatch, match="run `kb index` to re-embed"):
        await repo.check_model(ModelIdentity("model-b", 16))
    with pytest.raises(EmbeddingModelMismatch, match="model-a"):
        await repo.adopt_model(ModelIdentity("model-b", 16))


async def test_a_large_batch_keeps_its_order_and_each_texts_own_vector(
    embedder: SentenceTransformerEmbedder,
) -> None:
    # Lengths from one word to past the model's 256-token window, shuffled, so grouping
    # by token count reorders them inside the embedder.
    texts = [
        " ".join(f"leave policy clause {i} word{j}" for j in range(k))
        for i, k in enumerate([1, 90, 3, 40, 7, 200, 2, 15, 60, 5, 1, 33])
    ]
    together = await embedder.embed_batch(texts)
    alone = [await embedder.embed_batch([text]) for text in texts]
    assert together.shape == (len(texts), 384)
    for row, single in zip(together, alone, strict=True):
        assert float(row @ single[0]) > 0.9999
    assert float(together[0] @ together[10]) < 0.9999  # different texts, different rows


def test_the_embedding_thread_can_run_below_the_event_loops_priority() -> None:
    import os
    import threading

    from store.embedding import _lower_thread_priority

    seen: list[int] = []

    def worker() -> None:
        tid = threading.get_native_id()
        before = os.getpriority(os.PRIO_PROCESS, tid)
        _lower_thread_priority(3)
        seen.append(os.getpriority(os.PRIO_PROCESS, tid) - before)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == [3]  # that thread only: on Linux each thread has its own nice value
