"""A two-hop question's second hop is answered by the page ABOUT the name the first hop
led to, not by a page that mentions that name in passing (issue 24, on-topic negatives):
"the city where the Memphis Hustle play" leads to Southaven, and West Memphis's page,
which names Southaven as a neighbour, holds West Memphis's population, not Southaven's.

Two small corpora indexed for real: without a Southaven page the reply escalates; with
one, its population answers.

The twin the rule must keep: on the page the question is about, the bridge still stands
in. "Sports in DeSoto County" says where the Memphis Hustle play (the quote naming all of
the question's names, where the rewrite reads "Southaven") and, further on, Southaven's
population: that page answers, as the handbook's glossary answers "what does TK mean in a
draft doc?" through "TK - To Come" (red with the bridge held to its title alone)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent.reasoners.extractive import _named_by
from jobs.documents import SourceDocument, StaticSource
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from tests.agent.conftest import Built, built_from, shown

QUESTION = "What is the population of the city where the Memphis Hustle play their home games?"

TEAM = SourceDocument(
    uri="hustle.md",
    title="Memphis Hustle",
    url="https://wiki.test/hustle",
    text="# Memphis Hustle\n\nThe Memphis Hustle are a basketball team. The Memphis Hustle "
    "play their home games at the Landers Center in Southaven.",
)
NEIGHBOUR = SourceDocument(
    uri="west-memphis.md",
    title="West Memphis",
    url="https://wiki.test/west-memphis",
    text="# West Memphis\n\nWest Memphis is a city across the river from Memphis, north of "
    "Southaven. The population of the city was 26,245 at the 2010 census.",
)
BRIDGE = SourceDocument(
    uri="southaven.md",
    title="Southaven",
    url="https://wiki.test/southaven",
    text="# Southaven\n\nSouthaven is a city in DeSoto County. The population of the city "
    "was 48,982 at the 2010 census.",
)


@pytest.fixture(scope="module")
async def without_bridge(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    source = StaticSource("wiki", [TEAM, NEIGHBOUR])
    async for result in built_from(pg_server, embedder, source, "bridgeless"):
        yield result


@pytest.fixture(scope="module")
async def with_bridge(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    source = StaticSource("wiki", [TEAM, NEIGHBOUR, BRIDGE])
    async for result in built_from(pg_server, embedder, source, "bridged"):
        yield result


# The look-alike alone, as the negatives hold it: the first quote is on West Memphis's own
# page ("… across the Mississippi River from Memphis"), which names "Memphis" but not the
# Memphis Hustle, so the names it adds are not said of the team.
LOOK_ALIKE = SourceDocument(
    uri="west-memphis-city.md",
    title="West Memphis, Arkansas",
    url="https://wiki.test/west-memphis-city",
    text="# West Memphis, Arkansas\n\nWest Memphis is a city and suburb in Crittenden County, "
    "Arkansas. "
    "The population was 26,245 at the 2010 census, ranking it as the state's 18th largest "
    "city. It is part of the Memphis metropolitan area, where several teams are based, and "
    "is located directly across the "
    "Mississippi River from Memphis.",
)
SUBURB_QUESTION = (
    "The Memphis Hustle are based in a suburb of a city with a population of what in 2010?"
)


@pytest.fixture(scope="module")
async def look_alike(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    source = StaticSource("wiki", [LOOK_ALIKE])
    async for result in built_from(pg_server, embedder, source, "look-alike"):
        yield result


# The page the question is about, titled by neither the team nor the city: the first quote
# ("... at the Landers Center in Southaven") is read here, and so is the bridge.
LEAGUE = SourceDocument(
    uri="desoto-sports.md",
    title="Sports in DeSoto County",
    url="https://wiki.test/desoto-sports",
    text="# Sports in DeSoto County\n\nThe Memphis Hustle are a basketball team. The Memphis "
    "Hustle play their home games at the Landers Center in Southaven. The population of "
    "Southaven was 48,982 at the 2010 census.",
)


@pytest.fixture(scope="module")
async def on_its_own_page(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    source = StaticSource("wiki", [LEAGUE, NEIGHBOUR])
    async for result in built_from(pg_server, embedder, source, "own-page"):
        yield result


async def test_a_page_naming_the_bridge_in_passing_does_not_answer_for_it(
    without_bridge: Built,
) -> None:
    answer = await without_bridge.loop().answer(QUESTION)
    spans = [c.span for c in answer.claims]
    assert answer.escalate, shown(answer)
    assert not any("26,245" in s for s in spans)


async def test_the_page_titled_by_the_bridge_answers(with_bridge: Built) -> None:
    answer = await with_bridge.loop().answer(QUESTION)
    assert not answer.escalate, shown(answer)
    assert any("48,982" in c.span for c in answer.claims)


async def test_the_page_the_bridge_was_read_from_still_answers(on_its_own_page: Built) -> None:
    answer = await on_its_own_page.loop().answer(QUESTION)
    assert not answer.escalate, (shown(answer), answer.gaps)
    assert any("48,982" in c.span for c in answer.claims)


def test_a_page_is_named_by_its_title_or_its_abbreviation() -> None:
    # The handbook's FITARA page is what "does buying a small SaaS tool really need a FITARA
    # review?" is about; a disambiguation in parentheses names no page.
    fitara = "Federal Information Technology Acquisition Reform Act (FITARA)"
    assert _named_by("does buying a SaaS tool really need a FITARA review?", fitara)
    assert _named_by("Who plays for the Memphis Hustle?", "Memphis Hustle")
    assert not _named_by("Which film did she make in 1970?", "Gimme Shelter (film)")
    assert not _named_by("The Memphis Hustle are based where?", "West Memphis")


async def test_a_look_alike_s_own_quote_does_not_make_it_the_question_s_page(
    look_alike: Built,
) -> None:
    answer = await look_alike.loop().answer(SUBURB_QUESTION)
    assert answer.escalate, shown(answer)
