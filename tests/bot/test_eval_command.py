"""`kb eval retrieval` on a six-document BEIR-layout dataset, against the test server."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from agent.retrieval.hybrid import HybridOptions
from bot.cli import main, retrieval
from bot.eval_command import EvalRequest, eval_retrieval_command
from bot.settings import Settings
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder

DATASET = Path(__file__).resolve().parents[1] / "fixtures" / "beir-mini"
KEYS = {
    "hit@1", "hit@5", "hit@10", "mrr@10", "ndcg@10", "recall@10", "recall@100", "all@10",
    "queries",
}  # fmt: skip


def _settings(pg_server: EmbeddedPostgres, tmp_path: Path) -> Settings:
    return Settings(DATABASE_URL=pg_server.dsn, KB_HOME=str(tmp_path / "home"))


async def test_eval_scores_every_system_and_a_rerun_embeds_nothing(
    pg_server: EmbeddedPostgres,
    embedder: SentenceTransformerEmbedder,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = _settings(pg_server, tmp_path)
    out = tmp_path / "scores.json"
    request = EvalRequest(DATASET, "test", json_path=out, max_words=64)
    report = await eval_retrieval_command(settings, request, embedder=embedder)
    scores = json.loads(out.read_text())
    assert {"bm25", "vector", "hybrid", "hybrid+rerank"} <= set(scores)
    for system in ("bm25", "vector", "hybrid", "hybrid+rerank"):
        assert set(scores[system]) >= KEYS
        assert scores[system]["queries"] == 3  # the unjudged query is not scored
    assert scores["hybrid"]["hit@1"] == 1.0
    assert scores["bm25"]["recall@100"] == 1.0
    assert report.systems["hybrid"].summary.queries == 3
    table = capsys.readouterr().out
    assert "| hybrid+rerank |" in table and "nDCG@10 95% CI" in table

    before = embedder.texts_embedded
    await eval_retrieval_command(
        settings, EvalRequest(DATASET, "test", max_words=64), embedder=embedder
    )
    # Only the three queries were embedded: the corpus was already indexed.
    assert embedder.texts_embedded - before == 3


async def test_bm25_can_be_scaled_over_every_match(
    pg_server: EmbeddedPostgres,
    embedder: SentenceTransformerEmbedder,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    request = EvalRequest(DATASET, "test", max_words=64, keyword_scale="matches", pair_weight=0)
    report = await eval_retrieval_command(
        _settings(pg_server, tmp_path), request, embedder=embedder
    )
    assert report.systems["hybrid"].summary.queries == 3
    assert "BM25 z-scored over its matches, word pairs weighted 0)" in capsys.readouterr().out


async def test_a_missing_split_names_the_splits_there(
    pg_server: EmbeddedPostgres, tmp_path: Path
) -> None:
    with pytest.raises(click.ClickException, match="splits here: test"):
        await eval_retrieval_command(_settings(pg_server, tmp_path), EvalRequest(DATASET, "dev"))


def test_the_command_is_reachable_from_kb() -> None:
    result = CliRunner().invoke(main, ["eval", "retrieval", "--help"])
    assert result.exit_code == 0
    assert "--split" in result.output and "--json" in result.output
    # The command's default is the product's, so a plain run measures what users get.
    pair_weight = next(p for p in retrieval.params if p.name == "pair_weight")
    assert (
        pair_weight.default == HybridOptions().pair_weight == EvalRequest(DATASET, "x").pair_weight
    )
