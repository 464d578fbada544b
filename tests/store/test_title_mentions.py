"""Which documents a text names by title (store/text_analysis.py's TitleMentions)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from store.text_analysis import TitleMentions

_WORDS = ["Annual", "Leave", "leave", "Travel", "Card", "More", "more", "Tock", "the", "of"]


def test_a_title_is_named_as_written_whole_words_and_case_sensitive() -> None:
    mentions = TitleMentions([(1, "Annual Leave"), (2, "More"), (3, "Travel Card Policy")])
    assert mentions.named_in("See Annual Leave and More for details.") == {1, 2}
    assert mentions.named_in("annual leave, and more than that") == set()
    assert mentions.named_in("the Travel Card is not the Travel Card Policy") == {3}
    assert mentions.named_in("Annual") == set()


def test_a_changed_title_is_named_by_its_new_words_only() -> None:
    mentions = TitleMentions([(1, "Annual Leave"), (2, "Travel Card Policy")])
    changed = mentions.changed({1: "Sick Leave", 2: None, 3: "Tock Guide"})
    assert changed.named_in("Annual Leave, Sick Leave, Travel Card Policy, Tock Guide") == {1, 3}
    # The original is left as it was.
    assert mentions.named_in("Annual Leave, Travel Card Policy, Tock Guide") == {1, 2}


def _named_by_every_stretch(titles: dict[int, str], text: str) -> set[int]:
    """The reference: every stretch of the text's words against every usable title."""
    words = re.findall(r"\w+", text)
    usable = TitleMentions(())
    found = set()
    for document_id, title in titles.items():
        title_words = tuple(re.findall(r"\w+", title))
        if usable._usable_words(title) is None:
            continue  # a stop word or a short word alone is no title: never named
        n = len(title_words)
        if any(tuple(words[i : i + n]) == title_words for i in range(len(words) - n + 1)):
            found.add(document_id)
    return found


@settings(max_examples=200, deadline=None)
@given(
    titles=st.lists(
        st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3).map(" ".join),
        min_size=1,
        max_size=6,
    ),
    text=st.lists(st.sampled_from(_WORDS), max_size=20).map(" ".join),
)
def test_every_title_in_the_text_is_found_and_no_other(titles: list[str], text: str) -> None:
    by_id = dict(enumerate(titles))
    assert TitleMentions(by_id.items()).named_in(text) == _named_by_every_stretch(by_id, text)
