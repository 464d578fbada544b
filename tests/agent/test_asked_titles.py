"""A page whose title the question words, in the asker's own case and word forms, ranks
above pages that merely mention those words (issue 24: the right page cited).

A four-page hiring corpus, indexed for real: the "TTSJobs" page is about where openings
are posted; the internal-hiring page says "internal", "TTS" and "posting" more often,
and the other two mention jobs in passing."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from jobs.documents import SourceDocument, StaticSource
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from tests.agent.conftest import Built, built_from

PAGES = [
    SourceDocument(
        uri="ttsjobs.md",
        title="TTSJobs",
        url="https://handbook.test/ttsjobs",
        text="# TTSJobs\n\nInterested in a new role?\n\n## Current employees\n\nJoin the "
        "Slack channel #tts-jobs to hear about openings as soon as they are posted. Talent "
        "sends out a weekly email with all open roles, on Tuesdays.",
    ),
    SourceDocument(
        uri="internal-hiring.md",
        title="Internal hiring and internal TTS details",
        url="https://handbook.test/internal-hiring",
        text="# Internal hiring and internal TTS details\n\nA detail is a temporary move "
        "to another team, competed openly like any job.",
    ),
    SourceDocument(
        uri="talent.md",
        title="Talent",
        url="https://handbook.test/talent",
        text="# Talent\n\nTalent runs hiring for TTS: job descriptions, interviews and "
        "offers. Ask Talent about a job you applied to.",
    ),
    SourceDocument(
        uri="hiring.md",
        title="Hiring",
        url="https://handbook.test/hiring",
        text="# Hiring\n\nTTS hires through several authorities. A job posting for the "
        "public goes on USAJOBS; internal moves follow the internal posting process.",
    ),
]


# Pages on other topics, as a handbook has many: the fused scores are scaled between the
# best and the worst candidate, so a corpus of only the contenders spreads them apart.
OTHER_TOPICS = [
    ("leave.md", "Leave", "Annual leave accrues every pay period; sick leave covers illness."),
    ("travel.md", "Travel", "Book travel in Concur at least two weeks before the trip."),
    ("laptops.md", "Laptops", "Lost laptops are reported to the IT service desk at once."),
    ("benefits.md", "Benefits", "Health insurance starts on the first day of employment."),
    ("telework.md", "Telework", "Telework agreements are signed with your supervisor."),
    ("security.md", "Security", "Badges must be worn visibly in every federal building."),
]
PAGES += [
    SourceDocument(
        uri=uri, title=title, url=f"https://handbook.test/{uri}", text=f"# {title}\n\n{text}"
    )
    for uri, title, text in OTHER_TOPICS
]


@pytest.fixture(scope="module")
async def hiring(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    async for result in built_from(pg_server, embedder, StaticSource("hb", PAGES), "hb"):
        yield result


async def test_the_page_a_question_names_in_its_own_words_ranks_first(hiring: Built) -> None:
    # "tts jobs" is the title "TTSJobs" in the asker's case and word forms; the
    # internal-hiring page, which only shares words with the question, ranked first.
    question = "tts jobs: where are internal openings posted"
    hits = await hiring.retriever().retrieve(question, limit=4)
    assert hits[0].uri == "ttsjobs.md", [(h.uri, h.score) for h in hits]
