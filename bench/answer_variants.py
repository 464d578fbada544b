"""Reasoner variants scored on the answer sets in seconds: a cached replica of `kb eval answers`.

    python bench/answer_variants.py [--datasets squad2 hotpotqa] [--variants default ...]
        [--half A|B|all] [--matching TEXT] [--dump DIR] [--kb-home DIR]
        [--eval-dir ../shared/eval]

`kb eval answers` runs the whole loop per question against Postgres; a run takes 10–20
minutes, too slow to try hundreds of ideas. This replica runs the same loop (the same
`AgentLoop`, `ExtractiveReasoner`, `EvidenceScorer`, sentence splitter and metrics) over
the same eval database (`kb_eval_<dataset>_w400`, made by `kb eval answers`; KB_HOME
or --kb-home must point at it), but remembers, per dataset, whatever does not change
while the reasoner is tuned: the hits of every query text, the passages read for every
list of hits, the stored chunk texts and the sentence vectors. A query or sentence seen
for the first time goes to the real retriever, reader or model (and is remembered);
everything else comes from bench/out/answer_variants/<dataset>.pkl. Grounding is
re-verified against the remembered stored chunk texts, as `kb eval answers` does.

Questions are split into two halves by a fixed hash of their id (sha256, first byte
even: A, odd: B). Rules are developed on half A; half B is looked at to confirm. The
table shows each variant's metrics on A, B and all. `--dump DIR` writes every question's
answer (escalation, claims with support and citation, sub-questions, queries) as JSON
lines, for error analysis.

A variant is a name, a sentence and the options it changes; `default` is the product.
"""

from __future__ import annotations

from _env import REPO  # first: the environment, before numpy loads

# isort: split

import argparse
import asyncio
import dataclasses
import hashlib
import json
import pickle
import time
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from agent.answer import Answer
from agent.eval.answers import AnswerCase, CaseOutcome, answer_metrics, load_cases, run_cases
from agent.grounding import GroundingVerifier
from agent.language.questions import QuestionAnalyzer
from agent.loop import AgentLoop, LoopOptions
from agent.reasoners.evidence import EvidenceOptions, EvidenceScorer
from agent.reasoners.extractive import ExtractiveOptions, ExtractiveReasoner
from agent.retrieval.hybrid import EF_SEARCH, HybridRetriever
from agent.retrieval.reading import Passage, Reader
from agent.retrieval.rerank import TitleLinkReranker
from agent.sentence_vectors import SentenceVectors
from agent.sentences import SentenceSplitter
from bot.eval_command import eval_database, eval_database_name
from bot.settings import Settings
from store.corpus import ChunkText, CorpusReader
from store.embedding import SentenceTransformerEmbedder
from store.filters import ChunkFilter
from store.keyword_search import KeywordSearch
from store.runs import RunOutcome, RunStart
from store.sentence_vectors import SentenceVectorRepository
from store.vector_search import ChunkHit, VectorSearch

OUT = REPO / "bench" / "out" / "answer_variants"
console = Console(width=200)


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    description: str
    loop: LoopOptions = field(default_factory=LoopOptions)
    reasoner: ExtractiveOptions = field(default_factory=ExtractiveOptions)
    evidence: EvidenceOptions = field(default_factory=EvidenceOptions)


def _variant(name: str, description: str, **changes: Mapping[str, Any]) -> Variant:
    """A variant changing some fields of the loop, reasoner and evidence options."""
    return Variant(
        name,
        description,
        loop=dataclasses.replace(LoopOptions(), **changes.get("loop", {})),
        reasoner=dataclasses.replace(ExtractiveOptions(), **changes.get("reasoner", {})),
        evidence=dataclasses.replace(EvidenceOptions(), **changes.get("evidence", {})),
    )


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        _variant("default", "the product's settings"),
        _variant(
            "joint-0.5",
            "partial quotes jointly carrying half the key terms answer",
            reasoner={"joint_coverage": 0.5},
        ),
        _variant(
            "strong-0.5",
            "strong support needs half the key terms, not 0.6",
            evidence={"strong_coverage": 0.5},
        ),
        _variant("floor-0.30", "cosine floor 0.30 instead of 0.35", evidence={"floor": 0.30}),
        _variant("floor-0.40", "cosine floor 0.40 instead of 0.35", evidence={"floor": 0.40}),
        _variant(
            "claims-5",
            "five claims per sub-question, not four",
            reasoner={"claims_per_question": 5},
        ),
        _variant(
            "margin-0.25",
            "a runner-up within 0.25 of the best is kept, not 0.15",
            reasoner={"runner_up_margin": 0.25},
        ),
        _variant("no-hop", "no second hop", loop={"max_steps": 4}, reasoner={"hop_names": 0}),
        _variant("hop-1", "one name per second hop, not two", reasoner={"hop_names": 1}),
        _variant(
            "no-rarity",
            "every key term weighs the same (no rarity weights)",
            evidence={"rarity_weights": False},
        ),
        _variant(
            "no-paraphrase",
            "no strong support from a close paraphrase",
            evidence={"paraphrase_similarity": 2.0},
        ),
    )
}


