"""The agent loop: route, plan, search, then answer, every run stored.

A run (`_Run`) is three parts sharing one state: the search driver
(agent/search_driver.py: retrieve → read → extract → judge → rewrite, bounded, with a
stop reason), the answer builder (agent/answer_builder.py: the reasoner's claims, each
quote verified against its chunk as stored through the one grounding gate,
agent/claim_grounding.py; what fails is dropped and counted) and the run recorder
(agent/run_recorder.py: the steps, their timings, the outcome stored; `on_step` is told
each step and `on_claim` each claim that passed grounding, before the run is stored, so
Slack can stream them: a reasoner that writes its claims over time hands each over as
it is written, and it is grounded and handed on at once). Every decision
goes through agent/decisions.py: when a reasoner is unavailable (ReasonerUnavailable)
the decision is retried with the fallback reasoner, which then runs the rest of the run;
the trace says so.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent.answer import Answer, ClaimCallback, StepCallback, Turn
from agent.answer_builder import AnswerBuilder
from agent.corroboration import Corroborator
from agent.decisions import Decisions
from agent.errors import note_run
from agent.followups import compress, last_bot_turn
from agent.grounding import GroundingVerifier
from agent.reasoners.base import Reasoner, synthesize
from agent.retrieval.dense import Retriever
from agent.retrieval.reading import Reader
from agent.routes import checked_route
from agent.run_recorder import RunRecorder, ms_since
from agent.search_driver import SearchDriver
from agent.sentences import SentenceSplitter
from agent.state import AgentState, Goal, PendingQuery
from store.filters import NO_FILTER, ChunkFilter
from store.runs import RunOutcome, RunRepository, RunStart

log = logging.getLogger(__name__)


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
        corroboration: Retriever | None = None,
        splitter: SentenceSplitter | None = None,
    ) -> None:
        self._retriever = retriever
        # Splits the pages corroboration reads; its cache of blocks lives as long as the
        # loop, since the same chunks come back question after question.
        self._splitter = splitter or SentenceSplitter()
        # What searches for other pages saying an answer's quote (agent/corroboration.py):
        # the product passes keyword search alone; by default, `retriever`.
        self._corroboration = corroboration or retriever
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
        on_claim: ClaimCallback | None = None,
    ) -> Answer:
        run = _Run(self, question, history, scope, on_step, on_claim)
        # The search may begin while the run's row is written: a round trip it need not wait.
        run.begin_search()
        run_id = None
        if self._runs is not None:
            try:
                run_id = await self._runs.start(
                    RunStart(
                        question=question,
                        scope=_scope_json(scope),
                        origin=origin or {},
                        history_turns=len(history),
                        reasoner=self._reasoner.name,
                    )
                )
            except BaseException:
                await run.driver.drop_early()
                raise
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
            await self._runs.finish(run_id, run.outcome(answer, ms_since(started)))
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
    """One question's run: the state, then the search driver and the answer builder, with
    the decisions and the recorder they share."""

    def __init__(
        self,
        loop: AgentLoop,
        question: str,
        history: Sequence[Turn],
        scope: ChunkFilter,
        on_step: StepCallback | None,
        on_claim: ClaimCallback | None = None,
    ) -> None:
        options = loop._options
        self._max_claims = options.max_claims
        goal = Goal(question, question, compress(history, budget_words=options.history_words))
        self.state = AgentState(
            goal=dataclasses.replace(goal, scope=scope), max_steps=options.max_steps
        )
        self.recorder = RunRecorder(self.state, on_step, on_claim)
        self.decisions = Decisions(loop._reasoner, loop._fallback, self.recorder)
        self.driver = SearchDriver(
            state=self.state,
            retriever=loop._retriever,
            reader=loop._reader,
            decisions=self.decisions,
            recorder=self.recorder,
            hits_per_query=options.hits_per_query,
            read_per_question=options.read_per_question,
        )
        self.builder = AnswerBuilder(
            state=self.state,
            chunks=self.driver.chunks,
            verifier=loop._verifier,
            stems=loop._stems,
            recorder=self.recorder,
            max_claims=options.max_claims,
        )
        self.corroborator = Corroborator(
            state=self.state,
            chunks=self.driver.chunks,
            retriever=loop._corroboration,
            stems=loop._stems,
            recorder=self.recorder,
            splitter=loop._splitter,
        )

    async def execute(self) -> Answer:
        answer = await self._answer()
        await self.recorder.hand_over(answer)
        return answer

    def begin_search(self) -> None:
        """A first question (no thread yet) is most often searched as asked: its search
        starts now, beside the route and plan decisions (seconds with Claude), and the
        first step takes its hits when the plan keeps the question whole."""
        if not self.state.goal.history:
            self.driver.search_early(self.state.goal.question)

    async def _answer(self) -> Answer:
        self.begin_search()  # once: a search already begun is kept
        try:
            return await self._decided_answer()
        finally:
            await self.driver.drop_early()

    async def _decided_answer(self) -> Answer:
        state, decide = self.state, self.decisions.decide
        await self.recorder.tell("Reading the question")
        route = await decide("route", state.goal.question, lambda r: r.route(state.goal))
        route, overruled = checked_route(route, state.goal)
        if overruled:
            state.notes.append(overruled)
            self.recorder.record("route", "checked", overruled, time.perf_counter())
        state.goal = dataclasses.replace(state.goal, standalone=route.standalone)
        if route.action != "search":
            await self.driver.drop_early()
        if route.action == "reply":
            return self.builder.reply(route)
        earlier = last_bot_turn(state.goal.history)
        if route.action == "from_thread" and earlier is not None:
            return await self.builder.from_thread(earlier)
        planned = await decide("plan", route.standalone, lambda r: r.decompose(route.standalone))
        state.sub_questions = list(planned)
        state.pending = [PendingQuery(q.text, i) for i, q in enumerate(planned)]
        state.stop_reason = await self.driver.search()
        await self.recorder.tell("Checking the quotes")
        drafts = await decide(
            "synthesize",
            "evidence",
            lambda r: synthesize(r, state, on_drafts=self.builder.written),
        )
        disagreeing = await self.corroborator.disagreeing(drafts[: self._max_claims])
        return await self.builder.grounded(drafts, disagreeing)

    def steps(self) -> list[dict[str, Any]]:
        return self.recorder.steps()

    def outcome(self, answer: Answer, latency_ms: float) -> RunOutcome:
        return self.recorder.outcome(answer, latency_ms)


def _scope_json(scope: ChunkFilter) -> dict[str, object]:
    return {
        "sources": list(scope.sources) if scope.sources is not None else None,
        "collections": list(scope.collections) if scope.collections is not None else None,
    }
