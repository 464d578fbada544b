"""The one-shot baseline of bench/answer_latency.py, not the product: retrieve once, quote.

It is the seed of the agent loop and implements the same `Answerer` protocol (it ignores
`history`; `scope` restricts its one retrieval). Each claim is a sentence quoted verbatim
from a retrieved chunk; a claim is kept only if its quote is found again in the chunk it
cites (agent/grounding.py). With a `RunRepository`, every run is stored.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from agent.answer import Answer, Citation, Claim, Gap, StepCallback, Turn
from agent.grounding import normalise, quote_occurs
from agent.retrieval.dense import Retriever
from agent.sentences import sentences
from store.embedding import Embedder
from store.filters import NO_FILTER, ChunkFilter
from store.runs import RunOutcome, RunRepository, RunStart
from store.vector_search import ChunkHit

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class OneShotPolicy:
    candidates: int = 8
    chunks_read: int = 5
    # Below this cosine between question and best chunk, the knowledge base does not cover it.
    chunk_floor: float = 0.40
    # A sentence must be at least this close to the question to become a claim.
    sentence_floor: float = 0.45
    max_claims: int = 4
    max_claims_per_chunk: int = 2


@dataclass(frozen=True, slots=True)
class _Candidate:
    hit: ChunkHit
    text: str
    score: float


class OneShotAnswerer:
    def __init__(
        self,
        *,
        retriever: Retriever,
        embedder: Embedder,
        policy: OneShotPolicy | None = None,
        runs: RunRepository | None = None,
    ) -> None:
        self._retriever = retriever
        self._embedder = embedder
        self._policy = policy or OneShotPolicy()
        self._runs = runs

    async def answer(
        self,
        question: str,
        *,
        history: Sequence[Turn] = (),
        scope: ChunkFilter = NO_FILTER,
        origin: Mapping[str, str] | None = None,
        on_step: StepCallback | None = None,
    ) -> Answer:
        run_id = None
        if self._runs is not None:
            run_id = await self._runs.start(
                RunStart(
                    question=question,
                    scope=_scope_json(scope),
                    origin=origin or {},
                    history_turns=len(history),
                    reasoner="one-shot",
                )
            )
        answer = await self._answer(question, scope)
        if self._runs is not None and run_id is not None:
            await self._runs.finish(
                run_id,
                RunOutcome(
                    stop_reason=answer.stop_reason,
                    escalate=answer.escalate,
                    queries=[question],
                    evidence_chunk_ids=[c.chunk_id for c in answer.claims],
                    verification={
                        "verified": len(answer.claims),
                        "rejected": answer.rejected_claims,
                    },
                    answer=answer.as_dict(),
                ),
            )
        return dataclasses.replace(answer, run_id=run_id)

    async def _answer(self, question: str, scope: ChunkFilter) -> Answer:
        timings: dict[str, float] = {}
        started = time.perf_counter()
        hits = await self._retriever.retrieve(question, limit=self._policy.candidates, where=scope)
        timings["retrieve"] = _ms_since(started)
        # Hybrid order can put a keyword match first; coverage is judged on meaning.
        if not hits or max(h.score for h in hits) < self._policy.chunk_floor:
            return _not_covered(question, hits, timings)
        started = time.perf_counter()
        candidates = await self._score_sentences(question, hits[: self._policy.chunks_read])
        timings["extract"] = _ms_since(started)
        chosen = self._choose(candidates)
        if not chosen:
            return _not_covered(question, hits, timings)
        return _grounded_answer(question, chosen, timings)

    async def _score_sentences(self, question: str, hits: list[ChunkHit]) -> list[_Candidate]:
        # A sentence ending in ':' only introduces what follows; alone it answers nothing.
        pairs = [
            (hit, s.text) for hit in hits for s in sentences(hit.text) if not s.text.endswith(":")
        ]
        if not pairs:
            return []
        vectors = await self._embedder.embed_batch([question, *(text for _, text in pairs)])
        scores = vectors[1:] @ vectors[0]
        # Blend in the chunk's own score: a sentence in the best passage beats a lookalike.
        return [
            _Candidate(hit, text, float(0.75 * score + 0.25 * hit.score))
            for (hit, text), score in zip(pairs, np.asarray(scores), strict=True)
        ]

    def _choose(self, candidates: list[_Candidate]) -> list[_Candidate]:
        chosen: list[_Candidate] = []
        per_chunk: dict[int, int] = {}
        seen: set[str] = set()
        for candidate in sorted(candidates, key=lambda c: c.score, reverse=True):
            if candidate.score < self._policy.sentence_floor:
                break
            key = normalise(candidate.text)
            if (
                key in seen
                or per_chunk.get(candidate.hit.chunk_id, 0) >= self._policy.max_claims_per_chunk
            ):
                continue
            seen.add(key)
            per_chunk[candidate.hit.chunk_id] = per_chunk.get(candidate.hit.chunk_id, 0) + 1
            chosen.append(candidate)
            if len(chosen) == self._policy.max_claims:
                break
        return chosen


def _grounded_answer(question: str, chosen: list[_Candidate], timings: dict[str, float]) -> Answer:
    citations: dict[int, Citation] = {}
    claims: list[Claim] = []
    rejected = 0
    for candidate in chosen:
        hit = candidate.hit
        if not quote_occurs(candidate.text, hit.text):
            rejected += 1
            log.warning("dropped a claim whose quote is not in chunk %d", hit.chunk_id)
            continue
        cited = citations.setdefault(hit.document_id, _citation(len(citations) + 1, hit))
        claims.append(
            Claim(
                statement=candidate.text,
                quote=candidate.text,
                citation=cited.number,
                chunk_id=hit.chunk_id,
                sub_question=question,
                score=candidate.score,
            )
        )
    return Answer(
        question=question,
        claims=tuple(claims),
        citations=tuple(citations.values()),
        stop_reason="enough_evidence" if claims else "insufficient_grounding",
        escalate=not claims,
        rejected_claims=rejected,
        timings_ms=timings,
    )


def _citation(number: int, hit: ChunkHit) -> Citation:
    return Citation(
        number=number,
        title=hit.title,
        url=hit.url,
        uri=hit.uri,
        chunk_id=hit.chunk_id,
        document_id=hit.document_id,
        source=hit.source,
        collection=hit.collection,
        section=" > ".join(hit.heading_path),
        updated_at=hit.updated_at,
    )


def _not_covered(question: str, hits: list[ChunkHit], timings: dict[str, float]) -> Answer:
    best = f"{hits[0].score:.2f}" if hits else "none"
    return Answer(
        question=question,
        claims=(),
        citations=(),
        stop_reason="insufficient_grounding",
        escalate=True,
        gaps=(
            Gap(
                sub_question=question,
                reason="too_weak" if hits else "no_results",
                detail="nothing in the knowledge base is close enough to the question "
                f"(best match {best})",
            ),
        ),
        timings_ms=timings,
    )


def _scope_json(scope: ChunkFilter) -> dict[str, object]:
    return {
        "sources": list(scope.sources) if scope.sources is not None else None,
        "collections": list(scope.collections) if scope.collections is not None else None,
    }


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
