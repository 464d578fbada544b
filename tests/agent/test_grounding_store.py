"""Grounding for real: a claim survives only if its quote is in the cited chunk as stored.

The reasoners here lie on purpose. One invents a quote; the other cites a real sentence
to a chunk that does not hold it (a neighbour of the chunk that does, read in the same
passage, so a check against the passage text — the string the quote was cut from —
would let it through). Both claims are dropped and counted; the honest ones survive.
"""

from __future__ import annotations

import dataclasses

import asyncpg

from agent.answer import Citation, Claim
from agent.grounding import quote_occurs
from agent.reasoners.base import DraftClaim
from agent.reasoners.extractive import ExtractiveReasoner
from agent.state import AgentState
from tests.agent.conftest import Built, all_quotes_stored


class InventingReasoner(ExtractiveReasoner):
    async def synthesize(self, state: AgentState) -> list[DraftClaim]:
        honest = await super().synthesize(state)
        invented = dataclasses.replace(
            honest[0], quote="You earn 40 hours of annual leave in your first week.", statement="x"
        )
        return [*honest, invented]


class MisCitingReasoner(ExtractiveReasoner):
    pool: asyncpg.Pool  # to read the cited chunk as stored

    async def synthesize(self, state: AgentState) -> list[DraftClaim]:
        honest = await super().synthesize(state)
        cited = honest[0].chunk_id
        cited_text = await self.pool.fetchval("SELECT text FROM chunks WHERE id = $1", cited)
        # A sentence of another chunk of the same page, cited to the first claim's chunk; one
        # the cited chunk does not also hold (neighbouring chunks share their edges).
        page = next(e.document_id for e in state.evidence if e.chunk_id == cited)
        for evidence in state.evidence:
            if (
                evidence.chunk_id != cited
                and evidence.document_id == page
                and not quote_occurs(evidence.quote, cited_text)
            ):
                wrong = DraftClaim(evidence.quote, evidence.quote, cited, 0)
                return [wrong, *honest]  # first, so the claim budget never cuts it
        raise AssertionError("the fixture should give quotes from two chunks of one page")


def _reasoner(kind: type[ExtractiveReasoner], handbook: Built) -> ExtractiveReasoner:
    honest = handbook.extractive()
    reasoner = kind(analyzer=handbook.analyzer, scorer=honest._scorer)
    if isinstance(reasoner, MisCitingReasoner):
        reasoner.pool = handbook.pool
    return reasoner


async def test_an_invented_quote_is_dropped_and_counted_and_the_rest_survives(
    handbook: Built,
) -> None:
    honest = await handbook.loop().answer("How much annual leave do I earn?")
    lying = handbook.loop(reasoner=_reasoner(InventingReasoner, handbook))
    answer = await lying.answer("How much annual leave do I earn?")
    assert answer.rejected_claims == 1
    assert [c.quote for c in answer.claims] == [c.quote for c in honest.claims]
    assert all("40 hours" not in c.quote for c in answer.claims)
    stored = await handbook.runs.get(answer.run_id or 0)
    assert stored is not None
    assert stored.verification["dropped"] == [
        {"chunk_id": honest.claims[0].chunk_id, "reason": "quote_not_in_chunk"}
    ]


async def test_a_real_quote_cited_to_the_wrong_chunk_is_dropped(handbook: Built) -> None:
    lying = handbook.loop(reasoner=_reasoner(MisCitingReasoner, handbook))
    answer = await lying.answer("What is the difference between annual leave and sick leave?")
    assert answer.rejected_claims == 1
    assert answer.claims and await all_quotes_stored(handbook.pool, answer)


async def test_only_claims_that_passed_grounding_are_handed_over_before_the_answer(
    handbook: Built,
) -> None:
    handed: list[tuple[str, int, str]] = []

    async def on_claim(claim: Claim, citation: Citation) -> None:
        handed.append((claim.quote, claim.citation, citation.title))

    lying = handbook.loop(reasoner=_reasoner(InventingReasoner, handbook))
    answer = await lying.answer("How much annual leave do I earn?", on_claim=on_claim)
    assert answer.rejected_claims == 1 and answer.claims
    assert handed == [
        (c.quote, c.citation, answer.citation(c.citation).title) for c in answer.claims
    ]
    assert all("40 hours" not in quote for quote, _, _ in handed)
