"""Re-embedding every source with a newly configured model, losing nothing on the way.

Before a pass indexes anything, `ModelChange.prepare` compares the configured model with
the index's active one. The first model is simply adopted. A different one is built
beside the active vectors (store/embedding_space.py): every distinct chunk text of every
source is embedded with it, batch by batch, each batch committed, so a re-embed that is
killed resumes where it stopped. Questions keep searching the active model's vectors the
whole time; the switch is one transaction, retried until chunks written meanwhile by
other reindexes are covered too. No document is ever deleted for a model change.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from jobs.chunking import Chunk
from store.embedding import Embedder, ModelIdentity
from store.embedding_space import ChunkToEmbed, EmbeddingSpace, label

log = logging.getLogger(__name__)

ProgressCallback = Callable[[int, int], None]


class ModelChange:
    def __init__(self, *, space: EmbeddingSpace, embedder: Embedder, batch_size: int) -> None:
        self._space = space
        self._embedder = embedder
        self._batch_size = max(1, batch_size)

    async def prepare(
        self, *, dry_run: bool, progress: ProgressCallback | None = None
    ) -> tuple[str | None, int]:
        """Make the configured model the active one; (a warning to report, texts embedded)."""
        model = self._embedder.identity
        active = await self._space.active()
        if active is None:
            if not dry_run:
                await self._space.adopt_first(model)
            return None, 0
        if active == model:
            return None, 0
        if dry_run:
            texts = await self._space.chunk_texts()
            return (
                f"the embedding model would change from {label(active)} to {label(model)}: "
                f"{texts} chunk texts of every source would be re-embedded first",
                0,
            )
        embedded = await self._rebuild(active, model, progress)
        return (
            f"embedding model changed from {label(active)} to {label(model)}: {embedded} chunk "
            "texts of every source re-embedded beside the old vectors, then switched",
            embedded,
        )

    async def _rebuild(
        self, active: ModelIdentity, model: ModelIdentity, progress: ProgressCallback | None
    ) -> int:
        if await self._space.begin_next(model):
            log.warning("re-embedding every chunk with %s (was %s)", label(model), label(active))
        else:
            log.warning("resuming the re-embed with %s", label(model))
        embedded = 0
        while True:
            embedded += await self._fill(progress)
            await self._space.build_next_index()
            if await self._space.switch_to_next():
                return embedded

    async def _fill(self, progress: ProgressCallback | None) -> int:
        """Embed every chunk text still missing a next vector; how many were embedded."""
        total = await self._space.chunk_texts()
        done = total - await self._space.count_missing_next()
        embedded = 0
        while batch := await self._space.missing_next(limit=self._batch_size):
            vectors = await self._embedder.embed_batch([embedding_text(c) for c in batch])
            await self._space.store_next([c.text_hash for c in batch], vectors)
            embedded += len(batch)
            if progress:
                progress(min(done + embedded, total), total)
        return embedded


def embedding_text(chunk: ChunkToEmbed) -> str:
    """What the indexer embedded for this chunk: the same text its hash was taken of."""
    return Chunk(0, chunk.text, 0, len(chunk.text), chunk.heading_path).embedding_text()
