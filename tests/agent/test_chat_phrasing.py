"""How chat puts a question the pages answer in their own words: a clip too short to
stand alone inside a phrase the pages write ("bank hol" for "bank holiday"), and "how
long does it last?", whose verb restates the duration asked ("expire after 14 days")."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.language.questions import QuestionAnalyzer
from agent.language.typos import clipped_in_phrase
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from store.text_analysis import TextAnalyzer
from tests.agent.conftest import Built, built_from, lead, pages_source

PAGES = [
    (
        "holidays.md",
        "Public holidays",
        "## Working on a public holiday\n\nStaff who work on a bank holiday at the Quay "
        "clinic receive a day off in lieu, which must be taken within three months. "
        "Holidays falling on a weekend are moved to the next working day.",
    ),
    (
        "file-sharing.md",
        "Sharing files with clients",
        "## Share links\n\nLarge files go to clients through Vault share links, never as "
        "email attachments. Links expire after 14 days; create a new one if the client "
        "needs more time.",
    ),
]


@pytest.fixture(scope="module")
async def site(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    source = pages_source("phrasing", PAGES)
    async for result in built_from(pg_server, embedder, source, "phrasing"):
        yield result


async def test_a_short_clip_in_a_phrase_the_pages_write_is_read_as_its_word(site: Built) -> None:
    # "hol" is too short a clip to read alone ("hol" begins "hold" and "holder" too);
    # beside "bank" it can only be the pages' "bank holiday". Unread, the question's
    # rarest word was missing from the one sentence that answers.
    found = await lead(site, "do i get time off in lieu for working a bank hol")
    assert found is not None


async def test_how_long_a_thing_lasts_is_answered_by_when_it_expires(site: Built) -> None:
    # Held as a word the answer must hold, "last" (no word of the page) sank the sentence.
    found = await lead(site, "how long do share links last")
    assert found is not None and "14 days" in found


@pytest.mark.parametrize(
    ("word", "question", "text", "meant"),
    [
        ("hol", "worked the bank hol", "a bank holiday; bank holidays", "holiday"),
        ("mat", "how long is mat leave", "Maternity leave lasts 26 weeks.", "maternity"),
        # the clip before the word beside it, hyphenated in the pages
        ("comp", "is comp time paid", "Comp-time is compensatory; comp-time hours", None),
        ("comp", "how much comp time", "compensatory time off is granted", "compensatory"),
        # two words begin with the clip beside "bank": no telling which
        ("hol", "the bank hol rules", "bank holiday and bank holdings", None),
        # the pages never write the phrase
        ("hol", "the bank hol rules", "holidays are paid; the bank is closed", None),
        # too short to be a clip at all
        ("ho", "bank ho", "bank holiday", None),
    ],
)
def test_a_clip_is_read_only_from_the_phrase_the_pages_write(
    word: str, question: str, text: str, meant: str | None
) -> None:
    assert clipped_in_phrase(word, question, text) == meant


@given(
    st.from_regex(r"[a-z]{3,8}", fullmatch=True),
    st.from_regex(r"[a-z]{5,10}", fullmatch=True),
    st.integers(min_value=3, max_value=9),
)
def test_a_clip_stands_only_for_a_word_it_begins(beside: str, word: str, cut: int) -> None:
    clip = word[: min(cut, len(word) - 1)]
    meant = clipped_in_phrase(clip, f"is the {beside} {clip} open", f"the {beside} {word} is")
    assert meant is None or (meant.startswith(clip) and meant != clip)
    if clip != beside and len(beside) >= 3:
        assert meant == word


def test_how_long_it_lasts_asks_a_duration_and_last_stays_a_word_elsewhere() -> None:
    analyzer = QuestionAnalyzer(TextAnalyzer())
    assert "last" not in analyzer.analyse("how long do the share links last?").key_terms
    assert "last" not in analyzer.analyse("how long does a sick note last for?").key_terms
    # "last" of a day, not of a duration
    assert "last" in analyzer.analyse("how long is the break on the last day?").terms
