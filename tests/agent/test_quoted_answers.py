"""Which quotes an answer is given (issue 24: quote the answer phrase, cite the right page).

The choice of claims for a sub-question: a page named by the question or the best quote
is quoted first, so what counts as naming a page decides which quotes fill the places;
and a chat message's parts are sub-questions only where they ask. Each test fails with
its rule reverted.
"""

from __future__ import annotations

import dataclasses

import pytest

from agent.language.spans import find_span
from agent.reasoners.extractive import ExtractiveReasoner
from tests.agent.test_hops import _bare, evidence, state_for


def test_a_word_of_a_link_address_does_not_name_a_page() -> None:
    # The best quote links a Slack channel: its address holds ".../channels/...", and a
    # page titled "Channels" is no more named by it than by any other URL. The steps on
    # the page that answers ("We will: … 3. Email to all of the team") keep their place
    # instead of the channel list's lines.
    state = state_for("how do I get an announcement sent out to all of the team?")
    best = evidence(
        1,
        "Internal hiring",
        "It will be shared in [#jobs](https://team.slack.com/channels/jobs) on Slack.",
        1.23,
        frozenset({"all", "sent", "team"}),
    )
    need = evidence(
        2, "Outreach", "You might need to get a message to all of the team.", 1.19, frozenset()
    )
    steps = evidence(
        2,
        "Outreach",
        "We will:\n\n1. Copyedit the message\n2. Email to all of the team",
        1.15,
        frozenset(),
    )
    crosspost = evidence(
        3, "Channels", "#email-crosspost - announcements from e-mails", 1.07, frozenset({"announc"})
    )
    news = evidence(3, "Channels", "#news-all for all announcements", 0.86, frozenset({"get"}))
    state.evidence = [
        dataclasses.replace(best, support="strong"),
        dataclasses.replace(need, support="strong", chunk_id=21),
        dataclasses.replace(steps, support="strong", chunk_id=22),
        dataclasses.replace(crosspost, chunk_id=31),
        dataclasses.replace(news, chunk_id=32),
    ]
    claims = ExtractiveReasoner._claims_for(_bare(), 0, state)
    assert 22 in [c.chunk_id for c in claims], [c.quote for c in claims]
    # A page the prose names (the link's text, or plain words) still comes first.
    state.evidence[0] = dataclasses.replace(
        state.evidence[0], quote="See [Channels](https://team.slack.com/x) for the list."
    )
    claims = ExtractiveReasoner._claims_for(_bare(), 0, state)
    assert [c.chunk_id for c in claims][:2] == [10, 31]


@pytest.mark.parametrize(
    ("question", "plan"),
    [
        # A part that tells is the scene of the question before it.
        (
            "do I really have to attend every onboarding class? one conflicts with a "
            "project meeting",
            [
                "do I really have to attend every onboarding class? one conflicts with a "
                "project meeting"
            ],
        ),
        (
            "can I expense a hotel upgrade? the conference hotel is sold out.",
            ["can I expense a hotel upgrade? the conference hotel is sold out."],
        ),
        # Parts that ask stay sub-questions of their own, with or without a mark.
        (
            "how long is parental leave? who approves telework",
            ["how long is parental leave?", "who approves telework"],
        ),
    ],
)
async def test_a_part_that_only_tells_is_the_scene_of_the_question_before(
    question: str, plan: list[str]
) -> None:
    assert [p.text for p in await _bare().decompose(question)] == plan


@pytest.mark.parametrize(
    ("question", "plan"),
    [
        # A later part that refers back with few words of its own is asked of the
        # subject the message named once.
        (
            "where's the chicago office and what floor are we on?",
            ["where's the chicago office?", "chicago office. what floor are we on?"],
        ),
        (
            "how long is parental leave? who approves it?",
            ["how long is parental leave?", "parental leave. who approves it?"],
        ),
        # A part naming its own subject, and the sides of a comparison, stay as they are.
        (
            "how long is parental leave? who approves telework requests for contractors?",
            [
                "how long is parental leave?",
                "who approves telework requests for contractors?",
            ],
        ),
        (
            "What is the difference between annual leave and sick leave?",
            ["annual leave", "sick leave"],
        ),
    ],
)
async def test_a_part_that_refers_back_is_asked_of_the_subject_named_before(
    question: str, plan: list[str]
) -> None:
    assert [p.text for p in await _bare().decompose(question)] == plan


async def test_the_subject_a_part_refers_back_to_is_a_term_its_answer_must_hold() -> None:
    # Judged alone, "what floor are we on?" is answered by any office's floor; led by its
    # subject, a floor of the Chicago office (its page's title) is what it asks.
    analyzer = _bare()._analyzer
    plan = await _bare().decompose("where's the chicago office and what floor are we on?")
    asked = analyzer.analyse(plan[1].text)
    assert {"chicago", "floor"} <= asked.key_terms
    assert asked.answer_type == analyzer.analyse("what floor are we on?").answer_type


def test_an_instruction_after_its_condition_answers_a_yes_no_question() -> None:
    # "Do I have to …?" is answered by what to do in the asker's case; the instruction
    # follows its condition, so it opens with "If", not with its verb.
    question = "do I really have to attend every onboarding class?"
    instruction = "If you have a conflicting meeting, prioritize your project work first!"
    assert find_span(instruction, "yes_no", question)
    # A main clause with a subject states, it does not instruct (and says no yes or no).
    statement = "If you have a conflicting meeting, your supervisor decides."
    assert not find_span(statement, "yes_no", question)
