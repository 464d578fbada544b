"""The search half of a run: retrieve → read → extract → judge → rewrite, bounded.

Each step runs the pending queries of every open sub-question concurrently (each within
the run's scope), reads the hits with their neighbouring chunks, extracts evidence,
and judges: rules first (a sub-question is answered by a strong quote), the reasoner
only for what the rules leave undecided. Gaps get rewritten queries; the search stops
with a reason: enough evidence, the step budget spent, no better action (no new query,
or a step that added no evidence).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Sequence

from agent.answer import StopReason
from agent.choices import choice_settled, found_by_question
from agent.decisions import Decisions
from agent.retrieval.dense import Retriever
from agent.retrieval.reading import Passage, Reader
from agent.run_recorder import RunRecorder
from agent.state import AgentState, Evidence, GapState, PendingQuery, QueryRun, SourceRead
from store.vector_search import ChunkHit


class SearchDriver:
    def __init__(
        self,
        *,
        state: AgentState,
        retriever: Retriever,
        reader: Reader,
        decisions: Decisions,
        recorder: RunRecorder,
        hits_per_query: int,
        read_per_question: int,
    ) -> None:
        self.state = state
        self._retriever = retriever
        self._reader = reader
        self._decisions = decisions
        self._recorder = recorder
        self._hits_per_query = hits_per_query
        self._read_per_question = read_per_question
        # Every chunk read during the run, with the passage it was read in: a claim may
        # cite only these.
        self.chunks: dict[int, Passage] = {}
        # A search begun before the plan (`search_early`): its query and its hits to come.
        self._early: tuple[str, asyncio.Task[list[ChunkHit]]] | None = None

    def search_early(self, query: str) -> None:
        """Begin retrieving `query` now, in the run's scope, while the route and plan are
        decided: the first step takes its hits instead of searching again when it has
        that query; `drop_early` cancels it when none does."""
        if self._early is None:
            task = asyncio.create_task(self._retriever_call(query))
            self._early = (query, task)

    async def drop_early(self) -> None:
        """Cancel an early search no step took, and wait until it has stopped."""
        early, self._early = self._early, None
        if early is None:
            return
        task = early[1]
        task.cancel()
        await asyncio.wait([task])
        if not task.cancelled():
            task.exception()  # retrieved: a failure of a search nobody needs is not news

    async def search(self) -> StopReason:
        while True:
            batch = [q for q in self.state.pending if not self.state.ran(q.text)]
            self.state.pending = []
            if self._early is not None and all(q.text != self._early[0] for q in batch):
                await self.drop_early()  # the plan did not keep the question whole
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
        await self._recorder.tell("Searching: " + "; ".join(q.text for q in batch)[:120])
        started = time.perf_counter()
        results = await asyncio.gather(*(self._retrieve(q) for q in batch))
        self._recorder.record(
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
        self._recorder.record(
            "extract", f"{len(passages)} sub-questions", f"{added} new quotes", started
        )
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
        return await self._decisions.quietly(lambda r: r.extract(index, passages, self.state))

    async def _retrieve(self, query: PendingQuery) -> list[ChunkHit]:
        if self._early is not None and self._early[0] == query.text:
            (_, task), self._early = self._early, None
            return await task
        return await self._retriever_call(query.text)

    async def _retriever_call(self, text: str) -> list[ChunkHit]:
        return await self._retriever.retrieve(
            text, limit=self._hits_per_query, where=self.state.goal.scope
        )

    async def _read(self, hits: dict[int, list[list[ChunkHit]]]) -> dict[int, list[Passage]]:
        await self._recorder.tell("Reading sources")
        started = time.perf_counter()
        read: dict[int, list[Passage]] = {}
        for index, lists in hits.items():
            unique = by_rank(lists)
            passages = await self._reader.read(unique[: self._read_per_question])
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
        self._recorder.record("read", f"{found} hits", f"{total} passages", started)
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
        self._recorder.record(
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
        judgement = await self._decisions.decide(
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
        queries = await self._decisions.quietly(lambda r: r.second_hop(self.state))
        self.state.pending = [q for q in queries if not self.state.ran(q.text)]
        if self.state.pending:
            names = " | ".join(q.text for q in self.state.pending)
            self._recorder.record("second hop", "evidence", names, started)
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
        return await self._decisions.decide(
            "rewrite", summary, lambda r: r.rewrite(gap, self.state)
        )

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
        found = found_by_question(
            (e.sub_question, e.quote, e.span, e.title) for e in self.state.evidence
        )
        return choice_settled(self.state.sub_questions, self.state.answered, found)


def by_rank(lists: Sequence[Sequence[ChunkHit]]) -> list[ChunkHit]:
    """The hits of several queries in retrieval order: every query's first hit, then every
    second hit, and so on, each chunk once. The retriever's order (BM25, vectors, title
    links) ranks better than any one score; cosines to different queries don't compare."""
    merged: dict[int, ChunkHit] = {}
    for rank in range(max((len(h) for h in lists), default=0)):
        for hits in lists:
            if rank < len(hits):
                merged.setdefault(hits[rank].chunk_id, hits[rank])
    return list(merged.values())