def half(case_id: str) -> str:
    """The fixed half of a question: A (develop) or B (confirm), by a hash of its id."""
    return "A" if hashlib.sha256(case_id.encode()).digest()[0] % 2 == 0 else "B"


# --- the caches --------------------------------------------------------------------------


@dataclass(slots=True)
class Cache:
    hits: dict[tuple[str, int, str], list[ChunkHit]] = field(default_factory=dict)
    passages: dict[tuple[tuple[int, float], ...], list[Passage]] = field(default_factory=dict)
    chunk_texts: dict[int, ChunkText] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    changed: bool = False

    @classmethod
    def load(cls, path: Path) -> Cache:
        if not path.is_file():
            return cls()
        with path.open("rb") as handle:
            return cls(**pickle.load(handle))

    def save(self, path: Path) -> None:
        if not self.changed:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        state = {k: getattr(self, k) for k in ("hits", "passages", "chunk_texts", "vectors")}
        with temporary.open("wb") as handle:
            pickle.dump(state, handle, protocol=pickle.HIGHEST_PROTOCOL)
        temporary.replace(path)
        self.changed = False


class CachedRetriever:
    def __init__(self, inner: HybridRetriever, cache: Cache) -> None:
        self._inner = inner
        self._cache = cache

    async def retrieve(
        self, query: str, *, limit: int = 10, where: ChunkFilter | None = None
    ) -> list[ChunkHit]:
        key = (query, limit, repr(where))
        found = self._cache.hits.get(key)
        if found is None:
            found = await self._inner.retrieve(query, limit=limit, where=where)
            self._cache.hits[key] = found
            self._cache.changed = True
        return found


class CachedReader(Reader):
    def __init__(self, corpus: CorpusReader, cache: Cache) -> None:
        super().__init__(corpus)
        self._cache = cache

    async def read(self, hits: Sequence[ChunkHit]) -> list[Passage]:
        key = tuple((h.chunk_id, h.score) for h in hits)
        found = self._cache.passages.get(key)
        if found is None:
            found = await super().read(hits)
            self._cache.passages[key] = found
            self._cache.changed = True
        return found


class CachedChunks:
    def __init__(self, corpus: CorpusReader, cache: Cache) -> None:
        self._corpus = corpus
        self._cache = cache

    async def chunk_texts(self, chunk_ids: Sequence[int]) -> dict[int, ChunkText]:
        missing = [i for i in chunk_ids if i not in self._cache.chunk_texts]
        if missing:
            self._cache.chunk_texts.update(await self._corpus.chunk_texts(missing))
            self._cache.changed = True
        return {i: self._cache.chunk_texts[i] for i in chunk_ids if i in self._cache.chunk_texts}


