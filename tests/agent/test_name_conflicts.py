"""Sources that disagree on a name (agent/conflicts.py), on a real index: two pages naming
different people for the same role are a conflict shown with both; two pages naming two
people for two different roles are two facts; nor are the two things a comparison asks
about."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime

import pytest

from agent.conflicts import FoundConflict, find_conflicts
from agent.language.questions import QuestionAnalyzer
from agent.reasoners.extractive import ExtractiveOptions
from agent.state import Evidence
from jobs.documents import SourceDocument, StaticSource
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from tests.agent.conftest import Built, built_from
from tests.agent.test_hops import evidence


def dated_page(uri: str, title: str, text: str, year: int) -> SourceDocument:
    """A Markdown page last updated on 1 March of `year` (the newer of two is marked)."""
    return SourceDocument(
        uri=uri,
        title=title,
        url=f"https://kb.test/{uri.removesuffix('.md')}",
        text=f"# {title}\n\n{text}",
        updated_at=datetime(year, 3, 1, tzinfo=UTC),
    )


NAMES = [
    # One role, two people: the page was rewritten and the old one kept.
    dated_page(
        "travel-approvals-2023.md",
        "Travel approvals (2023)",
        "Travel requests for the Boston office are approved by Dana Reyes.",
        2023,
    ),
    dated_page(
        "travel-approvals-2025.md",
        "Travel approvals (2025)",
        "Travel requests for the Boston office are approved by Sam Ortiz.",
        2025,
    ),
    # Two roles, two people: each page says whom it is for.
    dated_page(
        "conference-sales.md",
        "Conference registrations: sales",
        "Priya Nair approves conference registrations and hotel bookings"
        " for the sales team in Denver.",
        2024,
    ),
    dated_page(
        "conference-support.md",
        "Conference registrations: support",
        "Tom Becker approves conference registrations and hotel bookings"
        " for the support team in Denver.",
        2024,
    ),
]


@pytest.fixture(scope="module")
async def named(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    async for result in built_from(pg_server, embedder, StaticSource("notes", NAMES), "notes"):
        yield result


async def test_two_pages_naming_different_people_for_one_role_are_a_conflict(
    named: Built,
) -> None:
    answer = await named.loop().answer("Who approves travel requests for the Boston office?")
    (conflict,) = answer.conflicts
    sides = " ".join(answer.claims[i].quote for i in conflict.claims)
    assert "Dana Reyes" in sides and "Sam Ortiz" in sides
    cited = {answer.citation(answer.claims[i].citation).title for i in conflict.claims}
    assert cited == {"Travel approvals (2023)", "Travel approvals (2025)"}
    assert answer.citation(conflict.newer or 0).title == "Travel approvals (2025)"
    assert "2025-03-01" in conflict.detail and "more recent" in conflict.detail


async def test_a_source_that_disagrees_is_quoted_past_the_claims_limit(named: Built) -> None:
    # One claim per sub-question: the limit is full once the best quote is chosen, and
    # the page saying otherwise must still be shown, not silently left out.
    one_claim = named.extractive(ExtractiveOptions(claims_per_question=1))
    loop = named.loop(reasoner=one_claim, fallback=one_claim)
    answer = await loop.answer("Who approves travel requests for the Boston office?")
    (conflict,) = answer.conflicts
    sides = " ".join(answer.claims[i].quote for i in conflict.claims)
    assert "Dana Reyes" in sides and "Sam Ortiz" in sides


async def test_two_pages_naming_two_people_for_two_roles_are_no_conflict(named: Built) -> None:
    answer = await named.loop().answer("Who approves conference registrations in Denver?")
    quotes = " ".join(c.quote for c in answer.claims)
    # Both pages are quoted (so a conflict could have been found), and none is.
    assert "Priya Nair" in quotes and "Tom Becker" in quotes
    assert answer.conflicts == ()


def _evidence(document_id: int, quote: str, title: str = "") -> Evidence:
    return evidence(document_id, title or f"Page {document_id}", quote, 1.0)


def test_the_two_things_a_comparison_asks_about_are_no_conflict(
    analyzer: QuestionAnalyzer,
) -> None:
    question = "Which documentary came out first, The Agronomist or American Scary?"
    agronomist = _evidence(1, "The Agronomist is a 2003 American documentary about radio.")

    def conflicts(other: str) -> list[FoundConflict]:
        evidence = [agronomist, _evidence(2, other)]
        return find_conflicts(evidence, stems=stems_of(analyzer), questions=[question])

    # Pages on each of the two share their sentences' shape: two facts.
    assert conflicts("American Scary is a 2003 American documentary about radio.") == []
    # Another page giving the same sentence of a third film disagrees with the first.
    (found,) = conflicts("Radio Nights is a 2003 American documentary about radio.")
    assert found.kind == "name"


def test_two_pages_each_naming_itself_in_the_same_sentence_are_no_conflict(
    analyzer: QuestionAnalyzer,
) -> None:
    question = "What is in both the Lithocarpus and Duranta species?"
    sentence = "Lithocarpus {} is a species of plant in the Fagaceae family."
    evidence = [
        _evidence(1, sentence.format("platycarpus"), "Lithocarpus platycarpus"),
        _evidence(2, sentence.format("crassinervius"), "Lithocarpus crassinervius"),
    ]
    assert find_conflicts(evidence, stems=stems_of(analyzer), questions=[question]) == []
    # The same sentence on a page about something else names another thing: a conflict.
    evidence[1] = _evidence(2, sentence.format("crassinervius"), "Lithocarpus platycarpus")
    (found,) = find_conflicts(evidence, stems=stems_of(analyzer), questions=[question])
    assert found.kind == "name"


def test_two_pages_each_about_its_own_year_are_no_conflict(analyzer: QuestionAnalyzer) -> None:
    question = "When was the Harbour Cup held?"
    sentence = "The Harbour Cup {} was an event of the Coastal Sailing League season."
    evidence = [
        _evidence(1, sentence.format(2016), "Harbour Cup 2016"),
        _evidence(2, sentence.format(2017), "Harbour Cup 2017"),
    ]
    assert find_conflicts(evidence, stems=stems_of(analyzer), questions=[question]) == []
    # Two versions of one page giving two years do disagree.
    evidence[1] = _evidence(2, sentence.format(2017), "Harbour Cup 2016 (revised)")
    (found,) = find_conflicts(evidence, stems=stems_of(analyzer), questions=[question])
    assert found.kind == "date"


def stems_of(analyzer: QuestionAnalyzer) -> Callable[[str], frozenset[str]]:
    return lambda text: frozenset(analyzer.stems(text))
