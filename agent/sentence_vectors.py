"""Sentence vectors for scoring quotes: from memory, then the store, then the model.

Embedding the sentences read at query time was nearly all of the one-shot answer's
latency. A sentence's vector depends only on its text and the model, so it is kept in
memory (bounded) and in the `sentence_vectors` table keyed by (model name, text hash):
each sentence is embedded once per model, whichever process reads it first.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np

from store.embedding import QUERY_BATCH, Embedder
from store.sentence_vectors import text_hash

log = logging.getLogger(__name__)


class VectorStore(Protocol):
    async def get(self, *, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]: ...

    async def put(self, *, model: str, vectors: Mapping[str, np.ndarray]) -> None: ...


class SentenceVectors:
    def __init__(
        self, *, embedder: Embedder, store: VectorStore | None = None, memory: int = 50_000
    ) -> None:
        self._embedder = embedder
        self._store = store
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()
        self._limit = memory
        self.embedded = 0  # sentences this instance had to embed

    @property
    def model(self) -> str:
        """The name of the model whose vectors these are."""
        return self._embedder.identity.name

    async def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length row per text, in order."""
        if not texts:
            return np.zeros((0, self._embedder.identity.dimension), dtype=np.float32)
        keys = [text_hash(t) for t in texts]
        found = {k: self._memory[k] for k in dict.fromkeys(keys) if k in self._memory}
        model = self._embedder.identity.name
        wanted = [k for k in dict.fromkeys(keys) if k not in found]
        if wanted and self._store is not None:
            found.update(await self._store.get(model=model, hashes=wanted))
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if missing:
            fresh = await self._embed(list(missing.values()))
            computed = dict(zip(missing, fresh, strict=True))
            self.embedded += len(computed)
            found.update(computed)
            if self._store is not None:
                await self._keep(model, computed)
        for key in found:
            self._remember(key, found[key])
        return np.stack([found[k] for k in keys])

    async def _keep(self, model: str, computed: Mapping[str, np.ndarray]) -> None:
        """Store fresh vectors; the store is a cache, so a write that fails (a deadlock, a
        full disk, a statement timeout) costs the next reader an embedding, not this
        answer: it is logged and the vectors are used all the same."""
        assert self._store is not None
        try:
            await self._store.put(model=model, vectors=computed)
        except Exception as error:  # noqa: BLE001 - any store failure; see the docstring
            log.warning(
                "could not store %d sentence vectors (%s); they will be embedded again",
                len(computed),
                type(error).__name__,
            )

    async def _embed(self, texts: list[str]) -> np.ndarray:
        # In query-sized slices: the embedder runs those on one thread, which stays fast
        # when the other core is busy (a bigger batch takes every core and, on a shared
        # 2-core machine, was measured 10-20 times slower).
        parts = [
            await self._embedder.embed_batch(texts[i : i + QUERY_BATCH])
            for i in range(0, len(texts), QUERY_BATCH)
        ]
        return np.concatenate(parts)

    def _remember(self, key: str, vector: np.ndarray) -> None:
        self._memory[key] = vector
        self._memory.move_to_end(key)
        if len(self._memory) > self._limit:
            self._memory.popitem(last=False)
