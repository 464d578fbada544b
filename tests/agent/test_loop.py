"""The extractive loop on real handbook questions, over five handbook pages."""

from __future__ import annotations

from agent.answer import Turn
from agent.trace import trace_from_run, trace_lines
from store.filters import ChunkFilter
from tests.agent.conftest import Built, all_quotes_stored


def _titles(answer: object) -> list[str]:
    return [c.title for c in answer.citations]  # type: ignore[attr-defined]


async def test_how_do_i_request_leave_does_not_open_with_the_paid_parental_leave_page(
    handbook: Built,
) -> None:
    answer = await handbook.loop().answer("How do I request leave?")
    assert answer.claims and not answer.escalate
    first = answer.citation(answer.claims[0].citation)
    assert first.title != "Paid parental leave"
    assert any("request" in c.quote.lower() for c in answer.claims)
    # Nor with how to cancel one: a sentence opening with the opposite action.
    assert not any(c.quote.startswith("Cancel") for c in answer.claims)
    assert await all_quotes_stored(handbook.pool, answer)


async def test_how_much_annual_leave_leaves_out_the_sick_leave_sentence(handbook: Built) -> None:
    answer = await handbook.loop().answer("How much annual leave do I earn?")
    assert answer.claims and not answer.escalate
    assert all("sick leave" not in c.quote.lower() for c in answer.claims)
    assert any("annual leave" in c.quote.lower() for c in answer.claims)


async def test_a_list_answer_is_quoted_with_its_lead_in_and_its_items(handbook: Built) -> None:
    answer = await handbook.loop().answer("What can I use sick leave for?")
    listed = [c.quote for c in answer.claims if "Mental health care" in c.quote]
    assert listed, [c.quote for c in answer.claims]
    assert "You can use Sick Leave for:" in listed[0]
    assert "Doctor and medical appointments" in listed[0]


async def test_a_comparison_is_answered_as_two_sub_questions(handbook: Built) -> None:
    answer = await handbook.loop().answer(
        "What is the difference between annual leave and sick leave?"
    )
    assert [q.text for q in answer.sub_questions] == ["annual leave", "sick leave"]
    assert all(q.status != "missing" for q in answer.sub_questions)
    by_question = {
        q.text: [c.quote.lower() for c in answer.claims if c.sub_question == q.text]
        for q in answer.sub_questions
    }
    assert any("annual leave" in quote for quote in by_question["annual leave"])
    assert any("sick leave" in quote for quote in by_question["sick leave"])


async def test_an_off_topic_question_escalates_with_nothing_claimed(handbook: Built) -> None:
    answer = await handbook.loop().answer("What is the boiling point of liquid nitrogen?")
    assert answer.escalate and answer.claims == () and answer.citations == ()
    assert answer.gaps and answer.stop_reason in ("no_better_action", "max_steps_reached")


async def test_a_scope_that_excludes_the_only_source_escalates_and_cites_nothing(
    handbook: Built,
) -> None:
    answer = await handbook.loop().answer(
        "How much annual leave do I earn?", scope=ChunkFilter(collections=["elsewhere"])
    )
    assert answer.escalate and answer.claims == () and answer.citations == ()
    inside = await handbook.loop().answer(
        "How much annual leave do I earn?", scope=ChunkFilter(collections=["handbook"])
    )
    assert inside.claims


async def test_a_follow_up_in_a_thread_is_rewritten_to_stand_alone(handbook: Built) -> None:
    loop = handbook.loop()
    first = await loop.answer("How much annual leave do I earn?")
    history = [
        Turn("user", "How much annual leave do I earn?"),
        Turn("bot", "", claims=first.claims, citations=first.citations),
    ]
    follow_up = await loop.answer("and sick leave?", history=history)
    assert follow_up.standalone_question == "How much sick leave do I earn?"
    assert follow_up.claims
    assert any("sick leave" in c.quote.lower() for c in follow_up.claims)


async def test_thanks_gets_a_reply_and_shorter_please_restates_the_first_claim(
    handbook: Built,
) -> None:
    loop = handbook.loop()
    thanks = await loop.answer("thanks!")
    assert thanks.reply and thanks.stop_reason == "no_retrieval_needed" and not thanks.escalate
    first = await loop.answer("How much annual leave do I earn?")
    history = [
        Turn("user", "How much annual leave do I earn?"),
        Turn("bot", "", claims=first.claims, citations=first.citations),
    ]
    shorter = await loop.answer("shorter please", history=history)
    assert shorter.stop_reason == "no_retrieval_needed"
    assert [c.quote for c in shorter.claims] == [first.claims[0].quote]


async def test_every_run_is_stored_with_a_trace_of_its_steps(handbook: Built) -> None:
    answer = await handbook.loop().answer("How do I request leave?", origin={"user": "U1"})
    assert answer.run_id is not None
    stored = await handbook.runs.get(answer.run_id)
    assert stored is not None and stored.status == "finished"
    trace = trace_from_run(stored)
    assert trace.queries[0] == "How do I request leave?"
    assert [s.text for s in trace.sub_questions] == ["How do I request leave?"]
    actions = [s.action for s in trace.steps]
    assert actions[:2] == ["route", "plan"] and "retrieve" in actions and actions[-1] == "verify"
    assert all(s.latency_ms >= 0 for s in trace.steps)
    assert any(s.cited for s in trace.sources)
    assert trace.stop_reason == answer.stop_reason and trace.verified == len(answer.claims)
    text = "\n".join(trace_lines(trace))
    assert "Queries run:" in text and "Sources read:" in text
    from agent.answer import Answer

    assert stored.answer is not None
    assert Answer.from_dict(stored.answer) == answer
