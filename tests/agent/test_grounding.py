"""The quote check: what it forgives (case, spacing, punctuation, link syntax) and what not."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from agent.grounding import normalise, quote_occurs
from store.text_forms import link_text


def test_a_quote_verifies_despite_different_line_wrapping_and_case() -> None:
    chunk = "Submit the request in HRLinks\nat least two weeks   before you leave."
    assert quote_occurs("submit the request in HRLinks at least two weeks before you leave.", chunk)


def test_a_quote_with_one_changed_word_does_not_verify() -> None:
    chunk = "Submit the request in HRLinks at least two weeks before you leave."
    assert not quote_occurs("Submit the request in HRLinks at least three weeks before", chunk)


def test_an_empty_quote_never_verifies() -> None:
    assert not quote_occurs("  ", "anything")
    assert not quote_occurs(" -- ", "anything -- here")
    assert normalise("  A\n b  ") == "a b"


def test_punctuation_and_list_markers_do_not_fail_a_quote() -> None:
    chunk = "Annual leave accrues:\n\n- Fewer than 3 years: 4 hours\n- **15+ years**: 8 hours"
    assert quote_occurs("Annual leave accrues: - Fewer than 3 years: 4 hours", chunk)
    assert quote_occurs("You can’t", "you can't")
    assert quote_occurs("15+ years: 8 hours", chunk)


def test_a_link_verifies_with_or_without_its_url() -> None:
    chunk = "Before you leave, check [out of office expectations](https://h.test/ooo/) first."
    assert quote_occurs("check out of office expectations first", chunk)
    assert quote_occurs("check [out of office expectations](https://h.test/ooo/) first", chunk)
    assert not quote_occurs("check https h test ooo", chunk)


def test_words_match_whole_so_a_number_inside_another_does_not_verify() -> None:
    assert not quote_occurs("4 hours per pay period", "You earn 14 hours per pay period.")
    assert not quote_occurs("ear", "You earn leave")
    assert not quote_occurs("$5 a day", "5 a day")


# --- properties -------------------------------------------------------------------------

_WORDS = st.lists(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789", min_size=1, max_size=8),
    min_size=1,
    max_size=30,
)
_SEPARATORS = st.sampled_from([" ", "  ", "\n", ", ", ". ", " - ", ": ", "\n\n- ", " “", "” "])


@st.composite
def _chunk_and_span(draw: st.DrawFn) -> tuple[list[str], list[str], int, int]:
    words = draw(_WORDS)
    separators = [draw(_SEPARATORS) for _ in words]
    start = draw(st.integers(0, len(words) - 1))
    end = draw(st.integers(start + 1, len(words)))
    return words, separators, start, end


def _join(words: list[str], separators: list[str]) -> str:
    return "".join(w + s for w, s in zip(words, separators, strict=True))


@settings(max_examples=300, deadline=None)
@given(_chunk_and_span(), st.data())
def test_any_run_of_the_chunks_words_verifies_however_it_is_spaced_cased_or_punctuated(
    drawn: tuple[list[str], list[str], int, int], data: st.DataObject
) -> None:
    words, separators, start, end = drawn
    chunk = _join(words, separators)
    quote_separators = [data.draw(_SEPARATORS) for _ in words[start:end]]
    quote = _join(words[start:end], quote_separators)
    cased = quote.upper() if data.draw(st.booleans()) else quote.lower()
    assert quote_occurs(cased, chunk)


@settings(max_examples=300, deadline=None)
@given(_chunk_and_span(), st.text(alphabet="klmnopqrstuvwxyz", min_size=3, max_size=8))
def test_a_quote_with_a_word_the_chunk_lacks_never_verifies(
    drawn: tuple[list[str], list[str], int, int], stranger: str
) -> None:
    words, separators, start, end = drawn
    chunk = _join(words, separators)
    if stranger in normalise(chunk).split():
        return
    quote_words = [*words[start:end]]
    quote_words.insert(len(quote_words) // 2, stranger)
    assert not quote_occurs(" ".join(quote_words), chunk)


@settings(max_examples=200, deadline=None)
@given(_chunk_and_span())
def test_a_quote_verifies_exactly_when_its_words_are_a_contiguous_run_of_the_chunks_words(
    drawn: tuple[list[str], list[str], int, int],
) -> None:
    words, separators, start, end = drawn
    chunk = _join(words, separators)
    reordered = list(reversed(words[start:end]))
    quote = " ".join(reordered)
    chunk_words = [w.casefold() for w in re.findall(r"\w+", chunk)]
    needle = [w.casefold() for w in reordered]
    contiguous = any(
        chunk_words[i : i + len(needle)] == needle for i in range(len(chunk_words) + 1)
    )
    assert quote_occurs(quote, chunk) == contiguous


def test_a_link_the_chunk_does_not_hold_never_verifies() -> None:
    chunk = "Before you leave, check [out of office expectations](https://h.test/ooo/) first."
    assert not quote_occurs(
        "check [out of office expectations](https://evil.example/) first", chunk
    )
    assert not quote_occurs("[1](https://evil.example) check out of office expectations", chunk)
    assert not quote_occurs(
        "check https://evil.example/ooo first", "check https evil example ooo first"
    )
    assert quote_occurs("see https://h.test/ooo/.", "Details: see https://h.test/ooo/.")


# Words in any script: Latin with diacritics, Greek, Cyrillic, CJK, digits.
_ANY_WORD = st.text(
    alphabet=st.characters(categories=("Lu", "Ll", "Lo", "Nd")), min_size=1, max_size=6
).filter(lambda w: len(normalise(w).split()) == 1)
_ANY_WORDS = st.lists(_ANY_WORD, min_size=1, max_size=20)


@settings(max_examples=300, deadline=None)
@given(_ANY_WORDS, st.data())
def test_in_any_script_a_run_of_the_chunks_words_verifies_and_a_foreign_word_never_does(
    words: list[str], data: st.DataObject
) -> None:
    separators = [data.draw(_SEPARATORS) for _ in words]
    chunk = _join(words, separators)
    start = data.draw(st.integers(0, len(words) - 1))
    end = data.draw(st.integers(start + 1, len(words)))
    assert quote_occurs(" ".join(words[start:end]), chunk)
    stranger = data.draw(_ANY_WORD)
    if normalise(stranger) in normalise(chunk).split():
        return
    inserted = [*words[start:end]]
    inserted.insert(data.draw(st.integers(0, len(inserted))), stranger)
    assert not quote_occurs(" ".join(inserted), chunk)


@settings(max_examples=200, deadline=None)
@given(_chunk_and_span(), st.sampled_from(["https://evil.example/", "javascript:alert(1)"]))
def test_a_run_of_the_chunks_words_dressed_in_a_foreign_link_never_verifies(
    drawn: tuple[list[str], list[str], int, int], url: str
) -> None:
    words, separators, start, end = drawn
    chunk = _join(words, separators)
    run = " ".join(words[start:end])
    assert quote_occurs(run, chunk)
    assert not quote_occurs(f"[{run}]({url})", chunk)
    assert not quote_occurs(f"{run} {url}", chunk)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_normalise_spaces_exactly_the_separators_of_any_text(text: str) -> None:
    # The definition, character by character: punctuation, separators, control
    # characters and modifier symbols are spaces; every other character is kept.
    folded = unicodedata.normalize("NFKC", link_text(text)).casefold()
    spaced = "".join(
        " " if unicodedata.category(c)[0] in "PZC" or unicodedata.category(c) == "Sk" else c
        for c in folded
    )
    assert normalise(text) == " ".join(spaced.split())
