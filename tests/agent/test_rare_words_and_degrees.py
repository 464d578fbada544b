"""Words the pages write otherwise without any page lacking the answer: a dictionary word
too rare for everyday use that is one edit from a page's common word ("hods", "manger"),
the degree of an adjective a page writes in another degree ("heaviest", "heavier"), how a
question asks rather than what about ("the heaviest thing", "allowed to", "by myself"),
a workplace's equivalents ("released" rosters are "published"), chat's clipped days
("for sat"), and a mnemonic a list spells out with its lines' first words ("RACE")."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.language.questions import QuestionAnalyzer, chat_spelled
from agent.language.typos import degree_forms, rare_word_fix
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from tests.agent.conftest import Built, built_from, lead, pages_source

PAGES = [
    (
        "holds.md",
        "Shelving and holds",
        "## Holds\n\nAll holds must be pulled by noon. Patrons are told by email when a "
        "hold is ready.\n\n## Shelving\n\nReturned items are shelved within one day.",
    ),
    (
        "safety.md",
        "Manual handling",
        "## Lifting\n\nDo not lift anything heavier than 50 pounds alone. Use a cart for "
        "boxes of books.\n\n## Fire\n\nIn a fire, remember RACE:\n\n- **R**escue anyone "
        "in danger.\n- **A**larm: pull the nearest alarm.\n- **C**ontain the fire by closing "
        "doors.\n- **E**xtinguish only a small fire, or evacuate.\n\n## Who to ask\n\n"
        "The safety manager, Dana Ortiz, runs the "
        "yearly refresher. The branch director must sign off on any overtime.",
    ),
    (
        "leave.md",
        "Leave",
        "Full-time staff get 20 days of vacation a year. Unused days carry over up to 5.",
    ),
    (
        "rosters.md",
        "Rosters and pay",
        "## Rosters\n\nRosters are published in the staff app every Friday by noon.\n\n"
        "## Public computers\n\nPatrons may use the public computers for 60 minutes per "
        "day.\n\n## Weekend pay\n\nHourly staff receive an extra $2 per hour on Saturday."
        "\n\n## Courses\n\nEvery paid course is approved by the Head of Learning.",
    ),
]


@pytest.fixture(scope="module")
async def library(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    source = pages_source("library", PAGES)
    async for result in built_from(pg_server, embedder, source, "library"):
        yield result


async def test_a_rare_word_one_edit_from_a_common_page_word_is_that_word_mistyped(
    library: Built,
) -> None:
    # "hods" and "manger" are English (WordNet has both), so the typo reading left them
    # alone, and no page has them: the question escalated.
    assert await lead(library, "what time do hods need to be pulled by") == "noon"
    answer = await library.loop().answer("whos the safety manger")
    assert not answer.escalate
    assert "Dana Ortiz" in answer.claims[0].quote


async def test_a_degree_the_page_writes_otherwise_and_how_permission_is_asked(
    library: Built,
) -> None:
    # "heaviest" is the page's "heavier"; "thing", "allowed to" and "myself" are how the
    # question is put, not what it asks about.
    assert (
        await lead(library, "whats the heaviest thing im allowed to lift by myself")
        == "50 pounds alone"
    )


async def test_a_rare_word_the_asker_means_is_still_what_the_pages_lack(library: Built) -> None:
    # "bereavement" is as rare as "manger", but no common word is one edit from it.
    answer = await library.loop().answer("how many days of bereavement leave do staff get?")
    assert answer.escalate


async def test_a_workplace_says_the_same_thing_in_other_words(library: Built) -> None:
    assert await lead(library, "when does the roster get released") == "Friday"
    assert await lead(library, "how long can i be on the pcs each day?") == "60 minutes per day"
    # Near relatives are not equivalents: no page says what a roster costs.
    assert (await library.loop().answer("how much does the roster app cost?")).escalate


async def test_a_list_spelling_out_the_acronym_asked_about_defines_it(library: Built) -> None:
    assert await lead(library, "what does RACE stand for?") == "Rescue, Alarm, Contain, Extinguish"
    # No list spells out PASS: what it stands for is not in the pages.
    assert (await library.loop().answer("what does PASS stand for?")).escalate


def test_chat_clips_a_day_after_on_for_or_next(analyzer: QuestionAnalyzer) -> None:
    assert "saturday" in analyzer.analyse("do hourly staff get paid extra for sat?").text
    assert "wednesday" in analyzer.analyse("is the branch open on wed").text
    # Not a clip: the past of "sit", the sun.
    assert analyzer.analyse("I sat the exam in the sun").text == "I sat the exam in the sun"


def test_a_rare_word_is_mended_only_into_one_common_word_one_edit_away() -> None:
    assert rare_word_fix("hods", {"holds", "noon"}) == "holds"
    # A word in everyday use is meant as written ("wifi" is no "wife")...
    assert rare_word_fix("wifi", {"wife"}) is None
    # ... and two candidates are a guess ("hods": "holds" or "hoods").
    assert rare_word_fix("hods", {"holds", "hoods"}) is None


@given(
    st.one_of(
        st.text(max_size=20),
        st.sampled_from("manager water later interest heavier bigger larger".split()),
        st.sampled_from("heaviest biggest largest latest longest forest".split()),
    )
)
def test_a_comparative_is_never_read_as_its_base(word: str) -> None:
    # "manager" is no degree of "manage", nor "water" of "wat": from an "-er" word only
    # its superlative is read, so a noun of the ending never loses it.
    forms = degree_forms(word)
    assert word not in forms
    if word.endswith("er") and not word.endswith("est"):
        assert all(form.endswith("est") and len(form) > len(word) for form in forms)


def test_how_a_question_asks_holds_no_key_terms(analyzer: QuestionAnalyzer) -> None:
    question = analyzer.analyse("whats the heaviest thing im allowed to lift by myself")
    # "heaviest" with "allowed to" asks for the cap: a qualifier the quote's context must
    # meet ("limit", "heavier than"), not a word it must hold.
    assert question.key_terms == {"lift"}
    assert "heaviest" in question.qualifiers
    # The stem of "allowed" is also the stem of "allowance", which stays what is asked.
    assert "allow" in analyzer.analyse("what's the field allowance per day?").key_terms
    assert "ok" not in analyzer.analyse("is it ok to bring my own stuff?").key_terms


async def test_a_phrasal_verb_reads_as_the_verb_pages_use(library: Built) -> None:
    assert chat_spelled("who signs off a £900 course?") == "who signs a £900 course?"
    assert "keep" in chat_spelled("how long do we hang on to a lost phone")
    assert chat_spelled("does kestrel chip in for a bus pass") == "does kestrel pay for a bus pass"
    assert chat_spelled("where do i pick up a hard hat") == "where do i get a hard hat"
    # Signing off is approving, whichever the page says.
    assert await lead(library, "who signs off a paid course?") == "the Head of Learning"
    assert await lead(library, "who signs off overtime?") == "The branch director"
    # A sign that is not signed off, a chip that is not chipped in: left as written.
    assert chat_spelled("sign the form, chip the ice") == "sign the form, chip the ice"
