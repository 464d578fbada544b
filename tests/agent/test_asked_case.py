"""What a Slack question asks for, read from the sentence that asks, and the figure of the
case it names, through the whole loop on a real index:
- the answer type is the asking sentence's ("just moved to a new city. can I telework
  without approval?" asks yes or no, though it opens with its scene), so a yes/no
  question's negation does not rule out the page's "requires approval"
  (agent/language/questions.py);
- of a quote's figures, the one whose stretch names the question's case leads ("$95 per
  day for international travel" for "… international trips?")
  (agent/language/spans.py `_numbers`).
Each test fails with its rule reverted.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent.language.questions import QuestionAnalyzer
from jobs.documents import SourceDocument, StaticSource
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from store.text_analysis import TextAnalyzer
from tests.agent.conftest import Built, all_quotes_stored, built_from

PAGES = [
    SourceDocument(
        uri="telework.md",
        title="Telework",
        url="https://kb.test/telework",
        text="# Telework\n\n"
        "Telework requires supervisor approval. Employees sign a telework agreement in "
        "the HR system before their first telework day.",
    ),
    SourceDocument(
        uri="travel-expenses.md",
        title="Travel expenses",
        url="https://kb.test/travel-expenses",
        text="# Travel expenses\n\n"
        "The meal allowance is $75 per day for domestic travel and $95 per day for "
        "international travel. Book flights through the travel portal at least 14 days "
        "before departure.",
    ),
]


@pytest.fixture(scope="module")
async def pages(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    async for result in built_from(pg_server, embedder, StaticSource("ac", PAGES), "ac"):
        yield result


def test_the_answer_type_is_the_asking_sentences() -> None:
    analyzer = QuestionAnalyzer(TextAnalyzer())
    asked = analyzer.analyse("dealing with a late report for the first time. should I escalate?")
    assert asked.answer_type == "yes_no"
    # A wh-word in the asking sentence still decides.
    assert analyzer.analyse("my term ends next year. when will I hear?").answer_type == "date"


async def test_a_scene_led_yes_no_question_is_answered_by_the_rule_it_negates(
    pages: Built,
) -> None:
    answer = await pages.loop().answer("just moved to a new city. can I telework without approval?")
    assert not answer.escalate, answer.gaps
    quotes = [c.quote for c in answer.claims]
    assert any("Telework requires supervisor approval." in q for q in quotes), quotes
    assert await all_quotes_stored(pages.pool, answer)


@pytest.mark.parametrize(
    ("case", "figure"), [("international", "$95 per day"), ("domestic", "$75 per day")]
)
async def test_the_figure_of_the_case_asked_leads(pages: Built, case: str, figure: str) -> None:
    answer = await pages.loop().answer(f"how much is the meal allowance for {case} travel?")
    assert not answer.escalate, answer.gaps
    assert answer.claims[0].span == figure, [c.span for c in answer.claims]
    assert await all_quotes_stored(pages.pool, answer)
