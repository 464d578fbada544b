"""The query embedding as an ONNX graph: the same vectors as torch, in about half the time.

A question's vector is on the critical path of every retrieval. For one short text,
torch spends ~15 ms in all-MiniLM-L6-v2 on one core; onnxruntime runs the same network in
~7 ms, and releases the GIL while it does, so the keyword stage that runs beside it
(agent/retrieval/hybrid.py) is not held up (measured in bench/results/query_embedding.md).

The graph is exported from the loaded sentence-transformers model with torch's
`torch.export`-based exporter, once per model and library versions, into a cache folder;
later processes load the file. It is used only for the model shape it reproduces exactly
(a transformer, mean pooling, L2 normalisation), and only after it has matched torch's
vectors on a set of probe texts at load time; anything else returns None, and the caller
stays on torch.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

# Texts the exported graph must embed as torch does before it is used: short and long
# (past the 256-token window), empty, non-Latin, markup.
PROBE_TEXTS = (
    "How much annual leave do I earn?",
    "",
    "Wie beantrage ich Urlaub? 休暇の申請方法は？ 🙂",
    "<@U123> *bold* `code` https://example.com/a?b=c",
    " ".join(["expenses over the limit need a manager's approval"] * 60),
)
# Largest element-wise difference from torch's vectors accepted (measured: ~2e-7).
TOLERANCE = 1e-4


@dataclass(frozen=True, slots=True)
class QueryGraph:
    """An onnxruntime session that embeds texts as the torch model does."""

    session: Any
    tokenizer: Any
    window: int

    def encode(self, texts: list[str]) -> np.ndarray:
        tokens = self.tokenizer(
            texts, padding=True, truncation=True, max_length=self.window, return_tensors="np"
        )
        feed = {
            "input_ids": tokens["input_ids"].astype(np.int64),
            "attention_mask": tokens["attention_mask"].astype(np.int64),
        }
        (vectors,) = self.session.run(None, feed)
        return np.asarray(vectors, dtype=np.float32)


def open_query_graph(model: Any, *, cache_dir: Path, model_path: str) -> QueryGraph | None:
    """The model's query graph from `cache_dir`, exported there first if missing.

    None (and a log line) when the model's shape isn't one the graph reproduces, when
    onnxruntime or the exporter is missing, or when the graph's vectors differ from
    torch's: the caller then embeds queries with torch, as before.
    """
    if not _is_mean_pooled_normalised(model):
        log.info("query graph: model is not transformer + mean pooling + normalise; using torch")
        return None
    try:
        import onnxruntime
    except ImportError:
        log.info("query graph: onnxruntime is not installed; using torch")
        return None
    path = graph_path(model, cache_dir=cache_dir, model_path=model_path)
    try:
        if not path.is_file():
            _export(model, path)
        graph = QueryGraph(
            session=_session(onnxruntime, path),
            tokenizer=model.tokenizer,
            window=int(model.max_seq_length),
        )
        difference = _largest_difference(model, graph)
    except Exception as exc:  # noqa: BLE001 - any failure here only means "stay on torch"
        log.warning("query graph unavailable (%s: %s); using torch", type(exc).__name__, exc)
        _discard(path)
        return None
    if difference > TOLERANCE:
        log.warning("query graph differs from torch by %.2g; using torch", difference)
        _discard(path)
        return None
    log.info("query embeddings through onnxruntime (%s)", path.name)
    return graph


def graph_path(model: Any, *, cache_dir: Path, model_path: str) -> Path:
    """The file the model's graph is kept in (named by weights and library versions)."""
    return cache_dir / f"query-{_cache_key(model, model_path)}.onnx"


def _discard(path: Path) -> None:
    """Remove a graph file that failed, if there is one (the folder may not be usable)."""
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)


def _is_mean_pooled_normalised(model: Any) -> bool:
    names = [type(module).__name__ for module in model]
    if names != ["Transformer", "Pooling", "Normalize"]:
        return False
    config = model[1].get_config_dict()
    return config.get("pooling_mode") == "mean" and config.get("include_prompt", True)


def _pooled_module(transformer: Any) -> Any:
    """The torch module exported: token embeddings → masked mean → unit length."""
    import torch

    class MeanPooledNormalised(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            tokens = self.transformer(
                input_ids=input_ids, attention_mask=attention_mask
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
            mean = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2.0, dim=1)

    return MeanPooledNormalised().eval()


def _export(model: Any, path: Path) -> None:
    import torch

    module = _pooled_module(model[0].auto_model)
    sample = model.tokenizer(
        ["a short text", "a somewhat longer text to give the batch some padding"],
        padding=True,
        return_tensors="pt",
    )
    batch = torch.export.Dim("batch", max=1024)
    tokens = torch.export.Dim("tokens", max=int(model.max_seq_length))
    shapes = {"input_ids": {0: batch, 1: tokens}, "attention_mask": {0: batch, 1: tokens}}
    # The exporter logs a line per optional operator library it doesn't find and warns
    # about its own internals; none of it concerns the result, which is checked below.
    quiet = logging.getLogger("torch.onnx")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            program = torch.onnx.export(
                module,
                (sample["input_ids"], sample["attention_mask"]),
                input_names=["input_ids", "attention_mask"],
                output_names=["query_vector"],
                dynamic_shapes=shapes,
                dynamo=True,
                verbose=False,
            )
    finally:
        quiet.setLevel(level)
    if program is None:
        raise RuntimeError("torch.onnx.export returned no program")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.partial")
    partial.write_bytes(program.model_proto.SerializeToString())
    os.replace(partial, path)  # another process may be exporting the same graph


def _session(onnxruntime: Any, path: Path) -> Any:
    options = onnxruntime.SessionOptions()
    # A query is one short text: one thread, like the torch path (store/embedding.py).
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _largest_difference(model: Any, graph: QueryGraph) -> float:
    texts = list(PROBE_TEXTS)
    expected = model.encode(
        texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    one_by_one = np.vstack([graph.encode([text]) for text in texts])
    # A padded batch of the short ones (a batch of long texts would grow onnxruntime's
    # memory arena by ~100 MB for good; questions are short).
    short = [i for i, text in enumerate(texts) if len(text) < 200]
    together = graph.encode([texts[i] for i in short])
    return float(max(np.abs(one_by_one - expected).max(), np.abs(together - expected[short]).max()))


def _cache_key(model: Any, model_path: str) -> str:
    """Changes with the model's weights and the versions that export and run the graph."""
    import onnxruntime
    import torch
    import transformers

    digest = hashlib.sha256()
    for part in (model_path, torch.__version__, onnxruntime.__version__, transformers.__version__):
        digest.update(part.encode() + b"\0")
    for name, tensor in sorted(model[0].auto_model.state_dict().items()):
        digest.update(name.encode())
        digest.update(memoryview(tensor.detach().cpu().contiguous().numpy()).cast("B"))
    return digest.hexdigest()[:16]