class CachedVectorStore:
    def __init__(self, inner: SentenceVectorRepository, cache: Cache) -> None:
        self._inner = inner
        self._cache = cache

    async def get(self, *, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        found = {h: self._cache.vectors[h] for h in hashes if h in self._cache.vectors}
        missing = [h for h in hashes if h not in found]
        if missing:
            stored = await self._inner.get(model=model, hashes=missing)
            self._cache.vectors.update(stored)
            self._cache.changed = self._cache.changed or bool(stored)
            found.update(stored)
        return found

    async def put(self, *, model: str, vectors: Mapping[str, np.ndarray]) -> None:
        self._cache.vectors.update(vectors)
        self._cache.changed = True
        await self._inner.put(model=model, vectors=vectors)


@dataclass(slots=True)
class _Stored:
    stats: dict[str, Any]
    queries: list[str] = field(default_factory=list)


class MemoryRuns:
    """Runs kept in memory: the loop stores its stats here, the metrics read them back."""

    def __init__(self) -> None:
        self._runs: dict[int, _Stored] = {}

    async def start(self, run: RunStart) -> int:
        self._runs[len(self._runs) + 1] = _Stored({})
        return len(self._runs)

    async def finish(self, run_id: int, outcome: RunOutcome) -> None:
        self._runs[run_id] = _Stored(dict(outcome.stats), list(outcome.queries))

    async def fail(self, run_id: int, *, error: str, steps: Sequence[Any]) -> None:
        self._runs.pop(run_id, None)

    async def get(self, run_id: int) -> _Stored | None:
        return self._runs.get(run_id)

    def queries(self, run_id: int | None) -> list[str]:
        stored = self._runs.get(run_id or 0)
        return stored.queries if stored else []


class Recording:
    """An answerer that remembers every answer it gave, for the dump."""

    def __init__(self, loop: AgentLoop) -> None:
        self._loop = loop
        self.answers: list[Answer] = []

    async def answer(self, question: str) -> Answer:
        answer = await self._loop.answer(question)
        self.answers.append(answer)
        return answer


# --- running -----------------------------------------------------------------------------


@dataclass(slots=True)
class Harness:
    """One dataset's database, models and caches, shared by every variant."""

    pool: Any
    embedder: SentenceTransformerEmbedder
    keyword: KeywordSearch
    cache: Cache
    corpus: CorpusReader

    def loop(self, variant: Variant, runs: MemoryRuns) -> AgentLoop:
        analyzer = QuestionAnalyzer(self.keyword.analyzer)
        vectors = SentenceVectors(
            embedder=self.embedder,
            store=CachedVectorStore(SentenceVectorRepository(self.pool), self.cache),
        )
        scorer = EvidenceScorer(
            analyzer=analyzer,
            splitter=SentenceSplitter(),
            vectors=vectors,
            options=variant.evidence,
            corpus_terms=self.keyword,
        )
        reasoner = ExtractiveReasoner(analyzer=analyzer, scorer=scorer, options=variant.reasoner)
        retriever = HybridRetriever(
            embedder=self.embedder,
            vector_search=VectorSearch(self.pool, ef_search=EF_SEARCH),
            keyword_search=self.keyword,
            corpus=self.corpus,
            reranker=TitleLinkReranker(titles=self.keyword, analyzer=self.keyword.analyzer),
        )
        return AgentLoop(
            retriever=CachedRetriever(retriever, self.cache),
            reader=CachedReader(self.corpus, self.cache),
            reasoner=reasoner,
            fallback=reasoner,
            verifier=GroundingVerifier(CachedChunks(self.corpus, self.cache)),
            stems=lambda text: frozenset(analyzer.stems(text)),
            runs=runs,  # type: ignore[arg-type]
            options=variant.loop,
        )


async def run_variant(
    harness: Harness, variant: Variant, cases: Sequence[AnswerCase]
) -> tuple[list[CaseOutcome], list[Answer], MemoryRuns, float]:
    runs = MemoryRuns()
    answerer = Recording(harness.loop(variant, runs))
    started = time.perf_counter()
    outcomes = await run_cases(
        cases,
        answerer=answerer,
        runs=runs,  # type: ignore[arg-type]
        chunks=CachedChunks(harness.corpus, harness.cache),
    )
    return outcomes, answerer.answers, runs, time.perf_counter() - started


SHOWN = (
    ("abstain_balanced_accuracy", "bal.acc"),
    ("abstain_recall", "abst.rec"),
    ("false_escalation_rate", "false esc"),
    ("answer_recall", "ans.rec"),
    ("all_gold_cited", "all gold"),
    ("citation_precision", "cit.prec"),
    ("grounding_rate", "ground"),
    ("mean_steps", "steps"),
)


def by_half(outcomes: Sequence[CaseOutcome]) -> dict[str, dict[str, float | int | None]]:
    parts = {"A": [o for o in outcomes if half(o.case.id) == "A"]}
    parts["B"] = [o for o in outcomes if half(o.case.id) == "B"]
    parts["all"] = list(outcomes)
    return {k: answer_metrics(v) for k, v in parts.items() if v}


def dump(
    path: Path, outcomes: Sequence[CaseOutcome], answers: Sequence[Answer], runs: MemoryRuns
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for outcome, answer in zip(outcomes, answers, strict=True):
            case = outcome.case
            row = {
                "id": case.id,
                "half": half(case.id),
                "question": case.question,
                "answerable": case.answerable,
                "answers": case.answers,
                "gold": case.gold,
                "escalate": answer.escalate,
                "stop": answer.stop_reason,
                "cited": outcome.cited,
                "sub_questions": [dataclasses.asdict(s) for s in answer.sub_questions],
                "claims": [
                    {
                        "quote": c.quote,
                        "support": c.support,
                        "score": c.score,
                        "sub_question": c.sub_question,
                        "uri": answer.citation(c.citation).uri,
                    }
                    for c in answer.claims
                ],
                "steps": outcome.steps,
                "queries": runs.queries(answer.run_id),
            }
            handle.write(json.dumps(row) + "\n")


async def harness_for(
    stack: AsyncExitStack, settings: Settings, name: str, embedder: SentenceTransformerEmbedder
) -> Harness:
    pool = await stack.enter_async_context(
        eval_database(settings, eval_database_name(name, max_words=400))
    )
    corpus = CorpusReader(pool)
    keyword = KeywordSearch(corpus)
    await keyword.refresh()
    stack.push_async_callback(keyword.close)
    return Harness(pool, embedder, keyword, Cache.load(OUT / f"{name}.pkl"), corpus)


async def main_async(args: argparse.Namespace) -> None:
    settings = Settings.model_validate({"KB_HOME": args.kb_home} if args.kb_home else {})
    embedder = SentenceTransformerEmbedder(
        model=settings.embedding_model, torch_threads=settings.torch_threads
    )
    await embedder.load()
    try:
        for name in args.datasets:
            cases = load_cases(args.eval_dir / name)
            if args.half != "all":
                cases = [c for c in cases if half(c.id) == args.half]
            if args.matching:
                cases = [c for c in cases if args.matching.casefold() in c.question.casefold()]
            if args.limit:
                cases = cases[: args.limit]
            async with AsyncExitStack() as stack:
                harness = await harness_for(stack, settings, name, embedder)
                table = Table(title=f"{name}: {len(cases)} questions (halves A / B / all)")
                table.add_column("variant")
                for _, label in SHOWN:
                    table.add_column(label, justify="right")
                table.add_column("s", justify="right")
                for variant_name in args.variants:
                    variant = VARIANTS[variant_name]
                    outcomes, answers, runs, seconds = await run_variant(harness, variant, cases)
                    harness.cache.save(OUT / f"{name}.pkl")
                    metrics = by_half(outcomes)
                    if args.dump:
                        dump(args.dump / f"{name}.{variant_name}.jsonl", outcomes, answers, runs)
                    table.add_row(
                        variant.name, *(_cell(metrics, k) for k, _ in SHOWN), f"{seconds:.0f}"
                    )
                    if args.json:
                        args.json.mkdir(parents=True, exist_ok=True)
                        (args.json / f"{name}.{variant_name}.json").write_text(
                            json.dumps(metrics, indent=2) + "\n"
                        )
                console.print(table)
                for variant_name in args.variants:
                    console.print(
                        f"  [bold]{variant_name}[/]: {VARIANTS[variant_name].description}"
                    )
    finally:
        embedder.close()


def _cell(metrics: Mapping[str, Mapping[str, float | int | None]], key: str) -> str:
    values = [metrics.get(h, {}).get(key) for h in ("A", "B", "all")]
    return " / ".join("—" if v is None else f"{v:.3f}" for v in values)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["squad2", "hotpotqa"])
    parser.add_argument("--variants", nargs="+", default=["default"], choices=list(VARIANTS))
    parser.add_argument("--half", choices=["A", "B", "all"], default="all")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--matching", default=None, help="only questions holding this text")
    parser.add_argument("--dump", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--kb-home", type=Path, default=None)
    parser.add_argument("--eval-dir", type=Path, default=REPO.parent / "shared" / "eval")
    args = parser.parse_args(argv)
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
