"""`kb eval answers DIR`: every question of an answer set through the full agent loop.

The corpus is indexed into a database of its own, as `kb eval retrieval` does (the
same database name, so both commands share one index of a dataset), with the same
settings as the product (one set of settings for every knowledge base). Progress goes
to stderr, the Markdown table to stdout, `--json PATH` writes the metrics.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import click

from agent.eval.answers import answer_metrics, load_cases, markdown_table, run_cases
from agent.eval.retrieval import DatasetError
from agent.retrieval.hybrid import EF_SEARCH, HybridRetriever
from agent.retrieval.rerank import TitleLinkReranker
from bot.eval_command import console, eval_database, eval_database_name, index_corpus, progress_bar
from bot.settings import Settings
from bot.wiring import build_agent_loop
from store.corpus import CorpusReader
from store.embedding import SentenceTransformerEmbedder
from store.keyword_search import KeywordSearch
from store.runs import RunRepository
from store.vector_search import VectorSearch


@dataclass(frozen=True, slots=True)
class AnswerEvalRequest:
    directory: Path
    json_path: Path | None = None
    limit: int | None = None
    seed: int | None = None
    max_words: int = 400


async def eval_answers_command(
    settings: Settings,
    request: AnswerEvalRequest,
    *,
    embedder: SentenceTransformerEmbedder | None = None,
) -> dict[str, float | int | None]:
    try:
        cases = load_cases(request.directory, limit=request.limit, seed=request.seed)
    except (DatasetError, OSError) as exc:
        raise click.ClickException(str(exc)) from exc
    name = request.directory.resolve().name
    model = embedder or SentenceTransformerEmbedder(
        model=settings.embedding_model,
        torch_threads=settings.torch_threads,
        query_graph_dir=settings.query_graph_dir,
    )
    database = eval_database_name(name, max_words=request.max_words)
    try:
        async with eval_database(settings, database) as pool:
            console.print("[dim]loading the embedding model…[/]")
            await model.load()
            await index_corpus(
                pool,
                model,
                name=name,
                corpus=request.directory / "corpus.jsonl",
                max_words=request.max_words,
            )
            corpus = CorpusReader(pool)
            keyword = KeywordSearch(corpus)
            try:
                await keyword.refresh()
                retriever = HybridRetriever(
                    embedder=model,
                    vector_search=VectorSearch(pool, ef_search=EF_SEARCH),
                    keyword_search=keyword,
                    corpus=corpus,
                    reranker=TitleLinkReranker(titles=keyword),
                )
                loop = build_agent_loop(
                    settings,
                    pool=pool,
                    embedder=model,
                    keyword_search=keyword,
                    retriever=retriever,
                )
                with progress_bar("questions") as advance:
                    outcomes = await run_cases(
                        cases,
                        answerer=loop,
                        runs=RunRepository(pool),
                        chunks=corpus,
                        progress=advance,
                    )
            finally:
                await keyword.close()
    finally:
        if embedder is None:
            model.close()
    metrics = answer_metrics(outcomes)
    reasoner = "claude" if settings.anthropic_api_key is not None else "extractive"
    click.echo(markdown_table(f"{name} ({len(cases)} questions, {reasoner} reasoner)", metrics))
    if request.json_path:
        request.json_path.write_text(json.dumps(metrics, indent=2) + "\n")
        console.print(f"[dim]wrote {request.json_path}[/]")
    return metrics
