"""BM25 z-scores over the candidates or over every match, before and after the title links.

    KB_HOME=... python bench/keyword_scale.py [--eval-dir ../shared/eval]

Runs the real pipeline (`HybridRetriever` on Postgres) over SciFact train and HotpotQA
dev for both `HybridOptions.keyword_scale` settings, and on HotpotQA over a grid of
title-link settings, printing nDCG@10, Hit@1 and All@10 of the fused list (hybrid) and
of the re-ranked one (hybrid+rerank). It reads the databases `kb eval retrieval` builds
(`kb_eval_scifact_w400`, `kb_eval_hotpotqa_w400`): run that first, with the same
KB_HOME or DATABASE_URL. Each pass embeds only the queries.
"""

from __future__ import annotations

from _env import REPO  # first: the environment, before numpy loads

# isort: split


import argparse
import asyncio
from pathlib import Path
from typing import Literal

from rich.console import Console

from agent.eval.retrieval import BeirDataset, evaluate
from agent.retrieval.hybrid import EF_SEARCH, HybridOptions, HybridRetriever
from agent.retrieval.rerank import LinkOptions, TitleLinkReranker
from bot.eval_command import eval_database
from bot.settings import Settings
from store.corpus import CorpusReader
from store.embedding import SentenceTransformerEmbedder
from store.keyword_search import KeywordSearch
from store.vector_search import VectorSearch

SPLITS = {"scifact": "train", "hotpotqa": "dev"}
SCALES: tuple[Literal["candidates", "matches"], ...] = ("candidates", "matches")
DEFAULT_LINKS = LinkOptions()
HOTPOTQA_GRID = [
    LinkOptions(named, linked, top)
    for named, linked, top in [
        (0.2, 0.3, 5), (0.2, 0.3, 3), (0.3, 0.3, 5), (0.2, 0.4, 5),
        (0.3, 0.4, 5), (0.4, 0.4, 5), (0.2, 0.2, 5), (0.3, 0.3, 3),
    ]
]  # fmt: skip
console = Console(width=160)


async def run(eval_dir: Path) -> None:
    settings = Settings()
    embedder = SentenceTransformerEmbedder()
    for name, split in SPLITS.items():
        dataset = BeirDataset.load(eval_dir / name, split=split)
        async with eval_database(settings, f"kb_eval_{name}_w400") as pool:
            corpus = CorpusReader(pool)
            keyword = KeywordSearch(corpus)
            await keyword.refresh()
            chunk_uris = await corpus.chunk_uris()
            if not chunk_uris:
                raise SystemExit(f"{name}: no chunks; run `kb eval retrieval` on it first")
            grid = HOTPOTQA_GRID if name == "hotpotqa" else [DEFAULT_LINKS]
            for scale in SCALES:
                for links in grid:
                    retriever = HybridRetriever(
                        embedder=embedder,
                        vector_search=VectorSearch(pool, ef_search=EF_SEARCH),
                        keyword_search=keyword,
                        corpus=corpus,
                        reranker=TitleLinkReranker(
                            titles=keyword, analyzer=keyword.analyzer, options=links
                        ),
                        options=HybridOptions(keyword_scale=scale),
                    )
                    report = await evaluate(
                        dataset=dataset, retriever=retriever, chunk_uris=chunk_uris, resamples=200
                    )
                    fused = report.systems["hybrid"].summary.means
                    ranked = report.systems["hybrid+rerank"].summary.means
                    console.print(
                        f"{name:8s} {scale:10s} links {links.named_boost} / "
                        f"{links.linked_boost} / top {links.from_top}   hybrid nDCG@10 "
                        f"{fused['ndcg@10']:.3f} Hit@1 {fused['hit@1']:.3f}   +rerank nDCG@10 "
                        f"{ranked['ndcg@10']:.3f} Hit@1 {ranked['hit@1']:.3f} "
                        f"All@10 {ranked['all@10']:.3f}"
                    )
            await keyword.close()
    embedder.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval-dir", type=Path, default=REPO.parent / "shared" / "eval")
    asyncio.run(run(parser.parse_args().eval_dir))


if __name__ == "__main__":
    main()
