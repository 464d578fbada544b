"""The answer the bot gives: claims, each a verified verbatim quote with a numbered citation."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class SourceRef:
    """A cited source, numbered in order of first citation."""

    number: int
    title: str
    url: str | None
    uri: str
    chunk_id: int
    heading_path: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Claim:
    """A statement, the verbatim quote that grounds it, and the source it comes from."""

    text: str
    quote: str
    source: int  # SourceRef.number
    chunk_id: int  # the chunk the quote was verified against
    score: float


@dataclass(frozen=True, slots=True)
class Answer:
    question: str
    covered: bool
    claims: tuple[Claim, ...]
    sources: tuple[SourceRef, ...]
    stop_reason: str
    gaps: tuple[str, ...] = ()
    rejected_claims: int = 0
    timings_ms: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of `kb ask --json`: claims carry their citation inline."""
        by_number = {s.number: s for s in self.sources}
        return {
            "question": self.question,
            "covered": self.covered,
            "stop_reason": self.stop_reason,
            "claims": [
                {
                    "text": c.text,
                    "quote": c.quote,
                    "score": round(c.score, 4),
                    "chunk_id": c.chunk_id,
                    "citation": {
                        "number": c.source,
                        "title": by_number[c.source].title,
                        "url": by_number[c.source].url,
                        "uri": by_number[c.source].uri,
                    },
                }
                for c in self.claims
            ],
            "sources": [asdict(s) for s in self.sources],
            "gaps": list(self.gaps),
            "rejected_claims": self.rejected_claims,
            "timings_ms": self.timings_ms,
        }


class Answerer(Protocol):
    """What the bot calls to answer a question; the one-shot path and the agent loop both fit."""

    async def answer(self, question: str) -> Answer: ...
