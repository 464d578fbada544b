"""The loop on small made-up corpora: sources that disagree, and a second hop."""

from __future__ import annotations

from agent.loop import LoopOptions
from tests.agent.conftest import Built


async def test_sources_that_disagree_are_both_cited_and_the_newer_is_marked(
    made_up: Built,
) -> None:
    answer = await made_up.loop().answer("How many days per week may employees work remotely?")
    (conflict,) = answer.conflicts
    sides = {answer.claims[i].quote for i in conflict.claims}
    assert any("2 days" in s for s in sides) and any("3 days" in s for s in sides)
    newer = answer.citation(conflict.newer or 0)
    assert newer.title == "Remote work policy (2025)"
    assert {c.title for c in answer.citations} >= {
        "Remote work policy (2023)",
        "Remote work policy (2025)",
    }
    assert "2025-06-01" in conflict.detail and "more recent" in conflict.detail


async def test_a_first_query_that_misses_is_rewritten_with_the_name_its_evidence_gives(
    made_up: Built,
) -> None:
    # One passage read per query: the first finds only the page naming the team.
    loop = made_up.loop(options=LoopOptions(read_per_question=1))
    answer = await loop.answer("When does the group that maintains Project Aurora meet?")
    assert not answer.escalate
    assert "Thursday at 3pm" in " ".join(c.quote for c in answer.claims)
    assert {c.title for c in answer.citations} == {"Project Aurora", "Ledger Guild"}
    stored = await made_up.runs.get(answer.run_id or 0)
    assert stored is not None and len(stored.queries) == 2
    assert "Ledger Guild" in stored.queries[1]
    assert stored.stats["rewrites_with_evidence"] == 1


async def test_an_answer_that_names_a_bridge_reads_its_page_as_a_second_hop(
    made_up: Built,
) -> None:
    # The rota page answers "who draws it up" with a name; the post is on her own page,
    # which the question's words do not find (one passage read per query).
    loop = made_up.loop(options=LoopOptions(read_per_question=1))
    answer = await loop.answer(
        "What post is held by the person who draws up the night shift rota each quarter?"
    )
    assert {c.title for c in answer.citations} == {"Night Shift rota", "Mirela Voss"}
    quotes = " ".join(c.quote for c in answer.claims)
    # The pronoun's sentence is quoted with the sentence it refers back to.
    assert "2016 as a nurse. She now holds the post of Director of Clinical Operations." in quotes
    stored = await made_up.runs.get(answer.run_id or 0)
    assert stored is not None and stored.queries[1:] == ["Mirela Voss"]
    assert stored.stats["second_hops_with_evidence"] == 1 and stored.stats["rewrites"] == 0
