"""The `Reasoner` protocol: every decision the loop delegates, and what each returns.

The loop owns the state and the stop rules; a reasoner only decides. Two implement it:
`ExtractiveReasoner` (offline, deterministic, the default) and `ClaudeReasoner`.
A reasoner whose claims arrive over seconds (Claude, streamed) also implements
`WritesClaimsOverTime`, so that each claim can be checked and shown as it is written.
A reasoner that cannot decide (an outage, output it cannot use) raises
`ReasonerUnavailable`, and the loop hands that decision and the rest of the run to
its fallback reasoner.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from agent.answer import Support
from agent.retrieval.reading import Passage
from agent.state import AgentState, Evidence, GapState, Goal, PendingQuery, PlannedQuestion


@dataclass(frozen=True, slots=True)
class Route:
    """Search the knowledge base, or answer from the thread itself (no retrieval)."""

    action: Literal["search", "reply", "from_thread"]
    standalone: str  # the question to search for, standing alone
    reply: str | None = None  # for "reply": what to say ("You're welcome.")


@dataclass(frozen=True, slots=True)
class Judgement:
    """Whether the evidence is enough; if not, the gaps to search for."""

    enough: bool
    gaps: tuple[GapState, ...] = ()
    answered: frozenset[int] = frozenset()
    reason: str = ""


@dataclass(frozen=True, slots=True)
class DraftClaim:
    """A claim as synthesised, before grounding: its quote must occur in `chunk_id`."""

    statement: str
    quote: str
    chunk_id: int
    sub_question: int
    support: Support = "strong"
    score: float = 0.0
    # The answer inside `quote` (agent/language/spans.py); "" when it holds none.
    span: str = ""


class Reasoner(Protocol):
    name: str

    async def route(self, goal: Goal) -> Route:
        """Search, or answer from the thread ("thanks", "shorter please")."""
        ...

    async def decompose(self, question: str) -> list[PlannedQuestion]:
        """The sub-questions to answer (one, for a simple question)."""
        ...

    async def rewrite(self, gap: GapState, state: AgentState) -> str | None:
        """A new query for a gap (same intent, new terms), never one that already ran."""
        ...

    async def extract(
        self, sub_question: int, passages: Sequence[Passage], state: AgentState
    ) -> list[Evidence]:
        """The quotes of `passages` that answer sub-question `sub_question`."""
        ...

    async def judge(self, state: AgentState, undecided: Sequence[int]) -> Judgement:
        """Asked only for the sub-questions the rules could not decide."""
        ...

    async def second_hop(self, state: AgentState) -> list[PendingQuery]:
        """Once the evidence is enough: queries for the pages it leans on, if any.

        A quote may answer through an entity it names in place of the question's
        description ("the woman who portrayed Corliss Archer" is "Shirley Temple"); that
        entity's own page is the second hop, and the answer cites both. Asked once."""
        ...

    async def synthesize(self, state: AgentState) -> list[DraftClaim]:
        """The claims of the answer, each a quote from the evidence with its chunk id."""
        ...


DraftsCallback = Callable[[Sequence[DraftClaim]], Awaitable[None]]
"""Told the claims written so far, each complete, in order: a prefix of what
`synthesize_streamed` will return, longer at each call."""


@runtime_checkable
class WritesClaimsOverTime(Protocol):
    async def synthesize_streamed(
        self, state: AgentState, *, on_drafts: DraftsCallback
    ) -> list[DraftClaim]:
        """`synthesize`, telling `on_drafts` each time another claim is complete. What it
        returns is the answer (a claim told early may be missing if the reply broke and
        was asked again)."""
        ...


async def synthesize(
    reasoner: Reasoner, state: AgentState, *, on_drafts: DraftsCallback
) -> list[DraftClaim]:
    """The reasoner's claims; `on_drafts` is told them as written where it writes them
    over time, else not at all (they are ready at once)."""
    if isinstance(reasoner, WritesClaimsOverTime):
        return await reasoner.synthesize_streamed(state, on_drafts=on_drafts)
    return await reasoner.synthesize(state)
