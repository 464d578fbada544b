"""Queries respelled against the keyword index's vocabulary (agent/retrieval/spelling.py),
with the index's own analyzer and a fake of the index's words."""

from __future__ import annotations

import re
from collections.abc import Iterable

from hypothesis import given
from hypothesis import strategies as st

from agent.language.typos import edit_distance
from agent.retrieval.spelling import QuerySpeller
from store.text_analysis import TextAnalyzer


class IndexWords:
    """Stems some page has, each with how often pages have it (for the idf)."""

    def __init__(self, counts: dict[str, int]) -> None:
        self._analyzer = TextAnalyzer()
        self._counts = {self._analyzer.analyse(w).words[0]: n for w, n in counts.items()}

    def known(self, terms: Iterable[str]) -> set[str]:
        return {t for t in terms if t in self._counts}

    def rarity(self, terms: Iterable[str]) -> dict[str, float]:
        return {t: 1.0 / self._counts[t] for t in terms}


WORDS = re.compile(r"[^\W\d_]+")


def speller(**counts: int) -> QuerySpeller:
    return QuerySpeller(TextAnalyzer(), IndexWords(counts))


def test_a_typo_takes_the_spelling_the_pages_have() -> None:
    fix = speller(differential=3, float=5, receipts=2)
    assert fix.corrected("how much is the float differntial?") == (
        "how much is the float differential?"
    )
    assert fix.corrected("do i need a reciept") == "do i need a receipt"


def test_what_is_spelled_right_or_unknown_is_searched_as_written() -> None:
    fix = speller(bonds=4, calendar=2, differential=3, help=1)
    # An English word no page has is what a near miss asks about, not a typo.
    assert fix.corrected("is there a bonus") == "is there a bonus"
    # A name or an initialism is written as meant; a short word is left alone.
    assert fix.corrected("book it in Calendly, ask the HSR") == "book it in Calendly, ask the HSR"
    assert fix.corrected("hepl") == "hepl"
    # Nothing one edit away: left as written.
    assert fix.corrected("differnshul") == "differnshul"


def test_of_two_spellings_one_edit_away_the_commoner_wins_and_a_tie_wins_nothing() -> None:
    assert speller(format=9, forma=1).corrected("fromat") == "format"
    assert speller(format=3, forum=3).corrected("foramt") == "format"  # only "format" is one edit
    assert speller(bakes=2, bikes=2).corrected("bxkes") == "bxkes"


def test_a_pasted_wall_of_unknown_words_is_searched_as_written_past_the_first_ones() -> None:
    fix = speller(receipts=2)
    mended = fix.corrected(" ".join(["reciept"] * 40)).split()
    assert mended == ["receipt"] * 32 + ["reciept"] * 8
    wall = " ".join(f"zq{i:05d}xw" for i in range(5_000))  # 50k characters no page has
    assert fix.corrected(wall) == wall


@given(st.text(max_size=300))
def test_respelling_changes_only_whole_words_each_by_one_edit(query: str) -> None:
    fix = speller(receipts=2, differential=3, format=9, forum=1)
    mended = fix.corrected(query)
    before, after = WORDS.split(query), WORDS.split(mended)
    assert before == after  # everything between the words is kept as written
    for old, new in zip(WORDS.findall(query), WORDS.findall(mended), strict=True):
        assert old == new or edit_distance(old, new, 1) == 1
