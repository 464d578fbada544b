from __future__ import annotations

from agent.grounding import normalise, quote_occurs
from agent.sentences import sentences


def test_a_quote_verifies_despite_different_line_wrapping_and_case() -> None:
    chunk = "Submit the request in HRLinks\nat least two weeks   before you leave."
    assert quote_occurs("submit the request in HRLinks at least two weeks before you leave.", chunk)


def test_a_quote_with_one_changed_word_does_not_verify() -> None:
    chunk = "Submit the request in HRLinks at least two weeks before you leave."
    assert not quote_occurs("Submit the request in HRLinks at least three weeks before", chunk)


def test_an_empty_quote_never_verifies() -> None:
    assert not quote_occurs("  ", "anything")
    assert normalise("  A\n b  ") == "a b"


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


def test_sentences_are_not_cut_inside_a_link_or_after_an_abbreviation() -> None:
    text = (
        "Read [the guide. It helps](https://x.test/a) before you go, e.g. on Monday. "
        "Then book it now."
    )
    assert [s.text for s in sentences(text)] == [
        "Read [the guide. It helps](https://x.test/a) before you go, e.g. on Monday.",
        "Then book it now.",
    ]
