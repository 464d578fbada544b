"""Answers of the asked type written as pages write them (issue 24): a step after the
purpose it serves ("To roll back, run …"), a meeting point far along a phrase ("at the
far end of the parking lot"), and the occasion that answers "when should I …?" ("When a
drawer holds more than $500, …"). Each has a twin that is no answer of the type.
"""

from __future__ import annotations

from agent.language.questions import QuestionAnalyzer, answer_type
from agent.language.spans import find_span
from store.text_analysis import TextAnalyzer

_ROLLBACK = (
    "To roll back, run atlas rollback <service>; the previous version is restored in "
    "about four minutes."
)
_DROP = "When a drawer holds more than $500 in bills, call the shift lead for a safe drop."


def test_a_step_after_the_purpose_it_serves() -> None:
    assert find_span(_ROLLBACK, "procedure", "How do I roll back a deploy?") == (
        "run atlas rollback <service>"
    )
    # a subject after the purpose makes a statement, not a step
    assert find_span("To qualify, employees must work 20 hours.", "procedure", "how?") == ""
    assert find_span("To date, we have hired 40 people.", "procedure", "how do I hire?") == ""


def test_a_place_far_along_its_phrase() -> None:
    quote = (
        "If the fire alarm sounds, stop sales, guide customers out through the nearest "
        "exit and meet at the far end of the parking lot."
    )
    assert find_span(quote, "place", "fire alarm goes off, where do we meet?") == (
        "the far end of the parking lot"
    )


def test_the_occasion_answers_when() -> None:
    assert find_span(_DROP, "date", "when should I do a safe drop?") == (
        "When a drawer holds more than $500 in bills"
    )
    # a duration is no occasion, and a condition is no time
    assert find_span(_DROP, "date", "how long does a safe drop take?") == ""
    conditional = _DROP.replace("When", "If")
    assert find_span(conditional, "date", "when should I do a safe drop?") == ""


def test_how_a_thing_works_asks_for_a_description() -> None:
    analyzer = QuestionAnalyzer(TextAnalyzer())
    for asked in ("how do pro deals work", "how does vacation work for part-timers?"):
        assert answer_type(asked) == "definition"
        assert "work" not in analyzer.analyse(asked).key_terms
    # working is the topic, and steps are asked for
    assert answer_type("how do I work from home?") == "procedure"
    assert "work" in analyzer.analyse("how do I work from home?").key_terms


def test_a_measure_asked_by_its_name_is_a_number() -> None:
    asked = "what temp shoud the drying ovens be set at"
    assert answer_type(asked) == "number"
    # a check's schedule is no temperature
    assert find_span("Drying ovens: temperature checked every month.", "number", asked) == ""
    assert find_span("Drying ovens are set to 110 degrees.", "number", asked).startswith("110")
    assert answer_type("what time do the ovens switch off?") == "date"


def test_a_name_before_a_thing_names_the_thing() -> None:
    asked = "Who approves a deploy during the December freeze?"
    assert find_span("Production deploys happen through the Atlas pipeline.", "person", asked) == ""
    assert find_span("Deploys in the freeze are approved by Mirela Voss.", "person", asked) == (
        "Mirela Voss"
    )


def test_a_glossary_dash_defines_the_term_asked() -> None:
    asked = "what's an LO licence"
    glossary = "- LF licence – counterbalance forklifts\n- LO licence – order-picking forklifts"
    assert find_span(glossary, "definition", asked) == "order-picking forklifts"
    # a dash in prose sets off an aside: no meaning of "staff"
    assert (
        find_span("Staff – including managers – must sign in.", "definition", "what are staff")
        == ""
    )
