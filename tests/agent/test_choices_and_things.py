"""A choice question answered by neither option, and a "which NOUN" question answered by a
bare year: both escalate, and their answerable twins stay answered (issue 24, h15).

A small corpus of people and bands, indexed for real."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent.choices import Found, choice_settled, found_by_question
from agent.state import PlannedQuestion
from jobs.documents import SourceDocument, StaticSource
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from tests.agent.conftest import Built, built_from, shown


def _page(uri: str, title: str, text: str) -> SourceDocument:
    return SourceDocument(
        uri=uri, title=title, url=f"https://wiki.test/{uri}", text=f"# {title}\n\n{text}"
    )


PAGES = [
    # One option of a choice whose other option no page speaks of.
    _page(
        "marco.md",
        "Marco da Silva",
        "Marco da Silva (born 10 April 1992) is a French football player who plays as a "
        "midfielder.",
    ),
    # Both options of another choice.
    _page(
        "ada.md",
        "Ada Quill",
        "Ada Quill (born 3 May 1950) is a British novelist who wrote twelve books.",
    ),
    _page(
        "bram.md",
        "Bram Otter",
        "Bram Otter (born 8 June 1961) is a Dutch painter who lives in Utrecht.",
    ),
    # A band's page that says when, not which.
    _page(
        "harbour.md",
        "The Harbour Lights",
        "The Harbour Lights recorded an album with the orchestra in 1987.",
    ),
    # A band's page that names the album.
    _page(
        "tidewater.md",
        "Tidewater Choir",
        "Tidewater Choir recorded Salt Roads, an album with the orchestra, in 1987.",
    ),
]


@pytest.fixture(scope="module")
async def wiki(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    async for result in built_from(pg_server, embedder, StaticSource("wiki", PAGES), "wiki"):
        yield result


async def test_a_choice_with_one_option_found_escalates(wiki: Built) -> None:
    # What the pages say of Marco da Silva picks no one: Erika Jayne is nowhere.
    answer = await wiki.loop().answer("Who was born first, Erika Jayne or Marco da Silva?")
    assert answer.escalate, shown(answer)


async def test_a_choice_with_both_options_found_is_answered(wiki: Built) -> None:
    answer = await wiki.loop().answer("Who was born first, Ada Quill or Bram Otter?")
    assert not answer.escalate, [(s.text, s.status) for s in answer.sub_questions]
    quotes = " ".join(c.quote for c in answer.claims)
    assert "3 May 1950" in quotes and "8 June 1961" in quotes


async def test_a_choice_whose_option_is_described_escalates_on_one_option(wiki: Built) -> None:
    # ", the Welsh choir" describes the last option: the question is still a choice
    # between two bands, and no page speaks of The Night Owls. Read as one question, it was
    # answered with the year on Tidewater Choir's page ("1987"), which picks no band.
    answer = await wiki.loop().answer(
        "Which band recorded with the orchestra, The Night Owls or Tidewater Choir, "
        "the Welsh choir?"
    )
    assert answer.escalate, shown(answer)


async def test_a_choice_whose_option_is_described_is_answered_by_both(wiki: Built) -> None:
    answer = await wiki.loop().answer(
        "Who was born first, Ada Quill or Bram Otter, the Dutch painter?"
    )
    assert not answer.escalate, [(s.text, s.status) for s in answer.sub_questions]
    quotes = " ".join(c.quote for c in answer.claims)
    assert "3 May 1950" in quotes and "8 June 1961" in quotes


def _options(*names: str) -> list[PlannedQuestion]:
    return [PlannedQuestion(f"Who was born first: {n}?", False, n) for n in names]


def _found(*quotes: tuple[int, str, str]) -> dict[int, list[Found]]:
    return found_by_question((i, quote, span, "") for i, quote, span in quotes)


def test_a_choice_is_settled_by_every_option_or_a_span_naming_another() -> None:
    subs = _options("Ada Quill", "Bram Otter")
    ada, bram = (0, "Ada Quill (born 1950)", "1950"), (1, "Bram Otter (born 1961)", "1961")
    assert choice_settled(subs, {0, 1}, _found(ada, bram))
    assert not choice_settled(subs, {1}, _found(bram))
    # Both answered, but one by a quote that names the other option only.
    assert not choice_settled(subs, {0, 1}, _found((0, "Bram Otter (born 1961)", "1961"), bram))
    # Its own option in its span is its subject again, not a pick.
    assert not choice_settled(subs, {1}, _found((1, "Bram Otter", "Bram Otter, a painter")))
    assert choice_settled(subs, {1}, _found((1, "Bram is older", "older than Ada Quill")))
    # Sub-questions that stand for no option: any one answered, as before.
    plain = [PlannedQuestion("a?", False), PlannedQuestion("b?", False)]
    assert choice_settled(plain, {1}, {})


def test_an_option_is_named_by_its_page_title() -> None:
    # "Manon by Massenet": the page "Manon" says "Manon is an opera …" and is its option.
    subs = _options("Parsifal", "Manon by Massenet")
    found = found_by_question(
        [
            (0, "Parsifal is an opera in three acts.", "three acts", "Parsifal"),
            (1, "It is an opera in five acts.", "five acts", "Manon (opera)"),
        ]
    )
    assert choice_settled(subs, {0, 1}, found)
    found[1] = [Found("It is an opera in five acts.", "five acts", "Thaïs")]
    assert not choice_settled(subs, {0, 1}, found)
