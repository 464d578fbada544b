"""The agent loop: route, plan, then retrieve → read → extract → judge → rewrite, bounded.

Each step runs the pending queries of every open sub-question concurrently (each within
the run's scope), reads the hits with their neighbouring chunks, extracts evidence,
and judges: rules first (a sub-question is answered by a strong quote), the reasoner
only for what the rules leave undecided. Gaps get rewritten queries; the loop stops
with a reason: enough evidence, the step budget spent, no better action (no new query,
or a step that added no evidence), or no retrieval needed. Then the reasoner writes the
claims and each claim's quote is verified against its chunk as stored (agent/grounding):
what fails is dropped and counted. Every run, with every step, is stored.

When a reasoner is unavailable (ReasonerUnavailable) the decision is retried with the
fallback reasoner, which then runs the rest of the run; the trace says so.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from agent.answer import (
    Answer,
    Citation,
    Claim,
    Conflict,
    Gap,
    StepCallback,
    StopReason,
    SubQuestion,
    Turn,
)
from agent.conflicts import find_conflicts
from agent.errors import ReasonerUnavailable, note_run
from agent.followups import compress, last_bot_turn
from agent.grounding import GroundingVerifier, QuoteCheck
from agent.language.questions import answer_type
from agent.language.spans import gap_sentence
from agent.reasoners.base import DraftClaim, Reasoner, Route
from agent.retrieval.dense import Retriever
from agent.retrieval.reading import Passage, Reader
from agent.state import (
    ActionRecord,
    AgentState,
    Evidence,
    GapState,
    Goal,
    PendingQuery,
    QueryRun,
    SourceRead,
)
from store.filters import NO_FILTER, ChunkFilter
from store.runs import RunOutcome, RunRepository, RunStart
from store.vector_search import ChunkHit

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class LoopOptions:
    max_steps: int = 4
    hits_per_query: int = 10
    # Hits of each sub-question read (with their neighbours) per step.
    read_per_question: int = 5
    max_claims: int = 8
    history_words: int = 400


class AgentLoop:
    """The `Answerer` the bot and the CLI call."""

    def __init__(
        self,
        *,
        retriever: Retriever,
        reader: Reader,
        reasoner: Reasoner,
        verifier: GroundingVerifier,
        stems: Callable[[str], frozenset[str]],
        fallback: Reasoner | None = None,
        runs: RunRepository | None = None,
        options: LoopOptions | None = None,
    ) -> None:
        self._retriever = retriever
        self._reader = reader
        self._reasoner = reasoner
        self._fallback = fallback
        self._verifier = verifier
        self._stems = stems
        self._runs = runs
        self._options = options or LoopOptions()

    @property
    def reasoner_name(self) -> str:
        return self._reasoner.name

    async def warm(self, question: str = "How do I get started?") -> None:
        """One run that is not stored: loads the model, the BM25 index and the caches."""
        await _Run(self, question, (), NO_FILTER, None).execute()

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
                    reasoner=self._reasoner.name,
                )
            )
        run = _Run(self, question, history, scope, on_step)
        started = time.perf_counter()
        try:
            answer = await run.execute()
        except Exception as exc:
            if self._runs is None or run_id is None:
                raise
            await self._fail(run_id, exc, run)
            note_run(exc, run_id)
            raise
        answer = dataclasses.replace(answer, run_id=run_id)
        if self._runs is not None and run_id is not None:
            await self._runs.finish(run_id, run.outcome(answer, _ms_since(started)))
        return answer

    async def _fail(self, run_id: int, exc: Exception, run: _Run) -> None:
        """Mark the run failed; best effort, since the store may be what failed."""
        assert self._runs is not None
        try:
            await self._runs.fail(
                run_id, error=f"{type(exc).__name__}: {exc}"[:500], steps=run.steps()
            )
        except Exception:
            log.warning("could not mark run %d failed", run_id, exc_info=True)


class _Run:
    """One question's run: the state, the reasoner in charge, and the steps."""

    def __init__(
        self,
        loop: AgentLoop,
        question: str,
        history: Sequence[Turn],
        scope: ChunkFilter,
        on_step: StepCallback | None,
    ) -> None:
        self.loop = loop
        self.options = loop._options
        self.reasoner = loop._reasoner
        self.on_step = on_step
        goal = Goal(question, question, compress(history, budget_words=self.options.history_words))
        self.goal = dataclasses.replace(goal, scope=scope)
        self.state = AgentState(goal=self.goal, max_steps=self.options.max_steps)
        self.chunks: dict[int, Passage] = {}
        self.verification: dict[str, Any] = {"verified": 0, "rejected": 0, "dropped": []}

    # --- the run ---------------------------------------------------------------------

    async def execute(self) -> Answer:
        await self._tell("Reading the question")
        route = await self._decide("route", self.goal.question, lambda r: r.route(self.goal))
        self.goal = dataclasses.replace(self.goal, standalone=route.standalone)
        self.state.goal = self.goal
        if route.action != "search":
            return await self._without_retrieval(route)
        planned = await self._decide(
            "plan", route.standalone, lambda r: r.decompose(route.standalone)
        )
        self.state.sub_questions = list(planned)
        self.state.pending = [PendingQuery(q.text, i) for i, q in enumerate(planned)]
        self.state.stop_reason = await self._search()
        await self._tell("Checking the quotes")
        drafts = await self._decide("synthesize", "evidence", lambda r: r.synthesize(self.state))
        return await self._grounded_answer(drafts)

    async def _search(self) -> StopReason:
        while True:
            batch = [q for q in self.state.pending if not self.state.ran(q.text)]
            self.state.pending = []
            if not batch:
                return "no_better_action"
            if self.state.step >= self.state.max_steps:
                return "max_steps_reached"
            hop = self.state.hop_step == self.state.step + 1
            if self._satisfied() and not hop:
                self.state.steps_after_coverage += 1
            self.state.step += 1
            added = await self._step(batch)
            if self._judge_by_rules() and await self._judged_enough():
                if await self._plan_second_hop():
                    continue
                return "enough_evidence"
            if added == 0 and self.state.step > 1:
                return "no_better_action"
            await self._rewrite_gaps()

    async def _step(self, batch: list[PendingQuery]) -> int:
        await self._tell("Searching: " + "; ".join(q.text for q in batch)[:120])
        started = time.perf_counter()
        results = await asyncio.gather(*(self._retrieve(q) for q in batch))
        self._record(
            "retrieve",
            " | ".join(q.text for q in batch),
            f"{sum(len(h) for h in results)} hits",
            started,
        )
        by_question: dict[int, list[list[ChunkHit]]] = {}
        first = len(self.state.queries)
        for query, hits in zip(batch, results, strict=True):
            by_question.setdefault(query.sub_question, []).append(hits)
            self.state.queries.append(QueryRun(query, self.state.step, len(hits)))
        passages = await self._read(by_question)
        started = time.perf_counter()
        found = await asyncio.gather(*(self._extract(i, p) for i, p in passages.items()))
        added = 0
        for evidence in found:
            added += self._merge(evidence)
        self._record("extract", f"{len(passages)} sub-questions", f"{added} new quotes", started)
        step = self.state.step
        for index, run in enumerate(self.state.queries[first:], start=first):
            new = sum(
                1
                for e in self.state.evidence
                if e.step == step and e.sub_question == run.query.sub_question
            )
            self.state.queries[index] = dataclasses.replace(run, new_evidence=new)
        return added

    async def _extract(self, index: int, passages: list[Passage]) -> list[Evidence]:
        return await self._decide_quietly(lambda r: r.extract(index, passages, self.state))

    async def _retrieve(self, query: PendingQuery) -> list[ChunkHit]:
        return await self.loop._retriever.retrieve(
            query.text, limit=self.options.hits_per_query, where=self.goal.scope
        )

    async def _read(self, hits: dict[int, list[list[ChunkHit]]]) -> dict[int, list[Passage]]:
        await self._tell("Reading sources")
        started = time.perf_counter()
        read: dict[int, list[Passage]] = {}
        for index, lists in hits.items():
            unique = _by_rank(lists)
            passages = await self.loop._reader.read(unique[: self.options.read_per_question])
            read[index] = passages
            for passage in passages:
                for span in passage.spans:
                    self.chunks[span.chunk_id] = passage
                    self.state.visited.setdefault(
                        span.chunk_id,
                        SourceRead(span.chunk_id, passage.title, passage.url, passage.heading),
                    )
        total = sum(len(p) for p in read.values())
        found = sum(len(h) for lists in hits.values() for h in lists)
        self._record("read", f"{found} hits", f"{total} passages", started)
        return read

    def _merge(self, evidence: list[Evidence]) -> int:
        known = {(e.chunk_id, e.quote, e.sub_question) for e in self.state.evidence}
        fresh = [e for e in evidence if (e.chunk_id, e.quote, e.sub_question) not in known]
        self.state.evidence.extend(fresh)
        return len(fresh)

    def _judge_by_rules(self) -> bool:
        """Rules first: a key sub-question with a strong quote is answered."""
        started = time.perf_counter()
        for index in range(len(self.state.sub_questions)):
            if any(e.support == "strong" for e in self.state.evidence_for(index)):
                self.state.answered.add(index)
        undecided = [i for i in self._key_indexes() if i not in self.state.answered]
        self._record(
            "judge",
            "rules",
            f"{len(self.state.answered)} answered, {len(undecided)} undecided",
            started,
        )
        return True

    async def _judged_enough(self) -> bool:
        if self._satisfied():
            self.state.gaps = []
            return True
        undecided = [i for i in self._required() if i not in self.state.answered]
        judgement = await self._decide(
            "judge", f"{len(undecided)} undecided", lambda r: r.judge(self.state, undecided)
        )
        self.state.answered |= judgement.answered
        self.state.gaps = list(judgement.gaps)
        return self._satisfied()

    async def _plan_second_hop(self) -> bool:
        """Once: queue the pages the evidence leans on; whether a hop step will run."""
        if self.state.hop_step is not None or self.state.step >= self.state.max_steps:
            return False
        started = time.perf_counter()
        self.state.hop_step = self.state.step + 1
        queries = await self._decide_quietly(lambda r: r.second_hop(self.state))
        self.state.pending = [q for q in queries if not self.state.ran(q.text)]
        if self.state.pending:
            names = " | ".join(q.text for q in self.state.pending)
            self._record("second hop", "evidence", names, started)
        return bool(self.state.pending)

    async def _rewrite_gaps(self) -> None:
        for gap in self.state.gaps:
            query = await self._rewrite(gap)
            if query and not self.state.ran(query):
                self.state.pending.append(
                    PendingQuery(query, gap.sub_question, "targeted_follow_up")
                )

    async def _rewrite(self, gap: GapState) -> str | None:
        summary = self.state.sub_questions[gap.sub_question].text
        return await self._decide("rewrite", summary, lambda r: r.rewrite(gap, self.state))

    def _key_indexes(self) -> list[int]:
        return [i for i, q in enumerate(self.state.sub_questions) if q.key]

    def _required(self) -> list[int]:
        """The key sub-questions; when none is key (the options of "A or B?"), all."""
        return self._key_indexes() or list(range(len(self.state.sub_questions)))

    def _satisfied(self) -> bool:
        """Every key sub-question answered; with none key, any one of them."""
        keys = self._key_indexes()
        if keys:
            return set(keys) <= self.state.answered
        return bool(self.state.answered) or not self.state.sub_questions

    # --- decisions, with the fallback -------------------------------------------------

    async def _decide(
        self, action: str, summary: str, call: Callable[[Reasoner], Awaitable[T]]
    ) -> T:
        started = time.perf_counter()
        result = await self._decide_quietly(call)
        self._record(action, summary, _summary(result), started)
        return result

    async def _decide_quietly(self, call: Callable[[Reasoner], Awaitable[T]]) -> T:
        try:
            return await call(self.reasoner)
        except ReasonerUnavailable as exc:
            fallback = self.loop._fallback
            if fallback is None or fallback is self.reasoner:
                raise
            note = f"{self.reasoner.name} was unavailable ({exc}); {fallback.name} took over"
            log.warning("%s", note)
            self.state.notes.append(note)
            self._record("fallback", self.reasoner.name, fallback.name, time.perf_counter())
            self.reasoner = fallback
            return await call(fallback)

    # --- the answer ----------------------------------------------------------------------

    async def _grounded_answer(self, drafts: list[DraftClaim]) -> Answer:
        started = time.perf_counter()
        drafts = drafts[: self.options.max_claims]
        verdicts = await self.loop._verifier.verify(
            [QuoteCheck(d.chunk_id, d.quote) for d in drafts]
        )
        kept: list[DraftClaim] = []
        for draft, verdict in zip(drafts, verdicts, strict=True):
            if verdict.verified and draft.chunk_id in self.chunks:
                kept.append(draft)
                continue
            reason = verdict.reason if not verdict.verified else "chunk_not_read"
            self.verification["dropped"].append({"chunk_id": draft.chunk_id, "reason": reason})
            log.warning("dropped a claim citing chunk %d: %s", draft.chunk_id, reason)
        self.verification.update(verified=len(kept), rejected=len(drafts) - len(kept))
        self._record("verify", f"{len(drafts)} claims", f"{len(kept)} verified", started)
        return self._answer(kept, len(drafts) - len(kept))

    def _answer(self, kept: list[DraftClaim], rejected: int) -> Answer:
        citations: dict[int, Citation] = {}
        claims: list[Claim] = []
        for draft in kept:
            passage = self.chunks[draft.chunk_id]
            cited = citations.setdefault(
                passage.document_id, _citation(len(citations) + 1, passage, draft.chunk_id)
            )
            claims.append(
                Claim(
                    statement=draft.statement,
                    quote=draft.quote,
                    citation=cited.number,
                    chunk_id=draft.chunk_id,
                    sub_question=self.state.sub_questions[draft.sub_question].text,
                    support=draft.support,
                    score=draft.score,
                    span=draft.span,
                )
            )
        subs = self._sub_questions(kept)
        # Quotes that only partly answer are shown, and a human is still offered.
        escalate = any(s.key and s.status != "answered" for s in subs) or all(
            s.status != "answered" for s in subs
        )
        stop = self.state.stop_reason or "no_better_action"
        if escalate and rejected and stop == "enough_evidence":
            stop = "insufficient_grounding"
        return Answer(
            question=self.goal.question,
            claims=tuple(claims),
            citations=tuple(citations.values()),
            stop_reason=stop,
            escalate=escalate,
            sub_questions=tuple(subs),
            gaps=tuple(self._gaps(subs)),
            conflicts=tuple(self._conflicts(claims, list(citations.values()))),
            standalone_question=self._standalone(),
            rejected_claims=rejected,
            timings_ms=self._timings(),
        )

    def _sub_questions(self, kept: list[DraftClaim]) -> list[SubQuestion]:
        with_claims = {d.sub_question for d in kept}
        result = []
        for index, planned in enumerate(self.state.sub_questions):
            if index not in with_claims:
                status = "missing"
            elif index in self.state.answered:
                status = "answered"
            else:
                status = "partial"
            result.append(SubQuestion(planned.text, status, planned.key))  # type: ignore[arg-type]
        return result

    def _gaps(self, subs: list[SubQuestion]) -> list[Gap]:
        gaps = []
        by_index = {g.sub_question: g for g in self.state.gaps}
        for index, sub in enumerate(subs):
            if sub.status == "answered":
                continue
            state_gap = by_index.get(index)
            reason = (
                state_gap.reason
                if state_gap
                else ("too_weak" if sub.status == "partial" else "no_results")
            )
            detail = _said_gap(sub.text, self.state.evidence_for(index))
            gaps.append(Gap(sub.text, reason, detail or _gap_detail(sub.status, state_gap)))
        return gaps

    def _conflicts(self, claims: list[Claim], citations: list[Citation]) -> list[Conflict]:
        by_chunk_quote = {(c.chunk_id, c.quote): i for i, c in enumerate(claims)}
        evidence = [e for e in self.state.evidence if (e.chunk_id, e.quote) in by_chunk_quote]
        numbers = {c.number: c for c in citations}
        found = []
        for conflict in find_conflicts(evidence, stems=self.loop._stems):
            first = by_chunk_quote[(conflict.first.chunk_id, conflict.first.quote)]
            second = by_chunk_quote[(conflict.second.chunk_id, conflict.second.quote)]
            newer = conflict.newer
            newer_number = None
            if newer is not None:
                newer_number = claims[first if newer is conflict.first else second].citation
            found.append(
                Conflict(
                    sub_question=self.state.sub_questions[conflict.sub_question].text,
                    claims=(first, second),
                    newer=newer_number,
                    detail=_conflict_detail(claims[first], claims[second], numbers, newer_number),
                )
            )
        return found

    async def _without_retrieval(self, route: Route) -> Answer:
        if route.action == "reply":
            return Answer(
                question=self.goal.question,
                claims=(),
                citations=(),
                stop_reason="no_retrieval_needed",
                escalate=False,
                reply=route.reply,
                timings_ms=self._timings(),
            )
        turn = last_bot_turn(self.goal.history)
        assert turn is not None
        first = turn.claims[0]
        verdict = (await self.loop._verifier.verify([QuoteCheck(first.chunk_id, first.quote)]))[0]
        self._record(
            "verify", "1 claim from the thread", str(verdict.verified), time.perf_counter()
        )
        cited = next((c for c in turn.citations if c.number == first.citation), None)
        if not verdict.verified or cited is None:
            return Answer(
                question=self.goal.question,
                claims=(),
                citations=(),
                stop_reason="insufficient_grounding",
                escalate=True,
                rejected_claims=1,
                timings_ms=self._timings(),
            )
        citation = dataclasses.replace(cited, number=1)
        claim = dataclasses.replace(first, citation=1)
        return Answer(
            question=self.goal.question,
            claims=(claim,),
            citations=(citation,),
            stop_reason="no_retrieval_needed",
            escalate=False,
            timings_ms=self._timings(),
        )

    # --- records -------------------------------------------------------------------------

    def _record(self, action: str, given: str, result: str, started: float) -> None:
        self.state.actions.append(
            ActionRecord(self.state.step, action, given[:300], result[:300], _ms_since(started))
        )

    async def _tell(self, words: str) -> None:
        if self.on_step is not None:
            await self.on_step(words)

    def _timings(self) -> dict[str, float]:
        timings: dict[str, float] = {}
        for action in self.state.actions:
            timings[action.action] = round(timings.get(action.action, 0.0) + action.latency_ms, 1)
        return timings

    def _standalone(self) -> str | None:
        standalone = self.goal.standalone
        return standalone if standalone != self.goal.question else None

    def steps(self) -> list[dict[str, Any]]:
        return [dataclasses.asdict(a) for a in self.state.actions]

    def outcome(self, answer: Answer, latency_ms: float) -> RunOutcome:
        return RunOutcome(
            stop_reason=answer.stop_reason,
            escalate=answer.escalate,
            steps=self.steps(),
            queries=[run.query.text for run in self.state.queries],
            evidence_chunk_ids=list(dict.fromkeys(e.chunk_id for e in self.state.evidence)),
            verification=self.verification,
            answer=answer.as_dict(),
            standalone_question=answer.standalone_question,
            sub_questions=[dataclasses.asdict(s) for s in answer.sub_questions],
            sources=[dataclasses.asdict(s) for s in self.state.visited.values()],
            notes=self.state.notes,
            latency_ms=latency_ms,
            stats=self.stats(),
        )

    def stats(self) -> dict[str, int]:
        # The second hop's queries are not rewrites for a gap: counted apart.
        hop = self.state.hop_step
        followed = [r for r in self.state.queries if r.query.intent != "broad_recall"]
        rewrites = [r for r in followed if r.step != hop]
        hops = [r for r in followed if r.step == hop]
        return {
            "steps": self.state.step,
            "steps_after_coverage": self.state.steps_after_coverage,
            "rewrites": len(rewrites),
            "rewrites_with_evidence": sum(1 for r in rewrites if r.new_evidence),
            "second_hops": len(hops),
            "second_hops_with_evidence": sum(1 for r in hops if r.new_evidence),
        }


