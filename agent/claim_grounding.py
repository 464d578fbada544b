"""The one gate every claim passes before it is shown: its quote verified against the
chunk it cites, as stored (agent/grounding). Claims synthesised from this run's evidence
and a claim restated from an earlier turn of the thread both go through `ground_claims`;
what fails is dropped with its reason, and counted.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass

from agent.grounding import GroundingVerifier, QuoteCheck
from agent.reasoners.base import DraftClaim


@dataclass(frozen=True, slots=True)
class Dropped:
    chunk_id: int
    reason: str


@dataclass(frozen=True, slots=True)
class Grounded:
    kept: tuple[DraftClaim, ...]
    dropped: tuple[Dropped, ...]


async def ground_claims(
    verifier: GroundingVerifier,
    drafts: Sequence[DraftClaim],
    *,
    read: Container[int] | None = None,
) -> Grounded:
    """The drafts whose quote occurs in their chunk as stored. With `read`, a claim must
    also cite a chunk the run read: a reasoner cannot cite what it was not shown."""
    verdicts = await verifier.verify([QuoteCheck(d.chunk_id, d.quote) for d in drafts])
    kept: list[DraftClaim] = []
    dropped: list[Dropped] = []
    for draft, verdict in zip(drafts, verdicts, strict=True):
        if not verdict.verified:
            dropped.append(Dropped(draft.chunk_id, verdict.reason))
        elif read is not None and draft.chunk_id not in read:
            dropped.append(Dropped(draft.chunk_id, "chunk_not_read"))
        else:
            kept.append(draft)
    return Grounded(tuple(kept), tuple(dropped))
