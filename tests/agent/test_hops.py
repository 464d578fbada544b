"""The extractive reasoner's multi-hop rules, on hand-made passages and evidence.

Each test fails when its rule is removed: hits merged by rank; a page named by its title
(accents and disambiguation aside); the page of a thing the question names read and
quoted; a hop naming one of several entities; a close runner-up from another page;
the second hop's query and its reading; a sentence quoted with the one it refers back to.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np
import pytest

from agent.language.questions import QuestionAnalyzer
from agent.reasoners.evidence import EvidenceScorer
from agent.reasoners.extractive import ExtractiveReasoner, _names_title
from agent.retrieval.reading import Passage
from agent.search_driver import by_rank as _by_rank
from agent.sentence_vectors import SentenceVectors
from agent.sentences import SentenceSplitter
from agent.state import AgentState, Evidence, Goal, PendingQuery, PlannedQuestion, QueryRun
from store.corpus import ChunkSpan
from store.embedding import SentenceTransformerEmbedder
from store.text_analysis import TextAnalyzer
from store.vector_search import ChunkHit


class MemoryVectors:
    def __init__(self) -> None:
        self._vectors: dict[str, np.ndarray] = {}

    async def get(self, *, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        return {h: self._vectors[h] for h in hashes if h in self._vectors}

    async def put(self, *, model: str, vectors: Mapping[str, np.ndarray]) -> None:
        self._vectors.update(vectors)


def reasoner(embedder: SentenceTransformerEmbedder) -> ExtractiveReasoner:
    analyzer = QuestionAnalyzer(TextAnalyzer())
    vectors = SentenceVectors(embedder=embedder, store=MemoryVectors())
    scorer = EvidenceScorer(analyzer=analyzer, splitter=SentenceSplitter(), vectors=vectors)
    return ExtractiveReasoner(analyzer=analyzer, scorer=scorer)


def passage(document_id: int, title: str, text: str, score: float = 0.5) -> Passage:
    span = ChunkSpan(document_id * 10, document_id, 0, 0, len(text), ())
    return Passage(
        document_id=document_id,
        title=title,
        url=None,
        uri=f"doc-{document_id}",
        source="test",
        collection="default",
        heading_path=(),
        char_start=0,
        char_end=len(text),
        text=text,
        chunk_ids=(span.chunk_id,),
        score=score,
        spans=(span,),
    )


def state_for(question: str, *sub_questions: str) -> AgentState:
    state = AgentState(goal=Goal(question, question), max_steps=4)
    state.sub_questions = [PlannedQuestion(q, True) for q in sub_questions or (question,)]
    state.step = 1
    return state


def evidence(
    document_id: int, title: str, quote: str, score: float, covered: frozenset[str] = frozenset()
) -> Evidence:
    return Evidence(
        sub_question=0,
        claim=quote,
        quote=quote,
        chunk_id=document_id * 10,
        document_id=document_id,
        title=title,
        url=None,
        uri=f"doc-{document_id}",
        source="test",
        collection="default",
        section="",
        updated_at=None,
        score=score,
        support="partial",
        covered=covered,
    )


def hit(chunk_id: int) -> ChunkHit:
    return ChunkHit(chunk_id, chunk_id, 0, "", 0, 0, (), "", None, f"c{chunk_id}", "s", 0.5)


def test_hits_of_several_queries_are_merged_by_rank_not_by_score() -> None:
    first, second = [hit(1), hit(2), hit(3)], [hit(4), hit(1), hit(5)]
    assert [h.chunk_id for h in _by_rank([first, second])] == [1, 4, 2, 3, 5]


def test_a_page_is_named_by_its_title_with_accents_and_disambiguation_aside() -> None:
    assert _names_title("the bridge in the Öresund Region", "Øresund Region")
    assert _names_title("Hot toddy or Kir?", "Kir (cocktail)")
    assert not _names_title("Who built the kirk?", "Kir (cocktail)")
    assert not _names_title("Hot toddy or Kir?", "Kirsch")


async def test_the_page_of_a_thing_the_question_names_is_read_and_quoted(
    embedder: SentenceTransformerEmbedder,
) -> None:
    # The page about Kir says nothing about bed time; it is still what a reader quotes
    # about Kir, next to the sentence that answers for the hot toddy.
    question = "Which is traditionally drunk before bed, hot toddy or Kir?"
    toddy = passage(
        1,
        "Hot toddy",
        "A hot toddy is a mixed drink served hot. Hot toddies are traditionally drunk before bed.",
        0.9,
    )
    kir = passage(2, "Kir (cocktail)", "It is made with white wine and cassis.", 0.6)
    state = state_for(question)
    extractive = reasoner(embedder)
    state.evidence = await extractive.extract(0, [toddy, kir], state)
    assert "Kir (cocktail)" in {e.title for e in state.evidence}
    claims = await extractive.synthesize(state)
    assert any("traditionally drunk before bed" in c.quote for c in claims)
    assert any(c.quote.startswith("It is made with white wine") for c in claims)


async def test_a_unit_naming_one_of_the_question_s_entities_is_a_hop(
    embedder: SentenceTransformerEmbedder,
) -> None:
    question = "Is the Marsilea or the Brabejum the genus of more individual species of plants?"
    marsilea = passage(1, "Marsilea", "Marsilea is a genus of approximately 65 species of ferns.")
    state = state_for(question)
    found = await reasoner(embedder).extract(0, [marsilea], state)
    assert [e.quote for e in found] == ["Marsilea is a genus of approximately 65 species of ferns."]


def test_a_close_runner_up_from_another_page_is_shown() -> None:
    state = state_for("Which film did the director of Jaws make next?")
    state.evidence = [
        evidence(1, "Jaws", "Jaws was directed by Steven Spielberg.", 1.20),
        evidence(2, "Close Encounters", "Close Encounters was his next film.", 1.10),
    ]
    claims = ExtractiveReasoner._claims_for(_bare(), 0, state)
    assert [c.chunk_id for c in claims] == [10, 20]


def test_a_page_the_question_names_comes_before_a_closer_unnamed_one() -> None:
    state = state_for("Were Local H and For Against both from the United States?")
    state.evidence = [
        evidence(1, "For Against", "For Against is a United States band.", 1.30),
        evidence(3, "I'm A Bum", "I'm A Bum is an album by Local H.", 1.28),
        evidence(2, "Local H", "Local H is an American rock band.", 0.90),
    ]
    claims = ExtractiveReasoner._claims_for(_bare(), 0, state)
    assert [c.chunk_id for c in claims] == [10, 20]


def _bare() -> ExtractiveReasoner:
    """A reasoner for the synthesis rules, which need no scorer."""
    return ExtractiveReasoner(analyzer=QuestionAnalyzer(TextAnalyzer()), scorer=None)  # type: ignore[arg-type]


async def test_a_page_the_best_evidence_s_passage_names_is_the_second_hop(
    embedder: SentenceTransformerEmbedder,
) -> None:
    # The quote that answers the first hop does not name the owner; its passage does.
    question = "In which town is the brewery that owns the Hungry Horse chain based?"
    chain = passage(
        1,
        "Hungry Horse",
        "Hungry Horse is a chain of pub restaurants owned by a brewery. "
        "Greene King bought the chain in 1995 from its founders.",
        0.9,
    )
    brewery = passage(2, "Greene King", "Greene King is based in Bury St Edmunds.", 0.5)
    state = state_for(question)
    found = await reasoner(embedder).extract(0, [chain, brewery], state)
    assert "Greene King is based in Bury St Edmunds." in {e.quote for e in found}


def strong(document_id: int, title: str, quote: str, score: float = 1.2) -> Evidence:
    return dataclasses.replace(evidence(document_id, title, quote, score), support="strong")


async def test_the_second_hop_searches_the_name_the_leading_quote_holds() -> None:
    question = "Handi-Snacks are sold by what company that is based in Illinois?"
    state = state_for(question)
    state.answered = {0}
    state.evidence = [
        strong(1, "Handi-Snacks", "Handi-Snacks are sold by Mondelez International."),
        # A capitalised first word alone is no name; a page already quoted is read.
        strong(2, "Snacks", "Later, many snacks were sold by Handi-Snacks.", 1.1),
    ]
    queries = await _bare().second_hop(state)
    assert [(q.text, q.sub_question, q.intent) for q in queries] == [
        ("Mondelez International", 0, "targeted_follow_up")
    ]
    assert state.bridges[0] == ["Mondelez International"]


async def test_no_second_hop_while_a_sub_question_is_unanswered() -> None:
    state = state_for("Handi-Snacks are sold by what company?")
    state.evidence = [strong(1, "Handi-Snacks", "Handi-Snacks are sold by Mondelez International.")]
    assert await _bare().second_hop(state) == []


async def test_the_hop_step_reads_only_the_pages_titled_by_the_name(
    embedder: SentenceTransformerEmbedder,
) -> None:
    state = state_for("What was the population in 2001 of the town near Kirton End?")
    state.hop_step = state.step
    state.bridges[0] = ["Boston"]
    state.queries = [QueryRun(PendingQuery("Boston", 0, "targeted_follow_up"), state.step, 2)]
    town = passage(1, "Boston, Lincolnshire", "In 2001 Boston had a population of 35,124.")
    team = passage(2, "Boston Red Sox", "In 2001 the Boston Red Sox drew 2,625,333 fans.", 0.9)
    found = await reasoner(embedder).extract(0, [team, town], state)
    assert {e.title for e in found} == {"Boston, Lincolnshire"}
    assert "35,124" in " ".join(e.quote for e in found)


async def test_a_page_named_by_a_page_the_question_names_is_read_in_the_same_step(
    embedder: SentenceTransformerEmbedder,
) -> None:
    # The question's first word names the snack's page (no name of the question is
    # in it, so only its title brings it in); that page names the company's page.
    question = "Handi-Snacks are sold by what company that is based in Illinois?"
    snack = passage(1, "Handi-Snacks", "Handi-Snacks are sold by Mondelez International.", 0.9)
    company = passage(
        2,
        "Mondelez International",
        "Mondelez International is a confectionery, food, and beverage company.",
        0.4,
    )
    state = state_for(question)
    found = await reasoner(embedder).extract(0, [snack, company], state)
    assert {e.title for e in found} == {"Handi-Snacks", "Mondelez International"}


async def test_a_sentence_that_refers_back_is_quoted_with_the_sentence_before(
    embedder: SentenceTransformerEmbedder,
) -> None:
    text = (
        "The Computer Science Network (CSNET) was a network funded by the NSF. "
        "Its purpose was to extend networking benefits to computer science departments."
    )
    state = state_for("What was the purpose of CSNET?")
    found = await reasoner(embedder).extract(0, [passage(1, "Networks", text)], state)
    best = max(found, key=lambda e: e.score)
    assert best.quote == text  # one contiguous span of the chunk: it verifies as stored


@pytest.mark.parametrize(
    ("question", "plan"),
    [
        (
            "what's in a CPF? like what are the parts",
            ["what's in a CPF? like what are the parts"],
        ),
        (
            "do I have to stay after parental leave? how long?",
            ["do I have to stay after parental leave? how long?"],
        ),
        # Two parts with words of their own stay two questions (one that refers back
        # is led by its subject: tests/agent/test_quoted_answers.py).
        (
            "how long is parental leave? who approves telework?",
            ["how long is parental leave?", "who approves telework?"],
        ),
    ],
)
async def test_a_part_with_no_words_of_its_own_asks_more_of_the_part_before(
    question: str, plan: list[str]
) -> None:
    assert [p.text for p in await _bare().decompose(question)] == plan


async def test_a_page_the_evidence_names_is_held_to_the_phrases_of_the_pages_read(
    embedder: SentenceTransformerEmbedder,
) -> None:
    # "Leave types" names "Advanced sick leave", whose page is then scored alone. Its
    # "4 sick leave hours per pay period" holds the asked number but speaks of another
    # kind of leave: "annual leave" is a phrase of the pages read, not of that page alone.
    question = "How many hours of annual leave do I earn per pay period?"
    leave = passage(
        1,
        "Leave types",
        "Annual leave accrues at 4 hours per pay period for your first 3 years. If you "
        "need sick leave you have not earned yet, read Advanced sick leave.",
        0.9,
    )
    sick = passage(2, "Advanced sick leave", "You earn 4 sick leave hours per pay period.", 0.6)
    state = state_for(question)
    found = await reasoner(embedder).extract(0, [leave, sick], state)
    assert found and all("sick leave hours" not in e.quote for e in found), [e.quote for e in found]


def test_another_answer_of_the_asked_type_on_a_cited_page_fills_a_place_left() -> None:
    # The instruction repeats no more of the question than the best match does and is not
    # close to it in score; it holds an answer of the asked type, so it is shown. A
    # sentence of the same page holding none is not.
    state = state_for("can I just create a private repo for my project?")
    terms = frozenset({"privat", "repo"})
    best = evidence(1, "GitHub", "Link a document explaining why a repo is private.", 1.2, terms)
    instruction = evidence(
        1, "GitHub", "Ask Tech Operations before creating private repositories.", 0.9, terms
    )
    untyped = dataclasses.replace(
        evidence(1, "GitHub", "Private repositories cost money.", 0.9, terms), typed=False
    )
    state.evidence = [
        dataclasses.replace(best, support="strong"),
        dataclasses.replace(instruction, chunk_id=11),
        dataclasses.replace(untyped, chunk_id=12),
    ]
    claims = ExtractiveReasoner._claims_for(_bare(), 0, state)
    assert [c.chunk_id for c in claims] == [10, 11]
