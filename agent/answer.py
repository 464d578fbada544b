"""The answer the bot gives, and what it is asked with.

An answer is a list of claims, each grounded in a verbatim quote from a cited chunk
(verified against the stored text before it is shown), plus what the run could not
ground: the sub-questions it answered or not, the gaps, the conflicts between sources,
why it stopped, and whether a human should take the question (`escalate`).

`Answerer.answer(question, history=, scope=)` is the one call the Slack bot and the CLI
make: `history` is the thread's earlier turns, `scope` restricts every retrieval of the
run (the collections a channel may see).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from store.filters import NO_FILTER, ChunkFilter

StopReason = Literal[
    "enough_evidence",
    "max_steps_reached",
    "no_better_action",
    "insufficient_grounding",
    "no_retrieval_needed",
]
Support = Literal["strong", "partial", "weak"]
GapReason = Literal["no_results", "too_weak", "conflict", "need_context"]
SubQuestionStatus = Literal["answered", "partial", "missing"]


@dataclass(frozen=True, slots=True)
class Citation:
    """A cited document, numbered in order of first citation."""

    number: int
    title: str
    url: str | None
    uri: str
    chunk_id: int  # the first chunk cited from this document
    document_id: int
    source: str
    collection: str
    section: str = ""  # the heading path of the cited chunk, " > " joined
    updated_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Claim:
    """A statement, the verbatim quote that grounds it, and the citation it comes from."""

    statement: str
    quote: str
    citation: int  # Citation.number
    chunk_id: int  # the chunk the quote was verified against, as stored
    sub_question: str = ""
    support: Support = "strong"
    score: float = 0.0
    # The answer itself, found inside `quote` (a person, a date, an amount, the steps...):
    # what the reply leads with. "" when the quote holds no span of the type asked for.
    span: str = ""


@dataclass(frozen=True, slots=True)
class SubQuestion:
    text: str
    status: SubQuestionStatus
    # A key sub-question not answered by a verified claim (none, or only partial ones)
    # makes the answer escalate.
    key: bool = True


@dataclass(frozen=True, slots=True)
class Gap:
    sub_question: str
    reason: GapReason
    detail: str = ""  # one plain sentence for the reader


@dataclass(frozen=True, slots=True)
class Conflict:
    """Sources that disagree on one sub-question; both sides are shown, never one picked."""

    sub_question: str
    claims: tuple[int, ...]  # indexes into Answer.claims, one per side
    newer: int | None = None  # Citation.number of the more recent side, when dates tell
    detail: str = ""


@dataclass(frozen=True, slots=True)
class PageRead:
    """A page read that came closest to the question when nothing on it answered: a
    pointer for the asker (and for a human the question is escalated to), never a claim
    and never a citation."""

    title: str
    url: str | None
    uri: str
    collection: str
    chunk_id: int  # the chunk of its sentence that read closest
    section: str = ""


@dataclass(frozen=True, slots=True)
class Answer:
    question: str
    claims: tuple[Claim, ...]
    citations: tuple[Citation, ...]
    stop_reason: StopReason
    # A key sub-question is not answered by a verified claim: offer a human.
    escalate: bool
    sub_questions: tuple[SubQuestion, ...] = ()
    gaps: tuple[Gap, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    run_id: int | None = None
    # What was searched for when the question was a follow-up rewritten to stand alone.
    standalone_question: str | None = None
    # A conversational reply when no retrieval was needed ("thanks" → "You're welcome").
    reply: str | None = None
    rejected_claims: int = 0
    # Statements that reached the statement check, and those of them dropped for saying
    # more than their quote (agent/claim_grounding): unsupported_statement_rate's counts.
    statements_written: int = 0
    statements_dropped: int = 0
    timings_ms: dict[str, float] = field(default_factory=dict)
    # With no claim at all: the pages whose sentences read closest to the question
    # without answering it, closest first (agent/reasoners/extractive.py).
    closest_pages: tuple[PageRead, ...] = ()

    @property
    def covered(self) -> bool:
        """Whether the answer states anything grounded at all."""
        return bool(self.claims)

    def citation(self, number: int) -> Citation:
        return next(c for c in self.citations if c.number == number)

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of `kb ask --json` and of stored runs; each claim carries its
        citation inline ({number, title, url, section}). `from_dict` reads it back."""
        data = asdict(self)
        data["covered"] = self.covered
        by_number = {c.number: c for c in self.citations}
        for claim in data["claims"]:
            cited = by_number[claim["citation"]]
            claim["citation"] = {
                "number": cited.number,
                "title": cited.title,
                "url": cited.url,
                "section": cited.section,
            }
        for citation in data["citations"]:
            when = citation["updated_at"]
            citation["updated_at"] = when.isoformat() if when else None
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Answer:
        """An answer from its `as_dict` shape (a stored run's answer)."""
        citations = tuple(
            Citation(
                **{
                    **c,
                    "updated_at": datetime.fromisoformat(c["updated_at"])
                    if c.get("updated_at")
                    else None,
                }
            )
            for c in data.get("citations", ())
        )
        claims = tuple(
            Claim(**{**c, "citation": c["citation"]["number"]}) for c in data.get("claims", ())
        )
        return cls(
            question=data["question"],
            claims=claims,
            citations=citations,
            stop_reason=data["stop_reason"],
            escalate=data["escalate"],
            sub_questions=tuple(SubQuestion(**q) for q in data.get("sub_questions", ())),
            gaps=tuple(Gap(**g) for g in data.get("gaps", ())),
            conflicts=tuple(
                Conflict(**{**c, "claims": tuple(c["claims"])}) for c in data.get("conflicts", ())
            ),
            run_id=data.get("run_id"),
            standalone_question=data.get("standalone_question"),
            reply=data.get("reply"),
            rejected_claims=data.get("rejected_claims", 0),
            statements_written=data.get("statements_written", 0),
            statements_dropped=data.get("statements_dropped", 0),
            timings_ms=dict(data.get("timings_ms", {})),
            closest_pages=tuple(PageRead(**p) for p in data.get("closest_pages", ())),
        )


@dataclass(frozen=True, slots=True)
class Turn:
    """One earlier turn of the thread: the asker's message, or one of the bot's answers."""

    role: Literal["user", "bot"]
    text: str
    claims: tuple[Claim, ...] = ()
    citations: tuple[Citation, ...] = ()


StepCallback = Callable[[str], Awaitable[None]]
"""Told, in a few plain words, which step a run is on ("Searching: annual leave")."""

ClaimCallback = Callable[[Claim, Citation], Awaitable[None]]
"""Handed each claim that passed grounding, with its citation, as soon as the run has it
and before the answer is returned (Slack streams them); never an unverified draft."""


class Answerer(Protocol):
    """What the bot and the CLI call to answer a question."""

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
        """Answer `question`; `origin` (channel, thread, user ids) is stored with the run."""
        ...
