"""The sentences a quote is read with (agent/reasoners/companions.py), through the whole
loop on a real index: a later sentence of a list item is quoted with the item's first
sentence (its point), and a sentence with the next one of its paragraph when that one
holds the answer. Neither decides whether a question is answered: a near miss on the
same pages stays escalated. Each test fails with its rule reverted.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent.loop import AgentLoop
from agent.reasoners.companions import companions
from agent.reasoners.evidence import quotable_units
from agent.reasoners.extractive import ExtractiveOptions
from agent.sentences import SentenceSplitter
from jobs.documents import SourceDocument, StaticSource
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from tests.agent.conftest import Built, all_quotes_stored, built_from
from tests.agent.test_hops import passage

PAGES = [
    SourceDocument(
        uri="code-hosting.md",
        title="Code hosting",
        url="https://kb.test/code-hosting",
        text="# Code hosting\n\n## Rules\n\n"
        "- Ask the platform team before adding an integration to the code host.\n"
        "- Ask the platform team before creating private repositories. We pay the host "
        "for each private repository and bill clients for the ones made for them. Be sure "
        "to include a link in your repo README to a document that explains why the "
        "project repo you create is private.\n"
        "- You do not need approval to create public repositories.\n",
    ),
    SourceDocument(
        uri="intro-to-the-code-host.md",
        title="Intro to the code host",
        url="https://kb.test/intro",
        text="# Intro to the code host\n\n"
        "Anybody on the team can create repos in the team organization, and you should "
        "always create new projects as the team, not as yourself. You can create new "
        "repos by clicking the + next to your profile picture. Repo is short for "
        "repository, or a project on the code host.",
    ),
    SourceDocument(
        uri="amended-authorizations.md",
        title="Amended authorizations",
        url="https://kb.test/amended",
        text="# Amended authorizations\n\n"
        "Unless the travel is an emergency and you are at the airport, you must also "
        "obtain an updated approval email from your authorizing official. If you require "
        "approval after business hours, see the guide for after-hours and emergency travel.",
    ),
    SourceDocument(
        uri="emergency-travel.md",
        title="After-hours and emergency travel",
        url="https://kb.test/emergency-travel",
        text="# After-hours and emergency travel\n\n"
        "If the need to travel arises after hours and your travel authorization was never "
        "approved, your authorizing official can still sign your completed travel form. "
        "You will need to call the travel agency at 877-555-0100 and later submit the "
        "signed travel form to agents@travel.test.\n\n"
        "Book hotels through the travel system whenever you can.",
    ),
]


@pytest.fixture(scope="module")
async def pages(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    async for result in built_from(pg_server, embedder, StaticSource("cq", PAGES), "cq"):
        yield result


def _one_place(pages: Built) -> AgentLoop:
    """A loop giving each sub-question one place: what the best quote brings beside it
    is all there is to see (with four places, a small knowledge base's runners-up are
    often the same sentences)."""
    return pages.loop(reasoner=pages.extractive(ExtractiveOptions(claims_per_question=1)))


async def test_a_later_sentence_of_a_list_item_is_quoted_with_the_items_point(
    pages: Built,
) -> None:
    answer = await _one_place(pages).answer("can I just create a private repo for my project?")
    assert not answer.escalate, answer.gaps
    quotes = [c.quote for c in answer.claims]
    assert "Ask the platform team before creating private repositories." in quotes, quotes
    assert await all_quotes_stored(pages.pool, answer)


async def test_the_next_sentence_holding_the_answer_is_quoted_beside_its_quote(
    pages: Built,
) -> None:
    answer = await _one_place(pages).answer(
        "need to fly out tonight for an emergency and my authorization never got approved. "
        "what now?"
    )
    quotes = [c.quote for c in answer.claims]
    assert any("agents@travel.test" in q for q in quotes), quotes
    assert await all_quotes_stored(pages.pool, answer)


async def test_a_near_miss_on_the_same_item_stays_escalated(pages: Built) -> None:
    # The item is on topic (private repositories) but names no price: its companions are
    # shown beside what was found, and the question is still a gap.
    answer = await _one_place(pages).answer("how much does a private repo cost per month?")
    assert answer.escalate
    assert not any(c.span for c in answer.claims)


def test_companions_stay_inside_their_paragraph_or_item() -> None:
    splitter = SentenceSplitter()
    text = (
        "Paragraph one says who signs the form. Another sentence ends it.\n\n"
        "Submit the form to forms@kb.test by Friday.\n"
    )
    units, page = splitter.split(text), passage(1, "Page", text)
    last = next(u for u in units if u.text.startswith("Another"))
    # The next paragraph holds an address, but is another block: no companion.
    assert companions(units, page, last, "contact", "where do I send it?") == ()
    first = next(u for u in units if u.text.startswith("Paragraph"))
    # The next sentence of the same paragraph holds no address: no companion either.
    assert companions(units, page, first, "contact", "where do I send it?") == ()


def test_a_question_the_page_asks_is_never_a_companion() -> None:
    # A playbook's exercise asks questions; shown beside a quote, one would pass a
    # question off as the rest of an answer ("What factors will you take into
    # consideration?" under "can i bring my dog to the office?"). The question itself
    # stays quotable: in a Slack thread or an FAQ it names the answer's topic.
    splitter = SentenceSplitter()
    text = "Leave requests go to your manager. Can I take leave on 1 May without asking?\n"
    units, page = splitter.split(text), passage(1, "Page", text)
    first = next(u for u in units if u.text.startswith("Leave requests"))
    # The next sentence holds a date, but only asks: it is no companion.
    assert companions(units, page, first, "date", "when should I ask for leave?") == ()
    assert "Can I take leave on 1 May without asking?" in [
        u.text for u in quotable_units(splitter, text)
    ]
