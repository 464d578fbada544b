"""The ONNX query graph: used for questions, and only while it gives torch's vectors."""

from __future__ import annotations

import logging
import random
from pathlib import Path

import numpy as np
import pytest
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.modules import Pooling

from store.embedding import QUERY_BATCH, SentenceTransformerEmbedder, packaged_model_path
from store.query_graph import graph_path, open_query_graph


def _texts(count: int, seed: int) -> list[str]:
    """Questions of every length and script, including empty and past the token window."""
    rng = random.Random(seed)
    alphabet = "abcdefghij klmnop qrstuvwxyz 0123456789 ?!.,:;'\"<>@#*_`~ éüß 休暇 ошибка 🙂\t\n"
    texts = ["", " ", "How many days of annual leave do I get?", "PIV"]
    while len(texts) < count:
        length = rng.choice([1, 5, 20, 80, 300, 2000])
        texts.append("".join(rng.choice(alphabet) for _ in range(length)))
    return texts


async def test_questions_go_through_the_graph_and_get_torchs_vectors(
    embedder: SentenceTransformerEmbedder,
) -> None:
    assert embedder.query_backend == "onnxruntime"
    texts = _texts(24, seed=7)
    # A batch larger than QUERY_BATCH is embedded by torch; each text alone by the graph.
    by_torch = await embedder.embed_batch(texts)
    assert len(texts) > QUERY_BATCH
    for text, expected in zip(texts, by_torch, strict=True):
        (alone,) = await embedder.embed_batch([text])
        assert np.abs(alone - expected).max() < 1e-4, repr(text)
        assert abs(float(np.linalg.norm(alone)) - 1.0) < 1e-5


@pytest.fixture(scope="module")
def model() -> SentenceTransformer:
    return SentenceTransformer(str(packaged_model_path()), device="cpu", local_files_only=True)


def test_a_damaged_graph_file_is_removed_and_questions_stay_on_torch(
    model: SentenceTransformer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = graph_path(model, cache_dir=tmp_path, model_path="m")
    path.write_bytes(b"not an onnx graph")
    with caplog.at_level(logging.WARNING, logger="store.query_graph"):
        assert open_query_graph(model, cache_dir=tmp_path, model_path="m") is None
    assert not path.exists()  # the next process exports a good one
    assert "using torch" in caplog.text


def test_a_graph_folder_that_is_a_file_leaves_questions_on_torch(
    model: SentenceTransformer, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "graphs"
    cache_dir.write_text("KB_QUERY_GRAPH_DIR pointed at a file")
    assert open_query_graph(model, cache_dir=cache_dir, model_path="m") is None


def test_a_model_the_graph_does_not_reproduce_is_left_to_torch(
    model: SentenceTransformer, tmp_path: Path
) -> None:
    cls_pooled = SentenceTransformer(
        modules=[model[0], Pooling(model.get_embedding_dimension(), pooling_mode="cls")],
        device="cpu",
    )
    assert open_query_graph(cls_pooled, cache_dir=tmp_path, model_path="m") is None
    assert list(tmp_path.iterdir()) == []  # nothing exported


async def test_torch_embeds_questions_when_no_graph_folder_is_given() -> None:
    plain = SentenceTransformerEmbedder(torch_threads=1)
    try:
        await plain.load()
        assert plain.query_backend == "torch"
    finally:
        plain.close()
