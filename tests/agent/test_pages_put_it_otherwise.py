"""A page answers in its own terms: an abbreviation it defines in one passage holds in the
others ("PD" beside "professional development"), a superlative of what one may do is the
"limit" it states, the point people gather at is a place by its name, and a time the
asker states ("2am") stays a time."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.language.questions import QuestionAnalyzer
from agent.language.typos import split_alphanumeric
from agent.reasoners.evidence import EvidenceScorer, ScoredUnit
from agent.retrieval.reading import Passage
from agent.sentence_vectors import SentenceVectors
from agent.sentences import SentenceSplitter
from store.embedded import EmbeddedPostgres
from store.embedding import SentenceTransformerEmbedder
from store.text_analysis import TextAnalyzer
from tests.agent.conftest import Built, built_from, lead, pages_source
from tests.agent.test_hops import MemoryVectors, passage, reasoner, state_for

# Long enough that the budget and the form fall in chunks too far apart to be read as one
# passage (jobs/chunking.py: 150 to 400 words a chunk): none read for the budget says "PD".
_PROVIDERS = "\n\n".join(
    f"### {name}\n\n{name} runs {what} for field and office staff several times a year. "
    "Sessions are booked through the learning team, who keep a waiting list when a session "
    "is full and tell everyone on it as soon as a place opens. Bring your staff number and "
    "a photo card on the day; certificates are sent by email within two weeks of the end "
    "of the session, and a copy is kept on your training record."
    for name, what in [
        ("Northfield College", "evening classes in surveying and drafting"),
        ("Ridgeway Institute", "two-day workshops on site safety and first aid"),
        ("Coastline Academy", "online modules on contract law and procurement"),
        ("Harbour Learning", "weekend seminars on leadership and coaching"),
        ("Summit Training", "short courses on spreadsheets and reporting tools"),
        ("Granite School", "lab methods, sampling and chain of custody refreshers"),
        ("Lakeside Centre", "courses on drone surveys and mapping"),
        ("Westgate College", "classes on project scheduling and estimating"),
        ("Pinecrest Academy", "sessions on writing reports for clients"),
        ("Meridian Institute", "workshops on soil testing standards"),
        ("Bayview School", "modules on environmental permits"),
        ("Oakridge Training", "refreshers on traffic control on site"),
    ]
)

PAGES = [
    (
        "development.md",
        "Learning and development",
        "## Budget\n\nEach employee has a yearly professional development budget of $1,500 "
        "for courses, conferences and books.\n\n## Approved providers\n\n"
        f"{_PROVIDERS}\n\n## Applying\n\nFill in the PD Request form at least three weeks "
        "before the course. Professional development requests are approved by your "
        "manager.",
    ),
    (
        "safety.md",
        "Site safety",
        "## Evacuation\n\nWhen the fire alarm sounds, leave by the nearest exit and go "
        "straight to the assembly point (the staff car park behind the depot).\n\n"
        "## Manual handling\n\nEveryone learns the 20 kg single-person lift limit in the "
        "induction.",
    ),
]


@pytest.fixture(scope="module")
async def site(
    pg_server: EmbeddedPostgres, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[Built]:
    source = pages_source("site", PAGES)
    async for result in built_from(pg_server, embedder, source, "site"):
        yield result


async def test_an_abbreviation_a_page_defines_holds_in_its_other_passages(site: Built) -> None:
    # "PD" stands beside "professional development" only under "Applying"; the budget's
    # passage spells it out. Read passage by passage, "pd" was a word the budget lacked.
    assert await lead(site, "pd budget?") == "$1,500"


async def test_the_point_people_gather_at_is_a_place(site: Built) -> None:
    found = await lead(site, "where do we muster when the fire alarm goes off?")
    assert found is not None and "assembly point" in found and "car park" in found


async def test_a_superlative_of_what_one_may_do_asks_for_the_limit(site: Built) -> None:
    # "heaviest" is no word of the page; "allowed to" makes it the cap the page states.
    found = await lead(site, "what is the heaviest I can lift by myself?")
    assert found is not None and "20 kg" in found


def test_a_time_or_measure_run_together_is_no_code() -> None:
    # "paged at 2am" states a time: split, "am" became a word the answer had to hold.
    def apart(parts: list[str]) -> bool:
        return " ".join(parts) in " page at 2 am lift 10 kg bsl 2 "

    assert split_alphanumeric("2am", apart) is None
    assert split_alphanumeric("10kg", apart) is None
    assert split_alphanumeric("bsl2", apart) == "bsl"


@given(
    st.integers(min_value=0, max_value=9999),
    st.sampled_from(["am", "pm", "PM", "h", "hrs", "min", "kg", "km", "lbs", "th", "nd"]),
)
def test_a_number_with_its_unit_is_never_split(number: int, unit: str) -> None:
    assert split_alphanumeric(f"{number}{unit}", lambda parts: True) is None


async def scored(
    question: str, page: Passage, embedder: SentenceTransformerEmbedder
) -> list[ScoredUnit]:
    """`page`'s units not ruled out for `question`, as the scorer judges them."""
    analyzer = QuestionAnalyzer(TextAnalyzer())
    vectors = SentenceVectors(embedder=embedder, store=MemoryVectors())
    scorer = EvidenceScorer(analyzer=analyzer, splitter=SentenceSplitter(), vectors=vectors)
    return await scorer.score(analyzer.analyse(question), [page])


