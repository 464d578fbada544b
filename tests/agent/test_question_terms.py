"""How a question's words are read: the terms a quote must carry, and its phrases.

Each rule here once kept the sentence that answers out of the answer: a possessive's
lone "s" counted as a name the sentence lacked; "Rely" did not match "Rély"; "take
place" counted as two terms; and "signing of the Treaty" in one passage made a sentence
about "the treaty" of the question look like it spoke of another kind of treaty.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.language.questions import QuestionAnalyzer
from agent.reasoners.evidence import EvidenceScorer
from agent.sentence_vectors import SentenceVectors
from agent.sentences import SentenceSplitter
from store.embedding import SentenceTransformerEmbedder
from store.text_analysis import TextAnalyzer
from tests.agent.test_hops import MemoryVectors, passage


@pytest.fixture(scope="module")
def analyzer() -> QuestionAnalyzer:
    return QuestionAnalyzer(TextAnalyzer())


def test_a_possessive_leaves_no_lone_letter_among_the_terms_or_names(
    analyzer: QuestionAnalyzer,
) -> None:
    question = analyzer.analyse("What percentage of France's population is Protestant today?")
    assert "s" not in question.terms and "s" not in question.names
    assert {"franc", "popul", "protest"} <= set(question.terms)


def test_accents_are_folded_so_a_name_typed_without_them_still_matches(
    analyzer: QuestionAnalyzer,
) -> None:
    assert analyzer.stems("Jean de Rély, in the Cévennes") == analyzer.stems(
        "Jean de Rely, in the Cevennes"
    )
    assert "reli" in analyzer.analyse("Where did Jean De Rely publish?").names


def test_take_place_is_how_a_question_says_happen(analyzer: QuestionAnalyzer) -> None:
    question = analyzer.analyse("When did the Huguenot rebellions take place?")
    assert set(question.terms) == {"huguenot", "rebellion"}


def test_a_phrase_is_two_words_side_by_side_not_around_a_dropped_word(
    analyzer: QuestionAnalyzer,
) -> None:
    assert ("annual", "leav") in analyzer.analyse("How much annual leave do I earn?").pairs
    pairs = analyzer.analyse("Who did Rollo sign the treaty with?").pairs
    assert ("sign", "treati") not in pairs and ("rollo", "sign") in pairs
    assert analyzer.phrase_words("The signing of the Treaty of Paris, sick leave") == (
        None,
        "sign",
        None,
        None,
        "treati",
        None,
        "pari",
        None,
        "sick",
        "leav",
    )


@given(st.text(max_size=200))
def test_phrase_words_are_the_stems_in_order_with_breaks_between(text: str) -> None:
    analyzer = QuestionAnalyzer(TextAnalyzer())
    words = analyzer.phrase_words(text)
    assert [w for w in words if w is not None] == analyzer.stems(text)


async def _supports(embedder: SentenceTransformerEmbedder, question: str, *texts: str) -> dict:
    analyzer = QuestionAnalyzer(TextAnalyzer())
    vectors = SentenceVectors(embedder=embedder, store=MemoryVectors())
    scorer = EvidenceScorer(analyzer=analyzer, splitter=SentenceSplitter(), vectors=vectors)
    passages = [passage(i + 1, f"Page {i + 1}", text) for i, text in enumerate(texts)]
    scored = await scorer.score(analyzer.analyse(question), passages)
    return {s.unit.text: s.support for s in scored}


async def test_a_sentence_about_the_treaty_is_not_another_kind_of_treaty(
    embedder: SentenceTransformerEmbedder,
) -> None:
    answer = (
        "The Duchy of Normandy was established by the treaty of Saint-Clair-sur-Epte "
        "between King Charles III of West Francia and the Viking ruler Rollo."
    )
    elsewhere = "The war ended with the signing of the Treaty of Paris in 1763."
    supports = await _supports(
        embedder, "Who did Rollo sign the treaty of Saint-Clair-sur-Epte with?", answer, elsewhere
    )
    assert supports.get(answer) in ("strong", "partial")


async def test_another_kind_of_leave_is_ruled_out_and_leave_after_a_stop_word_is_not(
    embedder: SentenceTransformerEmbedder,
) -> None:
    annual = "Full-time employees earn 4 hours of annual leave per pay period."
    sick = "Full-time employees earn 4 hours of sick leave per pay period."
    # "hours of leave": no word names another kind of leave ("of" stands between).
    plain = "Part-time employees earn 2 hours of leave per pay period."
    supports = await _supports(embedder, "How much annual leave do I earn?", annual, sick, plain)
    assert supports.get(annual) in ("strong", "partial") and sick not in supports
    assert plain in supports
