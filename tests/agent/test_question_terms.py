"""How a question's words are read: the terms a quote must carry, and its phrases.

Each rule here once kept the sentence that answers out of the answer: a possessive's
lone "s" counted as a name the sentence lacked; "Rely" did not match "Rély"; "take
place" counted as two terms; and "signing of the Treaty" in one passage made a sentence
about "the treaty" of the question look like it spoke of another kind of treaty.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.language.questions import QuestionAnalyzer, asking_sentences
from agent.reasoners.evidence import EvidenceScorer
from agent.sentence_vectors import SentenceVectors
from agent.sentences import SentenceSplitter
from store.embedding import SentenceTransformerEmbedder
from store.text_analysis import TextAnalyzer
from tests.agent.test_hops import MemoryVectors, passage


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


def test_a_sentence_that_only_sets_the_scene_holds_no_key_terms(
    analyzer: QuestionAnalyzer,
) -> None:
    question = analyzer.analyse(
        "My dad passed away last week. How much of my sick leave can I use for bereavement?"
    )
    assert "dad" in question.context
    assert {"sick", "leav", "bereav"} <= question.key_terms
    assert "dad" not in question.key_terms
    assert "week" not in question.terms  # "last week": when, which no page says
    assert "dad" in question.terms  # still searched for


def test_a_question_that_asks_about_its_scene_keeps_every_term_key(
    analyzer: QuestionAnalyzer,
) -> None:
    # "Any words of wisdom?" says too little alone: the scene is what it asks about.
    question = analyzer.analyse("just got promoted to supervisor. any words of wisdom?")
    assert not question.context and "supervisor" in question.key_terms
    one = analyzer.analyse("How many credit hours can I carry over?")
    assert not one.context


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("What was agreed in 1066?", "1066"),
        ("Who can apply for a GS-13 position?", "GS-13"),
        ("When does the 18F design huddle meet?", "18F"),
    ],
)
def test_years_and_identifiers_are_names_the_answer_must_hold(
    analyzer: QuestionAnalyzer, question: str, name: str
) -> None:
    assert set(analyzer.stems(name)) <= set(analyzer.analyse(question).names)


@pytest.mark.parametrize(
    "question",
    [
        "can the writing lab take on a bigger project, like 20+ hours of editing?",
        "does AcqDiv do really big contracts, like $50M?",
        "hosting a 2-hour webinar - how do I get past the 40-minute limit?",
        "planning an offsite where 8 of us would travel - whose approval do we need?",
    ],
)
def test_a_quantity_the_asker_supplies_is_not_a_name_the_page_must_repeat(
    analyzer: QuestionAnalyzer, question: str
) -> None:
    names = analyzer.analyse(question).names
    assert not any(any(c.isdigit() for c in n) for n in names), names


def test_a_scene_before_a_dash_is_context_as_a_sentence_before_would_be(
    analyzer: QuestionAnalyzer,
) -> None:
    question = analyzer.analyse(
        "I'm resigning - how far ahead should I start the offboarding process?"
    )
    assert "resign" in question.context and "resign" not in question.key_terms
    assert {"offboard", "process"} <= question.key_terms
    # A hyphen inside a word joins nothing: "part-time" stays whole and key.
    hyphen = analyzer.analyse("how much leave do part-time employees earn per pay period?")
    assert not hyphen.context


def test_a_preposition_the_stemmer_keeps_is_no_term_a_page_must_repeat(
    analyzer: QuestionAnalyzer,
) -> None:
    question = analyzer.analyse("besides the leave request, what should I do before I go?")
    assert "besid" not in question.terms and "leav" in question.key_terms


@given(st.text(alphabet=st.sampled_from("ab?.-— \u2013I'm how"), max_size=60))
def test_the_asking_parts_are_never_empty_and_always_come_from_the_message(text: str) -> None:
    parts = asking_sentences(text)
    assert all(part.strip() and part.strip() in text for part in parts)
    assert bool(parts) == bool(text.strip())


@pytest.mark.parametrize(
    ("question", "not_key", "key"),
    [
        # how it asks, not what about
        ("what's the deadline to submit everything in Concur?", "deadlin", "concur"),
        ("just got promoted to supervisor. any words of wisdom?", "wisdom", "supervisor"),
        ("what's in a CPF? like what are the parts", "part", "cpf"),
        ("What does SF-182 stand for?", "stand", "182"),
        ("planning a team trip - whose approval do we need?", "whose", "approv"),
        # times relative to the asker's message, and chat words
        (
            "need to fly out tonight and my authorization never got approved. what now?",
            "tonight",
            "author",
        ),
        ("how should I let folks know where I am?", "folk", "know"),
        # a premise the asker supplies, and where a term was met
        ("does AcqDiv do really big contracts, like $50M?", "50m", "acqdiv"),
        ("does AcqDiv do really big contracts, like $50M?", "like", "contract"),
        ("what does TK mean in a draft doc?", "draft", "tk"),
    ],
)
def test_words_that_frame_the_question_are_not_terms_a_page_must_repeat(
    analyzer: QuestionAnalyzer, question: str, not_key: str, key: str
) -> None:
    analysed = analyzer.analyse(question)
    assert not_key not in analysed.key_terms
    assert key in analysed.key_terms


def test_a_quantity_stated_plainly_is_a_constraint_the_page_must_meet(
    analyzer: QuestionAnalyzer,
) -> None:
    # Only one offered as an example ("like $50M") is a premise; this one says which people.
    question = analyzer.analyse("What share of staff earn more than $50,000 a year?")
    assert "50" in question.key_terms


def test_a_negation_in_the_scene_is_not_a_negation_the_answer_must_share(
    analyzer: QuestionAnalyzer,
) -> None:
    scene = "need to fly out tonight and my authorization never got approved. what now?"
    assert not analyzer.analyse(scene).negated
    assert analyzer.analyse("My plan changed. What is not covered by it?").negated
    assert analyzer.analyse("What is not covered by the plan?").negated


async def test_a_sentence_without_the_scene_s_negation_still_answers(
    embedder: SentenceTransformerEmbedder,
) -> None:
    answer = "Book emergency travel arrangements by calling the travel agency."
    supports = await _supports(
        embedder,
        "My travel authorization was never approved. How do I book emergency travel arrangements?",
        answer,
    )
    assert supports.get(answer) in ("strong", "partial")


async def test_a_word_the_pages_write_as_two_is_read_as_they_write_it(
    embedder: SentenceTransformerEmbedder,
) -> None:
    answer = "Your supervisor deals with anyone under-performing."
    supports = await _supports(embedder, "who deals with underperforming staff?", answer)
    assert supports.get(answer) in ("strong", "partial")


class _Corpus:
    """The knowledge base's terms, as the keyword index reports them."""

    def __init__(self, terms: set[str]) -> None:
        self._terms = terms

    def known(self, terms: Iterable[str]) -> set[str]:
        return set(terms) & self._terms

    def rarity(self, terms: Iterable[str]) -> dict[str, float]:
        return dict.fromkeys(terms, 1.0)


