"""Properties of the question-text readers this project added for chat questions and
altered questions: any text in, a well-formed answer out, never an exception
(agent/language/prefixes.py, questions.chat_spelled / answer_type, typos.clipped,
clipped_in_phrase and split_alphanumeric, spans.find_span's yes/no and steps readers)."""

from __future__ import annotations

from typing import get_args

from hypothesis import example, given
from hypothesis import strategies as st

from agent.language.prefixes import says_the_opposite
from agent.language.questions import AnswerType, answer_type, chat_spelled
from agent.language.spans import find_span
from agent.language.typos import clipped, clipped_in_phrase, split_alphanumeric

_CHATTY = st.text(alphabet=st.sampled_from("whatsincl plzthx?.-' unonUNONaeiou\u017f\u00df"))


@given(_CHATTY | st.text(max_size=120))
@example("whats the max hours incl overtime pls?")
def test_chat_spelling_is_written_out_once_and_for_all(text: str) -> None:
    spelled = chat_spelled(text)
    assert chat_spelled(spelled) == spelled


@given(_CHATTY | st.text(max_size=120))
@example("is there a number I can call?")
def test_every_question_gets_one_of_the_answer_types(text: str) -> None:
    assert answer_type(text) in get_args(AnswerType)


@given(_CHATTY | st.text(max_size=120))
@example("Which marriage became uncommon?")
@example("How were non-local networks set up?")
def test_a_question_never_says_the_opposite_of_itself(question: str) -> None:
    # The question holds each prefixed word it asks with: it cannot contradict itself.
    assert not says_the_opposite(question, question)


@given(
    st.text(alphabet="certifcaon", min_size=1, max_size=8),
    st.frozensets(st.text(alphabet="certifcaon", min_size=1, max_size=14), max_size=12),
)
@example("cert", frozenset({"certif", "certifi", "cost"}))
@example("pens", frozenset({"pension", "penalty"}))
def test_a_clip_stands_only_for_the_one_family_it_begins(
    word: str, vocabulary: frozenset[str]
) -> None:
    whole = clipped(word, vocabulary)
    if whole is None:
        return
    assert whole in vocabulary and whole.startswith(word) and whole != word
    assert len(word) >= 4 and 2 * len(word) >= len(whole)
    assert all(v.startswith(whole) for v in vocabulary if v.startswith(word) and v != word)


def test_a_compounds_first_word_is_no_clip_of_it() -> None:
    # "hand" began "handheld" (its rest "held" an everyday word): "I hurt my hand" was
    # read as asking about the dock's handheld scanners.
    assert clipped("hand", frozenset({"handheld", "dock"})) is None
    assert clipped("heli", frozenset({"helicopt"})) == "helicopt"  # "copt" is no everyday word
    assert clipped("cert", frozenset({"certif"})) == "certif"


@given(st.text(max_size=16), st.frozensets(st.text(max_size=6), max_size=8))
@example("bsl2", frozenset({"bsl 2"}))
@example("401k", frozenset({"401"}))
def test_a_run_together_word_stands_only_for_one_of_its_own_parts(
    word: str, written: frozenset[str]
) -> None:
    part = split_alphanumeric(word, lambda parts: " ".join(parts) in written)
    assert part is None or (part in word and part != word)


@given(st.text(max_size=200), _CHATTY | st.text(max_size=60))
@example("Holidays: New Year's Day, Juneteenth, Labor Day and more.", "is juneteenth off?")
@example("See https://a.example/x: one, two, three", "is two listed?")
def test_a_yes_no_span_is_always_a_piece_of_the_quote(quote: str, question: str) -> None:
    span = find_span(quote, "yes_no", question)
    assert span == "" or span in quote


@given(st.text(max_size=200), _CHATTY | st.text(max_size=60))
@example("Leave is allocated by a ballot held in September.", "how is leave decided?")
@example(
    "If you use tools, follow the instructions on the [Tools](https://a.example) page.", "how?"
)
@example("See the Timesheets page; email payroll@a.example.", "how do I fix my pay?")
def test_a_steps_span_is_always_the_quotes_own_words(quote: str, question: str) -> None:
    # Steps, a pointer left out, or how a thing is done: words of the quote, in its order.
    span = find_span(quote, "procedure", question)
    assert span == "" or " ".join(span.split()) in " ".join(quote.split())


@given(_CHATTY | st.text(max_size=8), _CHATTY | st.text(max_size=80), st.text(max_size=300))
@example("hol", "worked the bank hol", "a bank holiday; bank holidays; bank holder")
@example("d[f", "sunday d[f", "sunday d[fferential")
def test_a_clip_in_a_phrase_is_a_word_of_the_pages_it_begins(
    word: str, question: str, text: str
) -> None:
    whole = clipped_in_phrase(word, question, text)
    assert whole is None or (whole.startswith(word.casefold()) and whole in text.casefold())


_FIGURES = {"seven": "7", "three": "3", "twelve": "12", "two": "2"}


@given(
    words=st.lists(
        st.sampled_from(["seven-day", "roster", "three", "weeks", "staff", "Sunday", "two"]),
        min_size=1,
        max_size=5,
    ),
    respelled=st.booleans(),
)
@example(words=["seven-day", "roster"], respelled=True)
def test_a_quote_that_only_restates_the_question_holds_no_span(
    words: list[str], respelled: bool
) -> None:
    # The question says every word of the quote, its numbers as figures or as words:
    # nothing in the quote is new, so no span of any type answers from it.
    question = " ".join(
        _FIGURES.get(w, w) if respelled else w for part in words for w in part.split("-")
    )
    quote = " ".join(words) + "."
    for kind in ("number", "entity", "date"):
        assert find_span(quote, kind, f"how many {question}?") == ""
