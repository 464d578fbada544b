"""Reading questions: decomposition, answer types, follow-ups and history, bridge names."""

from __future__ import annotations

import pytest

from agent.answer import Citation, Claim, Turn
from agent.followups import compress, standalone
from agent.language.decompose import decompose, is_choice
from agent.language.entities import new_names
from agent.language.questions import answer_type


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        ("What is the difference between annual leave and sick leave?",
         ["annual leave", "sick leave"]),
        ("Are William Kronick and Jon Turteltaub both television writers?",
         ["Are William Kronick television writers?", "Are Jon Turteltaub television writers?"]),
        ("Which is older, The Ref or Vitamin?",
         ["Which is older: The Ref?", "Which is older: Vitamin?"]),
        ("How do I request leave and what is the deadline for a voucher?",
         ["How do I request leave?", "what is the deadline for a voucher?"]),
        ("How much annual leave do I earn?", ["How much annual leave do I earn?"]),
        # an auxiliary with its subject opens a second question; without one, a verb
        ("lost my key card what do i do and will i be charged for a new one",
         ["lost my key card what do i do?", "will i be charged for a new one?"]),
        ("joined in march and was auto-enrolled, can I opt out?",
         ["joined in march and was auto-enrolled, can I opt out?"]),
    ],
)  # fmt: skip
def test_questions_split_into_the_sub_questions_they_ask(question: str, parts: list[str]) -> None:
    assert decompose(question) == parts


def test_only_a_choice_between_options_is_a_choice() -> None:
    assert is_choice("Which is older, The Ref or Vitamin?")
    assert not is_choice("What is the difference between annual leave and sick leave?")


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("When did the Normans conquer England?", "date"),
        ("How many pay periods are left?", "number"),
        ("Who approves my timesheet?", "person"),
        ("Where is the Huguenot District?", "place"),
        ("How do I request leave?", "procedure"),
        ("Were Scott Derrickson and Ed Wood of the same nationality?", "yes_no"),
        ("What is Tock?", "definition"),
    ],
)
def test_the_answer_type_follows_the_question_word(question: str, kind: str) -> None:
    assert answer_type(question) == kind


def _bot(*titles: str) -> Turn:
    citations = tuple(
        Citation(i + 1, t, None, f"{i}.md", i, i, "s", "c") for i, t in enumerate(titles)
    )
    claims = tuple(
        Claim(f"claim {t}", f"A quote about {t}.", i + 1, i) for i, t in enumerate(titles)
    )
    return Turn("bot", "", claims=claims, citations=citations)


def test_follow_ups_are_rewritten_from_the_thread() -> None:
    thread = [Turn("user", "How much annual leave do I earn?"), _bot("Leave types")]
    assert standalone("and for contractors?", thread) == (
        "How much annual leave do I earn for contractors?"
    )
    assert standalone("what about sick leave?", thread) == "How much sick leave do I earn?"
    assert standalone("How do I book travel?", thread) == "How do I book travel?"
    two = [Turn("user", "Which pages cover leave?"), _bot("Leave types", "Paid parental leave")]
    assert standalone("what about the second one?", two).startswith("Paid parental leave")


def test_history_over_its_budget_keeps_older_turns_as_questions_and_cited_claims() -> None:
    long_answer = Turn("bot", "word " * 300, claims=_bot("Leave types").claims)
    thread = [Turn("user", "First question?"), long_answer, Turn("user", "Second?")]
    kept = compress(thread, budget_words=40)
    assert [t.role for t in kept] == ["user", "bot", "user"]
    assert kept[1].text == "A quote about Leave types."  # the bot's text, reduced
    assert compress(thread, budget_words=1000) == tuple(thread)


def test_a_bridge_is_a_name_the_question_lacks_and_never_a_date() -> None:
    sentence = (
        "James Harris (born February 17, 1963) is known for his role as The Hook-Handed Man "
        "in Lemony Snicket's A Series of Unfortunate Events."
    )
    question = "Jamie Harris is known for his role as The Hook-Handed Man in a movie by who?"
    found = new_names(sentence, question)
    assert found[0] == "Lemony Snicket's A Series of Unfortunate Events"
    assert all("February" not in name for name in found)
