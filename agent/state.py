"""The agent's working state for one run, in typed dataclasses.

The loop (agent/loop.py) owns one `AgentState` per question; reasoners read it and hand
back new values (sub-questions, queries, evidence, gaps) for the loop to merge; the one
thing a reasoner records itself is the bridge entity a rewrite searched for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from agent.answer import GapReason, PageRead, StopReason, Support, Turn
from store.filters import NO_FILTER, ChunkFilter

if TYPE_CHECKING:
    from agent.retrieval.reading import Passage

Intent = Literal["broad_recall", "targeted_follow_up", "conflict_check"]


@dataclass(frozen=True, slots=True)
class Goal:
    """What the user wants: the question as asked, as searched, and the thread so far."""

    question: str
    standalone: str
    history: tuple[Turn, ...] = ()
    scope: ChunkFilter = NO_FILTER


@dataclass(frozen=True, slots=True)
class PlannedQuestion:
    """One sub-question of the goal; a key one left unanswered makes the answer escalate."""

    text: str
    key: bool = True
    # The option this sub-question stands for when the goal picks one of several ("Who was
    # born first, A or B?"): the choice is settled only as agent/choices.py says.
    option: str = ""


@dataclass(frozen=True, slots=True)
class PendingQuery:
    text: str
    sub_question: int  # index into AgentState.sub_questions
    intent: Intent = "broad_recall"


@dataclass(frozen=True, slots=True)
class QueryRun:
    """A query that ran, and how much new evidence it brought."""

    query: PendingQuery
    step: int
    hits: int
    new_evidence: int = 0


@dataclass(frozen=True, slots=True)
class Companion:
    """A sentence to quote beside an evidence quote (agent/reasoners/companions.py)."""

    text: str
    chunk_id: int  # the stored chunk holding it whole, which grounding checks it in
    span: str = ""  # the answer it holds (agent/language/spans.py), "" if none


@dataclass(frozen=True, slots=True)
class Evidence:
    """A verbatim quote that (partly) answers a sub-question, and where it comes from."""

    sub_question: int
    claim: str
    quote: str
    chunk_id: int
    document_id: int
    title: str
    url: str | None
    uri: str
    source: str
    collection: str
    section: str
    updated_at: datetime | None
    score: float
    support: Support
    # The sub-question's key terms this quote (with its title and section) carries.
    covered: frozenset[str] = frozenset()
    step: int = 0
    # Whether it holds an answer of the expected type (a date for "when"), or only
    # leads to one (the first hop of a multi-hop question).
    typed: bool = True
    # The answer inside the quote, of the type asked for (agent/language/spans.py).
    span: str = ""
    # The sentences it is read with: its list item's first, the next holding an answer.
    companions: tuple[Companion, ...] = ()


@dataclass(frozen=True, slots=True)
class GapState:
    sub_question: int
    reason: GapReason
    missing: tuple[str, ...] = ()  # key terms no evidence carries yet
    detail: str = ""
    # Those of `missing` no passage read has in any form: what "no page found mentions"
    # may name when no evidence was kept (None: not known, `missing` stands).
    unheard: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class ActionRecord:
    """One step of the run, as the trace shows it."""

    step: int
    # route, plan, retrieve, read, extract, judge, rewrite, synthesize, corroborate, verify
    action: str
    input: str
    output: str
    latency_ms: float


@dataclass(frozen=True, slots=True)
class SourceRead:
    chunk_id: int
    title: str
    url: str | None
    section: str


@dataclass(slots=True)
class AgentState:
    goal: Goal
    max_steps: int
    sub_questions: list[PlannedQuestion] = field(default_factory=list)
    pending: list[PendingQuery] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    gaps: list[GapState] = field(default_factory=list)
    answered: set[int] = field(default_factory=set)
    visited: dict[int, SourceRead] = field(default_factory=dict)  # chunk id → what was read
    queries: list[QueryRun] = field(default_factory=list)
    actions: list[ActionRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    step: int = 0
    stop_reason: StopReason | None = None
    # Steps that ran although the judge already had every key sub-question answered.
    steps_after_coverage: int = 0
    # Names found in a sub-question's evidence and searched for (the bridge entities).
    bridges: dict[int, list[str]] = field(default_factory=dict)
    # The titles of the pages those names were read from in a quote naming every name of
    # the sub-question: pages about its own subject, where a bridge is said of it.
    bridge_sources: dict[int, set[str]] = field(default_factory=dict)
    # The step that read the pages the evidence leans on (the second hop), if one ran.
    hop_step: int | None = None
    # The words (stems) of every passage read for a sub-question: a gap may say "no page
    # found mentions X" only of an X none of them has.
    read_words: dict[int, set[str]] = field(default_factory=dict)
    # Pages read whose best sentence came close to the question without answering it,
    # by document id, with that closeness: where to look when nothing answers.
    close_pages: dict[int, tuple[float, PageRead]] = field(default_factory=dict)

    def note_close_page(
        self, passage: Passage, chunk_id: int, section: str, closeness: float
    ) -> None:
        """Keep the passage's page, at `chunk_id`, as its document's closest read unless
        a closer one is kept."""
        known = self.close_pages.get(passage.document_id)
        if known is None or closeness > known[0]:
            page = PageRead(
                passage.title, passage.url, passage.uri, passage.collection, chunk_id, section
            )
            self.close_pages[passage.document_id] = (closeness, page)

    def ran(self, text: str) -> bool:
        """Whether a query with this text (case and spacing aside) already ran."""
        key = _query_key(text)
        return any(_query_key(run.query.text) == key for run in self.queries)

    def evidence_for(self, sub_question: int) -> list[Evidence]:
        return [e for e in self.evidence if e.sub_question == sub_question]


def _query_key(text: str) -> str:
    return " ".join(text.casefold().split())
