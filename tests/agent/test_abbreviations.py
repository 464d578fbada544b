"""Abbreviations a text defines: only "Full Name (FN)" with the initials matching."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agent.language.abbreviations import defined_abbreviations


def test_a_definition_inside_a_link_and_several_in_one_sentence_are_found() -> None:
    text = (
        "The [Employee Assistance Program (EAP)](http://eap.test/) helps. Technology "
        "Transformation Services (TTS) is part of the General Services Administration (GSA)."
    )
    assert defined_abbreviations(text) == {
        "EAP": "Employee Assistance Program",
        "TTS": "Technology Transformation Services",
        "GSA": "General Services Administration",
    }


def test_a_parenthesis_whose_letters_are_not_the_initials_defines_nothing() -> None:
    assert defined_abbreviations("He moved to the United States (USA) in 1990 (AD).") == {}


@given(st.text(alphabet=st.sampled_from("Ab (C)[]x .-EAP"), max_size=80))
def test_every_abbreviation_found_is_the_initials_of_its_name(text: str) -> None:
    for short, name in defined_abbreviations(text).items():
        assert [w[0].upper() for w in name.split()] == [c for c in short if c.isalpha()]
