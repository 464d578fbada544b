"""Span answers through the whole loop on a few handbook-style pages: a found span leads,
a missing one is a gap with its sentence; a question naming both words of an opposite
pair, a yes/no question with a negation, and a question with a typo all find their
answer."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from jobs.documents import SourceDocument, StaticSource
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from tests.agent.conftest import Built, all_quotes_stored, built_from

PAGES = [
    SourceDocument(
        uri="hr-links.md",
        title="HR Links",
        url="https://kb.test/hr-links",
        text="# HR Links\n\n## Editing and canceling a leave request\n\n"
        "Edit an absence request when you want to change the number of hours you take. "
        "Cancel an absence request when you no longer wish to use any leave for the days.",
    ),
    SourceDocument(
        uri="telework.md",
        title="Telework",
        url="https://kb.test/telework",
        text="# Telework\n\nTelework requires supervisor approval. "
        "Telework agreements are reviewed every year.",
    ),
    SourceDocument(
        uri="transit.md",
        title="Transit benefits",
        url="https://kb.test/transit",
        text="# Transit benefits\n\nThe transit subsidy helps pay for commuting by train or "
        "bus. Apply for the transit subsidy through the benefits portal.",
    ),
    SourceDocument(
        uri="overtime.md",
        title="Overtime and credit hours",
        url="https://kb.test/overtime",
        text="# Overtime and credit hours\n\nCredit hours are earned by working beyond your "
        "schedule. You may carry over up to 24 credit hours into the next pay period.",
    ),
    SourceDocument(
        uri="credit-balance.md",
        title="Credit hour balance",
        url="https://kb.test/credit-balance",
        text="# Credit hour balance\n\nYou can have up to 24 credit hours accrued, at any "
        "given time. Annual leave you bank past the limit is lost at the end of the year.",
    ),
    SourceDocument(
        uri="holidays.md",
        title="Holidays",
        url="https://kb.test/holidays",
        text="# Holidays\n\nFull-time employees get 11 paid holidays a year. You are given "
        "8 hours of pay for each paid holiday.",
    ),
    SourceDocument(
        uri="leave.md",
        title="Leave types",
        url="https://kb.test/leave",
        text="# Leave types\n\n## Sick leave\n\nYou can use up to 13 days (104 hours) per "
        "year of your sick leave for bereavement, funeral planning, and attending a funeral.",
    ),
    SourceDocument(
        uri="benefits.md",
        title="Benefits",
        url="https://kb.test/benefits",
        text="# Benefits\n\n## Employee Assistance Program\n\nThe [Employee Assistance "
        "Program (EAP)](https://eap.test/) is a free support resource. The EAP offers "
        "sessions with licensed counselors.\n\nYou can receive six free sessions for you "
        "or family members. EAP counselors can provide referrals beyond the six sessions.",
    ),
    SourceDocument(
        uri="calendars.md",
        title="Shared calendars",
        url="https://kb.test/calendars",
        text="# Shared calendars\n\nUse Google Calendar to let partners book time with you.",
    ),
    SourceDocument(
        uri="onboarding.md",
        title="Onboarding",
        url="https://kb.test/onboarding",
        text="# Onboarding\n\nYour first week starts with orientation on Monday at 9:30 am in "
        "the Atlas room. Your manager holds check-ins at 30, 60 and 90 days.",
    ),
    SourceDocument(
        uri="forklifts.md",
        title="Forklift licences",
        url="https://kb.test/forklifts",
        text="# Forklift licences\n\nIf your forklift licence lapses you are stood down from "
        "forklift duties until the licence is renewed. An HRWL must be renewed every 5 years.",
    ),
]


@pytest.fixture(scope="module")
async def pages(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    async for result in built_from(pg_server, embedder, StaticSource("hb", PAGES), "hb"):
        yield result


async def test_a_number_found_in_the_quote_leads_the_answer_despite_a_typo(
    pages: Built,
) -> None:
    answer = await pages.loop().answer("how many credt hourz can I carry over?")
    assert not answer.escalate, answer.gaps
    assert answer.claims[0].span == "up to 24 credit hours"
    assert answer.citation(answer.claims[0].citation).title == "Overtime and credit hours"
    assert await all_quotes_stored(pages.pool, answer)


async def test_a_question_naming_both_words_of_an_opposite_pair_finds_its_answer(
    pages: Built,
) -> None:
    answer = await pages.loop().answer("How do I cancel a leave request?")
    assert not answer.escalate, answer.gaps
    assert any(c.quote.startswith("Cancel an absence request") for c in answer.claims)


async def test_a_yes_no_question_with_a_negation_is_answered_by_the_other_polarity(
    pages: Built,
) -> None:
    answer = await pages.loop().answer("Can I telework without approval?")
    assert not answer.escalate, answer.gaps
    assert any("Telework requires supervisor approval." in c.quote for c in answer.claims)


async def test_a_quote_on_topic_without_the_asked_amount_is_a_gap_said_plainly(
    pages: Built,
) -> None:
    answer = await pages.loop().answer("What is the monthly maximum for the transit subsidy?")
    assert answer.escalate
    assert not any(c.span for c in answer.claims)
    assert [g.detail for g in answer.gaps] == [
        "“Transit benefits” mentions transit subsidy but gives no monthly maximum."
    ]


async def test_a_question_naming_what_no_page_mentions_is_a_gap_naming_it(
    pages: Built,
) -> None:
    # "paid holiday" is on the page; Juneteenth, the thing asked about, is on none.
    answer = await pages.loop().answer("juneteenth a paid holiday for us?")
    assert answer.escalate
    assert [g.detail for g in answer.gaps] == [
        "“Holidays” mentions paid holiday but not juneteenth."
    ]
    # What was found is shown as found: no quote leads with a span as if it answered.
    assert answer.claims and not any(c.span for c in answer.claims)


@pytest.mark.parametrize(
    "question",
    [
        "is juneteenth a paid holiday here?",
        "quick q - is juneteenth one of the paid holidays?",
        "is Juneteenth one of the paid holidays?",
    ],
)
async def test_whether_a_thing_is_of_a_kind_is_not_answered_by_the_kind_alone(
    pages: Built, question: str
) -> None:
    # Written in lower case, "juneteenth" is no name; but it is what the question is
    # about, as "Juneteenth" would be: a page of paid holidays never naming it says
    # nothing of it. Nor does the page "Holidays", which the question names, stand in
    # for it, as a page a question names does for the names of a comparison.
    answer = await pages.loop().answer(question)
    assert answer.escalate
    assert [g.detail.casefold() for g in answer.gaps] == ["no page found mentions juneteenth."]
    assert not any(c.span for c in answer.claims)


async def test_a_name_is_not_corrected_into_a_word_the_pages_have(pages: Built) -> None:
    # "Calendly" is two edits from "Calendar": a typo fix would make the page answer.
    answer = await pages.loop().answer("Can I use Calendly to let partners book time with me?")
    assert answer.escalate
    assert [g.detail for g in answer.gaps] == ["No page found mentions Calendly."]


async def test_a_sentence_setting_the_scene_need_not_be_repeated_by_the_answer(
    pages: Built,
) -> None:
    answer = await pages.loop().answer(
        "My dad passed away last week. How much of my sick leave can I use for bereavement?"
    )
    assert not answer.escalate, answer.gaps
    assert answer.claims[0].span == "up to 13 days (104 hours) per year"


async def test_a_close_paraphrase_with_the_asked_span_answers(pages: Built) -> None:
    # "banked at once" is how the asker says "accrued, at any given time".
    answer = await pages.loop().answer("how many credit hours can I have banked at once?")
    assert not answer.escalate, answer.gaps
    assert "up to 24 credit hours" in answer.claims[0].span


async def test_a_sentence_under_a_heading_the_page_abbreviates_speaks_of_the_abbreviation(
    pages: Built,
) -> None:
    # The page defines "Employee Assistance Program (EAP)"; the sentence with the answer
    # sits under that heading and never says "EAP": it is quoted, with its span.
    answer = await pages.loop().answer("how many free counseling sessions does the EAP give us?")
    assert not answer.escalate, answer.gaps
    assert "six free sessions" in [c.span for c in answer.claims]


async def test_a_place_question_is_answered_by_the_place_not_the_day(pages: Built) -> None:
    # "on the first day" is no rate's qualifier, and "Monday" says when, not where.
    answer = await pages.loop().answer("Where is orientation held on the first day?")
    assert not answer.escalate, answer.gaps
    assert answer.claims[0].span == "the Atlas room"


async def test_of_quotes_as_strong_the_one_holding_the_answer_leads(pages: Built) -> None:
    # The lapse sentence repeats more of the question; the one with "every 5 years" answers.
    answer = await pages.loop().answer("how often do i need to renew my forklift licence")
    assert not answer.escalate, answer.gaps
    assert answer.claims[0].span == "every 5 years", [c.quote for c in answer.claims]


async def test_a_yes_or_no_of_a_phrasal_verb_the_page_never_says_is_a_gap_naming_it(
    pages: Built,
) -> None:
    # "into the next pay period" says "credit hours" and "pay", but nothing of whether
    # they are paid out.
    answer = await pages.loop().answer("will my credit hours be paid out?")
    assert answer.escalate
    assert [g.detail for g in answer.gaps] == [
        "“Overtime and credit hours” mentions credit hours but not paid out."
    ]