async def test_an_abbreviation_that_folds_to_a_stop_word_stands_for_nothing(
    embedder: SentenceTransformerEmbedder,
) -> None:
    # "AM" folds to the stop word "am": no stems. As an empty set it was held by every
    # sentence, so each read as naming the account manager; on the handbook "How many
    # projects can one account manager handle at the same time?" was answered by
    # "Ensure that project management tasks are handled".
    page = passage(
        1,
        "Client accounts",
        "Your account manager (AM) is named in your contract. Billing questions are "
        "handled by Finance within two working days.",
    )
    units = {
        u.unit.text: u
        for u in await scored("how many projects can one account manager handle?", page, embedder)
    }
    billing = units["Billing questions are handled by Finance within two working days."]
    assert "handl" in billing.covered
    assert "manag" not in billing.covered  # ("account" is the title's)


async def test_a_gap_says_no_page_mentions_only_a_word_none_read_has(
    embedder: SentenceTransformerEmbedder,
) -> None:
    # "No page found mentions hurt" was said with a page read that speaks of the injured;
    # "mentions think" of a word that is only how the question is put.
    judge = reasoner(embedder)
    read = [
        passage(
            1,
            "Dock rules",
            "Forklifts give way to people on foot at the dock. Injured staff see the first "
            "aider on shift.",
        )
    ]
    for question in [
        "i hurt my hand, does a forklift at the dock need a beacon?",
        "i think every forklift needs a beacon?",
    ]:
        state = state_for(question)
        await judge.extract(0, read, state)
        (gap,) = (await judge.judge(state, [0])).gaps
        assert gap.reason == "no_results" and not state.evidence
        # The rarest word no page read has comes first; never one a page says otherwise.
        assert gap.unheard is not None and gap.unheard[0] == "beacon", question
        assert not {"hurt", "think", "forklift", "dock"} & set(gap.unheard), question


async def test_a_word_of_extent_makes_no_other_kind(embedder: SentenceTransformerEmbedder) -> None:
    # "the full budget" is the training budget asked about, all of it; "sick leave" is
    # another kind of "annual leave", "the full budget" no other kind of budget.
    page = passage(
        1,
        "Learning",
        "Everyone has a training budget of £1,000 a year. Part-time employees receive the "
        "full budget, not a pro-rata amount.",
    )
    question = "is the training budget reduced for part-time staff?"
    units = [u.unit.text for u in await scored(question, page, embedder)]
    assert "Part-time employees receive the full budget, not a pro-rata amount." in units


@pytest.mark.parametrize(
    ("question", "sentence", "elsewhere"),
    [
        ("can I send big files by link?", "Large files are sent by secure link.", "big"),
        ("how much is the raise for a licence?", "Your salary increases by 6% with a licence.", ""),
        ("is there a night premium?", "A night differential of $2 per hour is paid.", ""),
        (
            "any extra leave days after 10 years?",
            "After 10 years you get 3 additional leave days.",
            "extra",
        ),
    ],
)
async def test_a_workplace_word_is_carried_by_its_equivalent(
    question: str, sentence: str, elsewhere: str, embedder: SentenceTransformerEmbedder
) -> None:
    # Each sentence says every key term of its question, one of them by its equivalent.
    # A word the page also uses `elsewhere` is read as written, not by its embedding's
    # nearest word (agent/reasoners/evidence.py `_read_synonyms`): only the table helps.
    text = f"{sentence} The {elsewhere} print is on the notice board." if elsewhere else sentence
    units = {u.unit.text: u for u in await scored(question, passage(1, "Pay", text), embedder)}
    assert units[sentence].coverage == 1.0, units[sentence].covered
