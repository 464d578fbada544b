"""When nothing answers, the reply points to the pages that came closest: never as a
claim or a citation, only where a sentence read as close to the question as a quote must.

A three-page clinic handbook, indexed for real."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent.answer import Answer
from jobs.documents import SourceDocument, StaticSource
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from tests.agent.conftest import Built, built_from, shown

PAGES = [
    SourceDocument(
        uri="pto.md",
        title="PTO and Holidays",
        url="https://clinic.test/pto",
        text="# PTO and Holidays\n\n## Calling out sick\n\nIf you are too ill to work, phone "
        "your office manager before 7:00 on the day. Messages left with the front desk do "
        "not count as notice.\n\n## Holidays\n\nThe clinics close on New Year's Day, "
        "Memorial Day, Independence Day, Labor Day, Thanksgiving Day and Christmas Day.",
    ),
    SourceDocument(
        uri="payroll.md",
        title="Payroll",
        url="https://clinic.test/payroll",
        text="# Payroll\n\n## Pay schedule\n\nStaff are paid every other Friday by direct "
        "deposit. Hourly staff who work a Saturday shift receive $2.00 more per hour.",
    ),
    SourceDocument(
        uri="sterilization.md",
        title="Sterilization",
        url="https://clinic.test/sterilization",
        text="# Sterilization\n\nRun a spore test on every autoclave each week and log the "
        "result in the binder.",
    ),
]


@pytest.fixture(scope="module")
async def clinic(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    async for result in built_from(pg_server, embedder, StaticSource("clinic", PAGES), "clinic"):
        yield result


async def test_nothing_answers_so_the_reply_points_to_the_page_that_came_closest(
    clinic: Built,
) -> None:
    # "Calling out sick" reads close to the question without saying whether a text will
    # do (it says "phone"): nothing is quoted, and that page is where to look.
    answer = await clinic.loop().answer(
        "woke up with a fever, can i just text my om that im not coming in?"
    )
    assert answer.escalate and not answer.claims, shown(answer)
    first = answer.closest_pages[0]
    assert (first.title, first.section, first.url) == (
        "PTO and Holidays",
        "Calling out sick",
        "https://clinic.test/pto",
    )
    assert first.collection == "clinic"
    # Pointers, not sources: nothing is cited, and each page is named once.
    assert answer.citations == ()
    assert len({p.uri for p in answer.closest_pages}) == len(answer.closest_pages)
    # A stored run reads them back.
    assert Answer.from_dict(answer.as_dict()) == answer


async def test_a_question_no_sentence_reads_close_to_points_nowhere(clinic: Built) -> None:
    answer = await clinic.loop().answer("What is the capital of France?")
    assert answer.escalate and not answer.claims
    assert answer.closest_pages == ()


async def test_an_answered_question_has_sources_not_closest_pages(clinic: Built) -> None:
    answer = await clinic.loop().answer("how much extra do hourly staff get for a saturday shift?")
    assert answer.claims and not answer.escalate, shown(answer)
    assert answer.closest_pages == ()


def test_a_run_stored_before_closest_pages_existed_reads_back_with_none() -> None:
    stored = Answer("q", (), (), "no_better_action", True).as_dict()
    del stored["closest_pages"]
    assert Answer.from_dict(stored).closest_pages == ()
