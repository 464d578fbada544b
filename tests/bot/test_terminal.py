"""Rendering an answer for the terminal and for Slack: a conflict is shown with both
sides, a sub-question found nothing for as "Not found", a reply as itself."""

from __future__ import annotations

from datetime import UTC, datetime

from agent.answer import Answer, Citation, Claim, Conflict, Gap, PageRead, SubQuestion
from bot.slack.render.blocks import answer_messages
from bot.terminal import answer_text


def _citation(number: int, title: str, year: int) -> Citation:
    return Citation(
        number=number, title=title, url=f"https://kb.test/{number}", uri=f"{number}.md",
        chunk_id=number, document_id=number, source="s", collection="c",
        updated_at=datetime(year, 1, 1, tzinfo=UTC),
    )  # fmt: skip


def test_a_conflict_and_a_missing_sub_question_are_shown_beside_the_claims() -> None:
    answer = Answer(
        question="How many remote days?",
        claims=(
            Claim("a", "Up to 2 days per week.", 1, 1),
            Claim("b", "Up to 3 days per week.", 2, 2),
        ),
        citations=(_citation(1, "Policy 2023", 2023), _citation(2, "Policy 2025", 2025)),
        stop_reason="enough_evidence",
        escalate=True,
        sub_questions=(SubQuestion("remote days", "answered"), SubQuestion("stipend", "missing")),
        gaps=(Gap("stipend", "no_results"),),
        conflicts=(Conflict("remote days", (0, 1), 2, "The sources disagree: [2] is newer."),),
    )
    text = answer_text(answer)
    assert "“Up to 2 days per week.” [1]" in text and "“Up to 3 days per week.” [2]" in text
    assert "Sources disagree on remote days: [1], [2]; [2] is newer" in text
    assert "Not found: stipend" in text
    blocks = [b for m in answer_messages(answer) for b in m.blocks]
    texts = [b["text"]["text"] for b in blocks if "text" in b and isinstance(b["text"], dict)]
    assert any("Sources disagree" in t for t in texts)
    assert any("stipend" in t for t in texts)


def test_a_reply_without_retrieval_is_shown_as_itself() -> None:
    answer = Answer(
        question="thanks", claims=(), citations=(), stop_reason="no_retrieval_needed",
        escalate=False, reply="You're welcome.",
    )  # fmt: skip
    assert answer_text(answer) == "You're welcome."
    first = answer_messages(answer)[0].blocks[0]
    assert first["text"]["text"] == "You're welcome."


def test_the_answer_span_leads_its_quote_and_a_gap_says_what_is_missing() -> None:
    answer = Answer(
        question="How many credit hours can I carry over, and what is the monthly cap?",
        claims=(
            Claim(
                "You may carry over up to 24 credit hours.",
                "You may carry over up to 24 credit hours.",
                1,
                1,
                span="up to 24 credit hours",
            ),
            Claim("Credit hours are earned.", "Credit hours are earned.", 1, 1),
        ),
        citations=(_citation(1, "Overtime", 2024),),
        stop_reason="enough_evidence",
        escalate=True,
        sub_questions=(
            SubQuestion("How many credit hours can I carry over", "answered"),
            SubQuestion("what is the monthly cap", "partial"),
        ),
        gaps=(
            Gap(
                "what is the monthly cap",
                "too_weak",
                "“Overtime” mentions credit hours but gives no monthly maximum.",
            ),
        ),
    )
    text = answer_text(answer)
    assert "• **up to 24 credit hours** — “You may carry over up to 24 credit hours.” [1]" in text
    assert "• “Credit hours are earned.” [1]" in text
    assert (
        "Not found: what is the monthly cap — “Overtime” mentions credit hours but gives no "
        "monthly maximum." in text
    )


def test_nothing_found_lists_the_pages_that_came_closest_before_the_advice() -> None:
    answer = Answer(
        question="can I text that I'm sick?", claims=(), citations=(),
        stop_reason="no_better_action", escalate=True,
        gaps=(Gap("can I text that I'm sick?", "no_results", "No page found mentions text."),),
        closest_pages=(
            PageRead("PTO", "https://clinic.test/pto", "pto.md", "hr", 4, "Calling out sick"),
            PageRead("Payroll", None, "payroll.md", "hr", 7),
        ),
    )  # fmt: skip
    assert answer_text(answer).splitlines() == [
        "I couldn't find this in the knowledge base.",
        "  Missing: No page found mentions text.",
        "  Pages that came closest (not enough to answer from):",
        "    PTO › Calling out sick — https://clinic.test/pto",
        "    Payroll — payroll.md",
        "  Try other words, or ask the people who own the topic.",
    ]
