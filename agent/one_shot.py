"""The one-shot extractive answerer: retrieve once, pick the sentences that answer, verify.

It is the seed of the agent loop and implements the same `Answerer` protocol. Each claim
is a sentence quoted verbatim from a retrieved chunk; a claim is kept only if its quote
is found again in the chunk it cites (agent/grounding.py).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from agent.answer import Answer, Claim, SourceRef
from agent.grounding import normalise, quote_occurs
from agent.retrieval import Retriever
from agent.sentences import sentences
from store.embedding import Embedder
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
        self, *, retriever: Retriever, embedder: Embedder, policy: OneShotPolicy | None = None
    ) -> None:
        self._retriever = retriever
        self._embedder = embedder
        self._policy = policy or OneShotPolicy()

    async def answer(self, question: str) -> Answer:
        timings: dict[str, float] = {}
        started = time.perf_counter()
        hits = await self._retriever.retrieve(question, limit=self._policy.candidates)
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
    sources: dict[int, SourceRef] = {}
    claims: list[Claim] = []
    rejected = 0
    for candidate in chosen:
        hit = candidate.hit
        if not quote_occurs(candidate.text, hit.text):
            rejected += 1
            log.warning("dropped a claim whose quote is not in chunk %d", hit.chunk_id)
            continue
        ref = sources.setdefault(
            hit.document_id,
            SourceRef(
                len(sources) + 1, hit.title, hit.url, hit.uri, hit.chunk_id, hit.heading_path
            ),
        )
        claims.append(
            Claim(candidate.text, candidate.text, ref.number, hit.chunk_id, candidate.score)
        )
    return Answer(
        question=question,
        covered=bool(claims),
        claims=tuple(claims),
        sources=tuple(sources.values()),
        stop_reason="enough_evidence" if claims else "insufficient_grounding",
        rejected_claims=rejected,
        timings_ms=timings,
    )


def _not_covered(question: str, hits: list[ChunkHit], timings: dict[str, float]) -> Answer:
    best = f"{hits[0].score:.2f}" if hits else "none"
    return Answer(
        question=question,
        covered=False,
        claims=(),
        sources=(),
        stop_reason="insufficient_grounding",
        gaps=(
            f"nothing in the knowledge base is close enough to the question (best match {best})",
        ),
        timings_ms=timings,
    )


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
