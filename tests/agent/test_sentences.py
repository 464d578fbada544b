"""Splitting stored text into quotable units: sentences, items, and lists with their lead-in."""

from __future__ import annotations

from agent.sentences import SentenceSplitter, sentences


def test_sentences_skip_headings_and_list_markers_and_keep_exact_spans() -> None:
    text = (
        "## Booking\n\n- Book all travel through Concur. Wait for approval first.\n"
        "1. File a voucher within five days."
    )
    found = list(sentences(text))
    assert [s.text for s in found] == [
        "Book all travel through Concur.",
        "Wait for approval first.",
        "File a voucher within five days.",
    ]
    assert all(text[s.start : s.end] == s.text for s in found)
    assert {s.heading for s in found} == {"Booking"}


def test_sentences_are_not_cut_inside_a_link_or_after_an_abbreviation() -> None:
    text = (
        "Read [the guide. It helps](https://x.test/a) before you go, e.g. on Monday. "
        "Then book it now. [Next link](https://d.test) starts this one."
    )
    assert [s.text for s in sentences(text)] == [
        "Read [the guide. It helps](https://x.test/a) before you go, e.g. on Monday.",
        "Then book it now.",
        "[Next link](https://d.test) starts this one.",
    ]


def test_a_lead_in_ending_in_a_colon_is_quoted_with_its_list_items_and_sub_items() -> None:
    text = (
        "### Annual leave\n\nYou may use annual leave for any reason. Annual leave accrues "
        "based on how long you've worked:\n\n- Fewer than 3 years: 4 hours per pay period\n"
        "- Between 3 and 15 years: 6 hours per pay period\n   - unless part-time\n"
        "- 15+ years: 8 hours per pay period\n\nYour leave increases after your anniversary."
    )
    units = SentenceSplitter().split(text)
    (listed,) = [u for u in units if u.kind == "list"]
    assert listed.text.startswith("Annual leave accrues based on")
    assert listed.text.endswith("15+ years: 8 hours per pay period")
    assert "unless part-time" in listed.text
    assert text[listed.start : listed.end] == listed.text
    assert listed.heading == "Annual leave"
    items = [u.text for u in units if u.kind == "item"]
    assert "Fewer than 3 years: 4 hours per pay period" in items


def test_a_long_list_keeps_its_first_items_only() -> None:
    items = "\n".join(f"- item number {i} of the list" for i in range(20))
    text = f"These are the steps to follow:\n\n{items}\n"
    (listed,) = [u for u in SentenceSplitter().split(text) if u.kind == "list"]
    assert "item number 11 " in listed.text and "item number 12 " not in listed.text


def test_a_colon_without_a_list_after_it_makes_no_list_unit() -> None:
    text = "The rule is simple: ask first.\n\nThen there is this paragraph of text."
    assert not [u for u in SentenceSplitter().split(text) if u.kind == "list"]