def test_a_word_no_page_has_is_searched_as_the_pages_write_it(
    analyzer: QuestionAnalyzer,
) -> None:
    scorer = EvidenceScorer(
        analyzer=analyzer,
        splitter=SentenceSplitter(),
        vectors=None,  # type: ignore[arg-type]
        corpus_terms=_Corpus({"under", "perform", "employe"}),
    )
    assert scorer.split_unknown("underperforming") == "under performing"
    assert scorer.split_unknown("employees") == "employees"  # a word the pages have
    assert scorer.split_unknown("outperforming") == "outperforming"  # "out" is no word here


def test_onto_is_a_preposition_not_a_topic(analyzer: QuestionAnalyzer) -> None:
    question = analyzer.analyse("how do I get onto the on-call rota?")
    assert "rota" in question.key_terms and "onto" not in question.key_terms


def test_a_day_of_the_month_the_asker_states_is_no_name(analyzer: QuestionAnalyzer) -> None:
    """'approved on the 25th' is the asker's day, which the page bounds in its own terms
    ('approved by the 20th'); before a noun an ordinal still names something."""
    assert analyzer.analyse("Expenses approved on the 25th - when are they paid?").names == ()
    assert analyzer.analyse("is pay on the 1st of the month?").names == ()
    assert analyzer.analyse("What treaty was signed in the 9th century?").names == ("9th",)


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("is juneteenth a federal holiday here?", ("juneteenth",)),
        ("quick q - is black friday one of our paid days off?", ("black", "friday")),
        ("Is my dog a service animal?", ("dog",)),
        # No thing of its own: "there", a pronoun, or no kind asked after it.
        ("is there a bonus for referrals?", ()),
        ("is it ok if a friend visits?", ()),
        ("is holiday pay time and a half?", ()),
    ],
)
def test_the_subject_of_whether_a_thing_is_of_a_kind_is_a_name(
    analyzer: QuestionAnalyzer, question: str, names: tuple[str, ...]
) -> None:
    """Lower case, it is still the thing the answer must name: a page of federal holidays
    that never names Juneteenth does not answer "is juneteenth a federal holiday?"."""
    analysis = analyzer.analyse(question)
    assert analysis.names == names
    assert analysis.subject == frozenset(names)


async def test_a_preposition_before_the_noun_names_no_other_kind_of_it(
    embedder: SentenceTransformerEmbedder,
) -> None:
    """'between Lot R and ...' speaks of a lot without saying which kind; 'the staff lot'
    is another kind than the 'remote lot' asked about."""
    shuttle = "The shuttle runs between Lot R and the North Tower every 15 minutes."
    staff = "The staff lot shuttle runs every 30 minutes."
    remote = "Night staff park in the remote lot."  # a page saying "remote lot" as a phrase
    supports = await _supports(
        embedder, "how often does the shuttle from the remote lot run?", shuttle, staff, remote
    )
    assert shuttle in supports and staff not in supports


def test_a_phrasal_verbs_particle_is_part_of_the_verb(analyzer: QuestionAnalyzer) -> None:
    """'find out' is 'find'; the page says 'closures are announced by 6:00'."""
    assert "out" not in analyzer.analyse("when do we find out about snow closures").key_terms
    assert "up" not in analyzer.analyse("where do i pick up a hard hat").key_terms
    assert "back" not in analyzer.analyse("how do I get paid back for a renewal").key_terms
    assert "back" in analyzer.analyse("my back hurts, who do I tell").key_terms  # a body part


def test_filling_making_and_wanting_are_light_verbs(analyzer: QuestionAnalyzer) -> None:
    """The form and the visit are the topic; pages say 'complete', 'may request'. (Not
    'held': "how often is the course held?" asks how often it runs, which a course's
    renewal period does not say; tests/agent/test_chat_questions.py.)"""
    for question, verb in [
        ("what form do I fill out?", "fill"),
        ("can the charge nurse make me take charge?", "make"),
        ("a school wants a storytime visit, how far ahead?", "want"),
    ]:
        assert verb in analyzer.analyse(question).light_verbs, question
