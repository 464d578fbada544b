"""The answer's quote searched for elsewhere (agent/corroboration.py), on a real index: a
stale copy that the question's own search never reads, saying the quoted sentence with
another value, is found and shown as a source that disagrees; a page saying a similar
sentence about something else (two stretches changed) is two facts, not a conflict."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from difflib import SequenceMatcher

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.conflicts import FoundConflict, _one_change, find_conflicts
from agent.language.questions import QuestionAnalyzer
from agent.loop import LoopOptions
from jobs.documents import StaticSource
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from store.text_forms import WORD, fold
from tests.agent.conftest import Built, built_from
from tests.agent.test_hops import evidence
from tests.agent.test_name_conflicts import dated_page, stems_of

PAGES = [
    # One fact, two values: the page was revised and the old copy kept.
    dated_page(
        "parking.md",
        "Parking permits",
        "A monthly parking permit for the Denver office garage costs $85 for employees.",
        2023,
    ),
    dated_page(
        "parking-revised.md",
        "Garage notes",
        "A monthly parking permit for the Denver office garage costs $95 for employees.",
        2025,
    ),
    # Two facts in similar sentences: another office, another kind of badge.
    dated_page(
        "badges.md",
        "Security badges",
        "A replacement security badge for the Austin office lobby costs $25 for employees.",
        2024,
    ),
    dated_page(
        "badges-contractors.md",
        "Contractor badges",
        "A replacement visitor badge for the Austin office lobby costs $40 for contractors.",
        2024,
    ),
]

# The question's own search reads one hit: only one of two pages is found by it.
ONE_HIT = LoopOptions(hits_per_query=1, read_per_question=1)


@pytest.fixture(scope="module")
async def revised(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    async for result in built_from(pg_server, embedder, StaticSource("notes", PAGES), "notes"):
        yield result


async def test_a_copy_with_another_value_not_read_by_the_question_is_shown_as_a_conflict(
    revised: Built,
) -> None:
    answer = await revised.loop(options=ONE_HIT).answer(
        "How much is a monthly parking permit for the Denver office garage?"
    )
    (conflict,) = answer.conflicts
    sides = [answer.claims[i].quote for i in conflict.claims]
    assert any("$85" in s for s in sides) and any("$95" in s for s in sides)
    cited = {answer.citation(answer.claims[i].citation).title for i in conflict.claims}
    assert cited == {"Parking permits", "Garage notes"}
    assert answer.citation(conflict.newer or 0).title == "Garage notes"


async def test_a_similar_sentence_about_another_thing_is_no_conflict(revised: Built) -> None:
    answer = await revised.loop(options=ONE_HIT).answer(
        "How much does a replacement security badge for the Austin office cost?"
    )
    assert any("$25" in c.quote for c in answer.claims)
    assert answer.conflicts == ()
    assert not any("$40" in c.quote for c in answer.claims)


def test_a_value_replaced_by_anything_in_the_same_sentence_is_a_conflict(
    analyzer: QuestionAnalyzer,
) -> None:
    question = "How far from Windsor is the studio?"
    sentence = "The studio is located 20 miles west of London, and {} from Windsor."
    studio = evidence(1, "Studio", sentence.format("7 miles"), 1.0)

    def conflicts(other: str, title: str = "Studio notes") -> list[FoundConflict]:
        found = [studio, evidence(2, title, other, 1.0)]
        return find_conflicts(found, stems=stems_of(analyzer), questions=[question])

    # No number beside it to compare, yet the other page says something else there.
    (found,) = conflicts(sentence.format("a short drive"))
    assert found.kind == "answer"
    # The same sentence word for word, or changed in two places, is no disagreement.
    assert conflicts(sentence.format("7 miles")) == []
    assert conflicts("The studio is located 20 miles east of Leeds, and close to York.") == []


def test_pronoun_sentences_on_pages_about_different_things_are_no_conflict(
    analyzer: QuestionAnalyzer,
) -> None:
    question = "Which film is the fifth installment in the series?"
    sentence = "It is intended to be the {} installment in the Harbour Lights series."
    stems = stems_of(analyzer)
    fifth = evidence(1, "Night Tide (film)", sentence.format("fifth"), 1.0)
    fifth = dataclasses.replace(fifth, span="fifth")
    # Each "It" is its own page's film: two facts.
    sixth = evidence(2, "Morning Fog (film)", sentence.format("sixth"), 1.0)
    assert find_conflicts([fifth, sixth], stems=stems, questions=[question]) == []
    # The same page revised says otherwise.
    revised = evidence(2, "Night Tide (film, revised)", sentence.format("sixth"), 1.0)
    assert find_conflicts([fifth, revised], stems=stems, questions=[question]) != []


def test_two_pages_naming_each_other_in_one_sentence_are_no_conflict(
    analyzer: QuestionAnalyzer,
) -> None:
    question = "Who flew as a payload specialist with him?"
    sentence = "In 1983, he and {} became the first payload specialists to fly on the shuttle."
    stems = stems_of(analyzer)
    found = [
        evidence(1, "Byron Lichtenberg", sentence.format("Ulf Merbold"), 1.0),
        evidence(2, "Ulf Merbold", sentence.format("Byron Lichtenberg"), 1.0),
    ]
    assert find_conflicts(found, stems=stems, questions=[question]) == []
    found[1] = evidence(2, "Payload specialists", sentence.format("Byron Lichtenberg"), 1.0)
    assert find_conflicts(found, stems=stems, questions=[question]) != []


def test_pages_whose_changed_number_is_their_own_title_are_no_conflict(
    analyzer: QuestionAnalyzer,
) -> None:
    question = "Which aircraft carrier was the squadron assigned to?"
    sentence = "Marine Fighting Squadron {0} (VMF-{0}) was a reserve fighter squadron."
    stems = stems_of(analyzer)
    found = [
        evidence(1, "VMF-213", sentence.format("213"), 1.0),
        evidence(2, "VMF-111", sentence.format("111"), 1.0),
    ]
    assert find_conflicts(found, stems=stems, questions=[question]) == []
    found[1] = evidence(2, "VMF-213 (revised)", sentence.format("111"), 1.0)
    assert find_conflicts(found, stems=stems, questions=[question]) != []


def _one_change_by_definition(a: str, b: str) -> tuple[list[str], list[str]] | None:
    """The definition `_one_change` answers, without its shortcuts: one changed stretch
    of at most `_MAX_NAME_WORDS` words, and three words in four kept in order."""
    words_a, words_b = WORD.findall(a), WORD.findall(b)
    matcher = SequenceMatcher(None, [fold(w) for w in words_a], [fold(w) for w in words_b])
    changed = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if len(changed) != 1 or max(changed[0][2] - changed[0][1], changed[0][4] - changed[0][3]) > 8:
        return None
    shared = sum(block.size for block in matcher.get_matching_blocks())
    if shared < 0.75 * max(len(words_a), len(words_b)):
        return None
    _, i1, i2, j1, j2 = changed[0]
    return words_a[i1:i2], words_b[j1:j2]


_SENTENCE_WORDS = st.lists(
    st.sampled_from(["The", "permit", "costs", "$85", "95", "for", "staff", "Denver", "not"]),
    max_size=24,
)


@settings(max_examples=300, deadline=None)
@given(a=_SENTENCE_WORDS, b=_SENTENCE_WORDS, edits=st.integers(0, 3))
def test_the_shortcuts_of_one_change_never_change_its_answer(
    a: list[str], b: list[str], edits: int
) -> None:
    # Half the pairs are a sentence and an edited copy of it, where the answer is a change.
    other = b if edits == 0 else [*a[: len(a) // 2], *b[:edits], *a[len(a) // 2 + edits :]]
    first, second = " ".join(a), " ".join(other)
    assert _one_change(first, second) == _one_change_by_definition(first, second)
