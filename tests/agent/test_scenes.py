"""A scene's particulars (agent/language/scenes.py): when a chat message sets a scene and
asks a thin question about it, a word of the scene that no page has, or a count the asker
states, is not a term the answer must hold; a scene the question points back at ("is it
…?") is still what is asked. Through the whole loop, on a small real index."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent.language.questions import QuestionAnalyzer
from jobs.documents import SourceDocument, StaticSource
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from store.text_analysis import TextAnalyzer
from tests.agent.conftest import Built, built_from

PAGES = [
    SourceDocument(
        uri="gatherings.md",
        title="Team gatherings",
        url="https://kb.test/gatherings",
        text="# Team gatherings\n\nTravel for a team gathering is approved by the Deputy "
        "Administrator. Book the trip in Concur once it is approved.",
    ),
    SourceDocument(
        uri="holidays.md",
        title="Holidays",
        url="https://kb.test/holidays",
        text="# Holidays\n\nFull-time employees get 11 paid holidays a year. You are given "
        "8 hours of pay for each paid holiday.",
    ),
]


@pytest.fixture(scope="module")
async def pages(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    async for result in built_from(pg_server, embedder, StaticSource("sc", PAGES), "sc"):
        yield result


def test_a_thin_question_about_a_scene_keeps_the_scene_unless_it_points_back() -> None:
    analyzer = QuestionAnalyzer(TextAnalyzer())
    asked = analyzer.analyse("hosting an offsite for 8 of us - who approves the travel?")
    assert asked.scene == {"host", "offsit", "8"}
    assert asked.scene <= asked.key_terms  # still key until the knowledge base is asked
    # "it" is the scene's thing: the scene is the topic.
    assert not analyzer.analyse("Juneteenth is coming up - is it a paid holiday?").scene
    # A question of its own (three asked terms) already sets its scene aside as context.
    rich = analyzer.analyse("My dad passed away. How much sick leave can I use for a funeral?")
    assert not rich.scene and "dad" in rich.context


async def test_a_scenes_word_no_page_has_and_its_head_count_are_the_askers_own(
    pages: Built,
) -> None:
    answer = await pages.loop().answer("hosting an offsite for 8 of us - who approves the travel?")
    assert not answer.escalate, answer.gaps
    assert answer.claims[0].quote.startswith("Travel for a team gathering is approved")


async def test_a_scene_the_question_points_back_at_is_what_is_asked(pages: Built) -> None:
    answer = await pages.loop().answer("Juneteenth is coming up - is it a paid holiday?")
    assert answer.escalate
    assert answer.gaps and answer.gaps[0].detail.startswith("“Holidays” mentions paid holiday")
    assert not any(c.span for c in answer.claims)  # nothing passed off as the answer
