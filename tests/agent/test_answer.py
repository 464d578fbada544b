"""The answer object's JSON shape, as `kb ask --json` prints it and runs store it."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from agent.answer import Answer, Citation, Claim, Conflict, Gap, SubQuestion


def _answer() -> Answer:
    cited = Citation(
        number=1,
        title="Leave",
        url="https://kb.test/leave",
        uri="leave.md",
        chunk_id=7,
        document_id=3,
        source="handbook",
        collection="hr",
        section="Leave > Annual leave",
        updated_at=datetime(2026, 5, 1, tzinfo=UTC),
    )
    claim = Claim(
        statement="You earn 4 hours per pay period.",
        quote="You earn 4 hours per pay period.",
        citation=1,
        chunk_id=7,
        sub_question="How much annual leave do I earn?",
    )
    return Answer(
        question="How much annual leave do I earn?",
        claims=(claim,),
        citations=(cited,),
        stop_reason="enough_evidence",
        escalate=False,
        sub_questions=(SubQuestion("How much annual leave do I earn?", "answered"),),
        gaps=(Gap("And for contractors?", "no_results", "nothing on contractors"),),
        conflicts=(Conflict("How much?", (0,), newer=1),),
        run_id=12,
    )


def test_a_claim_carries_its_citation_inline_in_json() -> None:
    data = _answer().as_dict()
    assert data["covered"] is True
    assert data["claims"][0]["citation"] == {
        "number": 1,
        "title": "Leave",
        "url": "https://kb.test/leave",
        "section": "Leave > Annual leave",
    }
    assert data["citations"][0]["updated_at"] == "2026-05-01T00:00:00+00:00"


def test_an_answer_survives_a_trip_through_json() -> None:
    answer = _answer()
    assert Answer.from_dict(json.loads(json.dumps(answer.as_dict()))) == answer


def test_an_answer_without_claims_is_not_covered() -> None:
    answer = Answer("Q?", (), (), "insufficient_grounding", escalate=True)
    assert answer.covered is False
    assert answer.as_dict()["covered"] is False
