"""A word no page has weighs by how everyday it is: the asker's phrasing ("think",
"people", "extra") is no sign the answer is missing; the thing asked about is."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.language.everyday import EverydayWeights
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from tests.agent.conftest import Built, built_from, lead, pages_source

PAGES = [
    (
        "payroll.md",
        "Payroll",
        "## Saturday differential\n\nHourly employees working a Saturday clinic shift receive "
        "a differential of $2.00 per hour for all Saturday hours worked.\n\n## Pay errors\n\n"
        "Report a missing punch to your office manager within 2 business days.",
    ),
    (
        "records.md",
        "Patient records",
        "## Privacy\n\nReport a privacy incident, such as a treatment plan emailed to the wrong "
        "patient, to the privacy officer Tom Brannigan at privacy@clinic.test.",
    ),
    (
        "travel.md",
        "Travel",
        "Rail and air travel is booked by the travel desk at travel@clinic.test; hotels "
        "are booked through the Navan portal.",
    ),
    (
        "raises.md",
        "Licences and pay",
        "A hygienist who passes the state licensing exam receives a 6% salary increase "
        "from the next pay period.",
    ),
    (
        "holidays.md",
        "Holidays",
        "Clinics close on 7 paid holidays a year, and hourly employees are paid for their "
        "normal scheduled hours on each.",
    ),
]


@pytest.fixture(scope="module")
async def clinic(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    source = pages_source("clinic", PAGES)
    async for result in built_from(pg_server, embedder, source, "clinic"):
        yield result


def test_the_commonest_words_weigh_least_and_rare_ones_fully() -> None:
    everyday = EverydayWeights()
    assert everyday.weight("think") == everyday.weight("people") == everyday.commonest_weight
    assert everyday.commonest_weight < everyday.weight("held") < 1.0
    assert everyday.weight("juneteenth") == everyday.weight("tattoos") == 1.0


@given(
    st.one_of(
        st.text(max_size=40),
        # English words from the commonest to the rare, and their casings.
        st.sampled_from("the think people held extra pick tattoos juneteenth".split()).map(
            str.upper
        ),
        st.sampled_from("the think people held extra pick tattoos juneteenth".split()),
    )
)
def test_any_word_weighs_between_the_commonest_weight_and_one(word: str) -> None:
    everyday = EverydayWeights()
    assert everyday.commonest_weight <= everyday.weight(word) <= 1.0


async def test_everyday_words_no_page_uses_do_not_hold_back_the_answer(clinic: Built) -> None:
    # No page says "picked", "people" or "extra" (they say "employees", "differential"):
    # weighed as the rarest of words, they left the quote too little of the question.
    assert (
        await lead(clinic, "picked up a saturday shift, do hourly people get paid extra?")
        == "$2.00 per hour"
    )


async def test_a_rare_word_no_page_has_is_what_the_gap_names(clinic: Built) -> None:
    # No page has "ok", "show" or "tattoos"; the tattoos are what is asked about.
    answer = await clinic.loop().answer("is it ok to show tattoos at the clinic?")
    assert answer.escalate
    assert [g.detail for g in answer.gaps] == ["No page found mentions tattoos."]
