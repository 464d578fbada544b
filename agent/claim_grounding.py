"""The one gate every claim passes before it is shown. Claims synthesised from this run's
evidence and a claim restated from an earlier turn of the thread both go through
`ground_claims`; what fails is dropped with its reason, and counted.

Two checks:
- the quote occurs in the chunk it cites, as stored (agent/grounding);
- the statement says nothing its quote does not: it is the quote itself, or a paraphrase
  whose every content word, number, date and name occurs in the quote once both are
  normalised (case, accents, punctuation, stemming: the keyword index's own stemmer,
  handed in as `stems`), and which denies only what the quote denies. A statement with
  an invented number, name or word is dropped like an unverified quote: a reader takes
  the statement as what the documents say.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass

from agent.grounding import GroundingVerifier, QuoteCheck, Verdict, normalise
from agent.reasoners.base import DraftClaim

Stems = Callable[[str], frozenset[str]]

# Stop words (which the stemmer drops) that turn a statement into its opposite: a
# paraphrase may carry one only where its quote does.
_NEGATION = re.compile(r"\b(?:not|never|no|none|neither|nor|without|cannot)\b|n[’']t\b", re.I)


@dataclass(frozen=True, slots=True)
class Dropped:
    chunk_id: int
    reason: str


@dataclass(frozen=True, slots=True)
class Grounded:
    kept: tuple[DraftClaim, ...]
    dropped: tuple[Dropped, ...]
    # Statements written (every draft that reached the statement check) and those dropped
    # because they said more than their quote: unsupported_statement_rate's two counts.
    statements_written: int = 0
    statements_dropped: int = 0


def statement_supported(statement: str, quote: str, stems: Stems) -> bool:
    """Whether `statement` says only what `quote` says (see the module's docstring)."""
    if not normalise(statement) or normalise(statement) == normalise(quote):
        return True  # no statement of its own: the quote is shown as itself
    if _NEGATION.search(statement) and not _NEGATION.search(quote):
        return False
    words = stems(statement)
    return bool(words) and words <= stems(quote)


async def ground_claims(
    verifier: GroundingVerifier,
    drafts: Sequence[DraftClaim],
    *,
    stems: Stems,
    read: Container[int] | None = None,
) -> Grounded:
    """The drafts whose quote occurs in their chunk as stored and whose statement its
    quote supports. With `read`, a claim must also cite a chunk the run read: a reasoner
    cannot cite what it was not shown."""
    return merged(await ground_each(verifier, drafts, stems=stems, read=read))


async def ground_each(
    verifier: GroundingVerifier,
    drafts: Sequence[DraftClaim],
    *,
    stems: Stems,
    read: Container[int] | None = None,
) -> list[Grounded]:
    """`ground_claims` for each draft on its own (one query for them all), so that a
    claim checked as soon as it is written is checked once, by the same rules."""
    verdicts = await verifier.verify([QuoteCheck(d.chunk_id, d.quote) for d in drafts])
    return [
        _grounded(draft, verdict, stems, read)
        for draft, verdict in zip(drafts, verdicts, strict=True)
    ]


def merged(parts: Sequence[Grounded]) -> Grounded:
    """Drafts grounded apart, as one result in their order."""
    return Grounded(
        tuple(d for p in parts for d in p.kept),
        tuple(d for p in parts for d in p.dropped),
        sum(p.statements_written for p in parts),
        sum(p.statements_dropped for p in parts),
    )


def _grounded(
    draft: DraftClaim, verdict: Verdict, stems: Stems, read: Container[int] | None
) -> Grounded:
    if not verdict.verified:
        return Grounded((), (Dropped(draft.chunk_id, verdict.reason),))
    if read is not None and draft.chunk_id not in read:
        return Grounded((), (Dropped(draft.chunk_id, "chunk_not_read"),))
    if not statement_supported(draft.statement, draft.quote, stems):
        return Grounded((), (Dropped(draft.chunk_id, "statement_not_in_quote"),), 1, 1)
    return Grounded((draft,), (), 1, 0)