def _by_rank(lists: Sequence[Sequence[ChunkHit]]) -> list[ChunkHit]:
    """The hits of several queries in retrieval order: every query's first hit, then every
    second hit, and so on, each chunk once. The retriever's order (BM25, vectors, title
    links) ranks better than any one score; cosines to different queries don't compare."""
    merged: dict[int, ChunkHit] = {}
    for rank in range(max((len(h) for h in lists), default=0)):
        for hits in lists:
            if rank < len(hits):
                merged.setdefault(hits[rank].chunk_id, hits[rank])
    return list(merged.values())


def _citation(number: int, passage: Passage, chunk_id: int) -> Citation:
    span = next((s for s in passage.spans if s.chunk_id == chunk_id), None)
    section = " > ".join(span.heading_path) if span else passage.heading
    return Citation(
        number=number,
        title=passage.title,
        url=passage.url,
        uri=passage.uri,
        chunk_id=chunk_id,
        document_id=passage.document_id,
        source=passage.source,
        collection=passage.collection,
        section=section,
        updated_at=passage.updated_at,
    )


def _said_gap(question: str, evidence: Sequence[Evidence]) -> str:
    """What the best source found says and lacks, in one sentence ("" with none found)."""
    if not evidence:
        return ""
    best = max(evidence, key=lambda e: e.score)
    return gap_sentence(question, answer_type(question), best.title, best.quote)


def _gap_detail(status: str, gap: GapState | None) -> str:
    if status == "partial":
        return "only partly answered by the sources found"
    if gap is not None and gap.reason == "no_results":
        return "nothing in the knowledge base answers this"
    return "the sources found do not answer this clearly enough"


def _conflict_detail(
    first: Claim, second: Claim, citations: dict[int, Citation], newer: int | None
) -> str:
    def side(claim: Claim) -> str:
        cited = citations[claim.citation]
        when = f", updated {cited.updated_at:%Y-%m-%d}" if cited.updated_at else ""
        return f"[{cited.number}] {cited.title}{when}"

    text = f"The sources disagree: {side(first)} and {side(second)}."
    if newer is not None:
        text += f" [{newer}] is the more recent."
    return text


def _summary(result: object) -> str:
    if isinstance(result, Route):
        return f"{result.action}: {result.standalone}"
    if isinstance(result, list):
        return f"{len(result)} items"
    if result is None:
        return "nothing new"
    return str(result)[:200]


def _scope_json(scope: ChunkFilter) -> dict[str, object]:
    return {
        "sources": list(scope.sources) if scope.sources is not None else None,
        "collections": list(scope.collections) if scope.collections is not None else None,
    }


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
