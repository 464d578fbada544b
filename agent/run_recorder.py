"""What a run records: its steps (each action with its latency), the progress words told
to the asker, the grounding counts, and at the end the outcome stored with the run.

The search driver, the answer builder and the decisions all write here; nothing here
decides anything.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

from agent.answer import Answer, Citation, Claim, ClaimCallback, StepCallback
from agent.state import ActionRecord, AgentState
from store.runs import RunOutcome


class RunRecorder:
    def __init__(
        self,
        state: AgentState,
        on_step: StepCallback | None,
        on_claim: ClaimCallback | None = None,
    ) -> None:
        self.state = state
        self._on_step = on_step
        self._on_claim = on_claim
        self._handed: list[tuple[Claim, Citation]] = []
        # What grounding kept and dropped, stored as the run's `verification`; statements
        # written and dropped for saying more than their quote (agent/claim_grounding).
        self.verification: dict[str, Any] = {
            "verified": 0,
            "rejected": 0,
            "dropped": [],
            "statements_written": 0,
            "statements_dropped": 0,
        }

    def record(self, action: str, given: str, result: str, started: float) -> None:
        self.state.actions.append(
            ActionRecord(self.state.step, action, given[:300], result[:300], ms_since(started))
        )

    async def tell(self, words: str) -> None:
        if self._on_step is not None:
            await self._on_step(words)

    async def hand_over(self, answer: Answer) -> None:
        """Hand each of the answer's claims (all of them passed grounding) to `on_claim`,
        but those handed over as they were written."""
        await self.hand_over_claims(answer.claims, answer.citations)

    async def hand_over_claims(
        self, claims: Sequence[Claim], citations: Sequence[Citation]
    ) -> None:
        """Hand `on_claim` each claim (grounded) it has not been handed yet."""
        if self._on_claim is None:
            return
        numbered = {c.number: c for c in citations}
        for claim in claims:
            handed = (claim, numbered[claim.citation])
            if handed not in self._handed:
                self._handed.append(handed)
                await self._on_claim(*handed)

    def timings(self) -> dict[str, float]:
        timings: dict[str, float] = {}
        for action in self.state.actions:
            timings[action.action] = round(timings.get(action.action, 0.0) + action.latency_ms, 1)
        return timings

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


def ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
