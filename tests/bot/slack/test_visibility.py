"""What a place may be shown of a stored run, an answer or a turn (pure filters)."""

from __future__ import annotations

from datetime import UTC, datetime

from agent.answer import Answer, Citation, Claim, PageRead, Turn
from bot.slack.access.config import Access
from bot.slack.access.visibility import (
    HIDDEN,
    chunk_ids_of,
    visible_answer,
    visible_run,
    visible_turn,
)
from store.catalog import ChunkOrigin
from store.runs import StoredRun

OPS = Access(("ops",))


def _answer() -> Answer:
    return Answer(
        question="leave and laptops?",
        claims=(
            Claim("Submit it in HRLinks.", "Submit it in HRLinks.", 1, chunk_id=11),
            Claim("Open a ticket.", "Open a ticket.", 2, chunk_id=22),
        ),
        citations=(
            Citation(1, "Leave", "https://kb.test/leave", "leave.md", 11, 1, "hr-docs", "hr"),
            Citation(2, "Equipment", None, "equipment.md", 22, 2, "ops-docs", "ops"),
        ),
        stop_reason="enough_evidence",
        escalate=False,
    )


def _run() -> StoredRun:
    return StoredRun(
        id=7,
        created_at=datetime.now(UTC),
        finished_at=None,
        status="finished",
        question="leave and laptops?",
        scope={},
        origin={},
        history_turns=0,
        reasoner="test",
        stop_reason="enough_evidence",
        escalate=False,
        steps=[
            {"action": "retrieve", "output": "read Leave and Equipment", "latency_ms": 3},
            {"action": "read", "chunk_id": 11, "output": "HRLinks"},
            {"action": "read", "chunk_id": 22, "output": "ticket"},
        ],
        queries=["leave and laptops?"],
        evidence_chunk_ids=[11, 22],
        verification={},
        answer=_answer().as_dict(),
        error=None,
    )


ORIGINS = {11: ChunkOrigin(11, "hr", "Leave"), 22: ChunkOrigin(22, "ops", "Equipment")}


def test_an_answer_loses_the_claims_and_citations_of_hidden_collections() -> None:
    shown = visible_answer(_answer(), OPS)
    assert [c.title for c in shown.citations] == ["Equipment"]
    assert [c.quote for c in shown.claims] == ["Open a ticket."]
    assert visible_answer(_answer(), Access()) == _answer()


def test_a_bot_turn_loses_hidden_claims() -> None:
    answer = _answer()
    turn = Turn("bot", "both", claims=answer.claims, citations=answer.citations)
    shown = visible_turn(turn, OPS)
    assert shown.text == "Open a ticket." and [c.collection for c in shown.citations] == ["ops"]


def test_a_run_shows_no_hidden_evidence_step_or_title() -> None:
    run = _run()
    assert chunk_ids_of(run) == [11, 22]
    shown = visible_run(run, OPS, ORIGINS)
    assert shown.evidence_chunk_ids == [22]
    assert shown.steps == [
        {"action": "retrieve", "output": HIDDEN, "latency_ms": 3},
        {"action": "read", "chunk_id": 22, "output": "ticket"},
    ]
    assert "HRLinks" not in repr(shown) and "kb.test/leave" not in repr(shown)
    assert visible_run(run, Access(), ORIGINS) == run


def test_the_pages_that_came_closest_from_a_hidden_collection_are_not_shown() -> None:
    pages = (
        PageRead("Leave", "https://kb.test/leave", "leave.md", "hr", 11),
        PageRead("Equipment", None, "equipment.md", "ops", 22),
    )
    nothing = Answer("laptops?", (), (), "no_better_action", True, closest_pages=pages)
    assert visible_answer(nothing, OPS).closest_pages == pages[1:]
    assert visible_answer(nothing, Access(("hr", "ops"))) == nothing
