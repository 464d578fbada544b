"""Answers as Slack messages: limits, escaping, splitting, conflicts, gaps and buttons."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from agent.answer import Answer, Citation, Claim, Conflict, Gap, PageRead
from bot.slack.render import action_ids as ids
from bot.slack.render.blocks import (
    NOT_COVERED,
    EscalationPost,
    ReplyOptions,
    SlackMessage,
    answer_messages,
    claim_mrkdwn,
    escalation_message,
    failure_message,
    help_message,
    placeholder_message,
)
from bot.slack.render.feedback_buttons import FEEDBACK, FeedbackVote, vote_of
from bot.slack.render.limits import SECTION_TEXT, violations


def citation(number: int, *, url: str | None = None, updated: datetime | None = None) -> Citation:
    return Citation(
        number=number,
        title=f"Document {number}",
        url=url if url is not None else f"https://docs.example/{number}",
        uri=f"doc-{number}.md",
        chunk_id=number * 10,
        document_id=number,
        source="handbook",
        collection="hr",
        section=f"Part {number}",
        updated_at=updated,
    )


def claim(text: str, *, cited: int = 1, quote: str | None = None) -> Claim:
    return Claim(statement=text, quote=quote or text, citation=cited, chunk_id=cited * 10)


def answer(claims: tuple[Claim, ...], **fields: Any) -> Answer:
    cited = sorted({c.citation for c in claims}) or [1]
    defaults: dict[str, Any] = {
        "question": "How do I request leave?",
        "claims": claims,
        "citations": tuple(citation(n) for n in cited),
        "stop_reason": "enough_evidence",
        "escalate": False,
        "run_id": 7,
    }
    return Answer(**{**defaults, **fields})


def texts(message: SlackMessage) -> list[str]:
    """Every text string of the message's blocks, in order."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                found.append(value) if key == "text" and isinstance(value, str) else walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(message.blocks)
    return found


def buttons(message: SlackMessage) -> dict[str, dict[str, Any]]:
    return {
        element["action_id"]: element
        for block in message.blocks
        if block["type"] == "actions"
        for element in block["elements"]
    }


def test_a_60_claim_answer_respects_every_block_kit_limit() -> None:
    claims = tuple(
        claim(
            f"Claim {n}: " + "Leave is requested in HRLinks before it is taken. " * 12,
            cited=n % 5 + 1,
        )
        for n in range(60)
    )
    messages = answer_messages(answer(claims))
    assert len(messages) > 1
    for message in messages:
        assert violations(text=message.text, blocks=message.blocks) == []
        assert json.loads(json.dumps(message.post_kwargs()))["blocks"] == message.blocks
        assert message.unfurl_links is False and message.unfurl_media is False
    shown = "\n".join(t for m in messages for t in texts(m))
    for n in range(60):
        assert shown.count(f"Claim {n}: ") == 1
    assert [bool(buttons(m)) for m in messages] == [False] * (len(messages) - 1) + [True]
    assert messages[1].blocks[0]["elements"][0]["text"] == f"_Answer, part 2 of {len(messages)}_"


def test_document_text_with_channel_and_user_mentions_renders_inert() -> None:
    hostile = "Ping <!channel> and <@U123> in <#C1>, <!subteam^S1|@all>, <https://evil.example|ok>"
    cited = citation(1, url="https://docs.example/<!here>")
    messages = answer_messages(
        answer(
            (claim(hostile),),
            citations=(cited,),
            question="<!everyone>?",
            gaps=(Gap(sub_question="<@U999>", reason="no_results", detail="<!here>"),),
        )
    )
    for message in messages:
        for text in [message.text, *texts(message)]:
            assert not re.search(r"<[!@#]", text), text
            for token in re.findall(r"<([^>]*)>", text):
                assert re.match(r"https://docs\.example/", token), token
        assert "&lt;!channel&gt;" in json.dumps(message.blocks)
        mrkdwn = [
            obj
            for block in message.blocks
            for obj in [block.get("text"), *block.get("elements", [])]
            if isinstance(obj, dict) and obj.get("type") == "mrkdwn"
        ]
        assert mrkdwn and all(obj["verbatim"] is True for obj in mrkdwn)
    assert "https://docs.example/%3C!here%3E" in json.dumps(messages[0].blocks)


def test_a_claim_links_its_number_to_the_cited_url_and_sources_list_it() -> None:
    cited = citation(1, url="https://docs.example/leave?a=1&b=2", updated=datetime(2024, 5, 1))
    [message] = answer_messages(
        answer((claim("Leave is requested in HRLinks."),), citations=(cited,))
    )
    body = "\n".join(texts(message))
    assert "• “Leave is requested in HRLinks.” <https://docs.example/leave?a=1&amp;b=2|[1]>" in body
    assert (
        "*Sources*\n[1] <https://docs.example/leave?a=1&amp;b=2|Document 1> · Part 1 · "
        "updated 2024-05-01"
    ) in body


def test_a_statement_that_differs_from_its_quote_shows_the_quote_beneath() -> None:
    paraphrase = claim("You request leave in HRLinks.", quote="Submit requests in\nHRLinks.")
    [message] = answer_messages(answer((paraphrase,)))
    assert (
        "• You request leave in HRLinks. <https://docs.example/1|[1]>\n"
        "> Submit requests in\n> HRLinks."
    ) in texts(message)


def test_a_conflict_shows_both_sides_their_dates_and_the_newer_one() -> None:
    old = citation(1, updated=datetime(2021, 3, 1, tzinfo=UTC))
    new = citation(2, updated=datetime(2024, 6, 1, tzinfo=UTC))
    claims = (claim("You get 10 days.", cited=1), claim("You get 12 days.", cited=2))
    conflict = Conflict(
        sub_question="How many days?", claims=(0, 1), newer=2, detail="Policy changed."
    )
    [message] = answer_messages(answer(claims, citations=(old, new), conflicts=(conflict,)))
    [note] = [t for t in texts(message) if t.startswith("*Sources disagree:*")]
    assert note == (
        "*Sources disagree:* How many days?\n"
        "• <https://docs.example/1|[1]> “You get 10 days.” — Document 1 (updated 2021-03-01)\n"
        "• <https://docs.example/2|[2]> “You get 12 days.” — Document 2 (updated 2024-06-01)\n"
        "Newer: [2] Document 2 (updated 2024-06-01)\n"
        "Policy changed."
    )


def test_an_answer_of_many_small_blocks_is_split_by_block_count() -> None:
    # Short notes hold less text than one message may, but more blocks; every count from
    # 40 to 120 puts the last message's closing blocks (note and buttons) at the limit once.
    escalated = ReplyOptions(escalated_by="U0ABC", escalation_link="https://x.slack.com/p1")
    for count in range(40, 121):
        conflicts = tuple(Conflict(f"Point {n}?", ()) for n in range(count))
        messages = answer_messages(answer((claim("A."),), conflicts=conflicts), options=escalated)
        for message in messages:
            assert violations(text=message.text, blocks=message.blocks) == [], count
        notes = [t for m in messages for t in texts(m) if t.startswith("*Sources disagree:*")]
        assert [note.split("\n")[0] for note in notes] == [
            f"*Sources disagree:* Point {n}?" for n in range(count)
        ]


def test_a_conflict_without_dates_says_the_dates_do_not_tell() -> None:
    claims = (claim("A.", cited=1), claim("B.", cited=2))
    conflict = Conflict(sub_question="Which?", claims=(0, 1, 9))  # 9: no such claim
    [message] = answer_messages(answer(claims, conflicts=(conflict,)))
    [note] = [t for t in texts(message) if t.startswith("*Sources disagree:*")]
    assert note.count("\n• ") == 2 and note.endswith("Their dates don't say which is newer.")


def test_an_answer_that_found_nothing_says_so_with_what_is_missing() -> None:
    gap = Gap(
        sub_question="How do I request leave?", reason="too_weak", detail="nothing close enough"
    )
    [message] = answer_messages(
        answer((), citations=(), escalate=True, stop_reason="insufficient_grounding", gaps=(gap,))
    )
    assert texts(message)[:2] == [NOT_COVERED, "*Not found*\n• nothing close enough"]
    assert ids.ESCALATE in buttons(message)
    assert message.text == NOT_COVERED


PTO_PAGE = PageRead(
    "PTO <!channel>", "https://clinic.test/pto", "pto.md", "hr", 42, "Calling out sick"
)


def test_an_answer_that_found_nothing_points_to_the_pages_that_came_closest() -> None:
    gap = Gap("can I text that I'm sick?", "no_results", "No page found mentions text.")
    bare = PageRead("Payroll", None, "payroll.md", "hr", 7)
    [message] = answer_messages(
        answer((), citations=(), escalate=True, gaps=(gap,), closest_pages=(PTO_PAGE, bare))
    )
    assert texts(message)[:3] == [
        NOT_COVERED,
        "*Not found*\n• can I text that I'm sick? — No page found mentions text.",
        "*Pages that came closest* (not enough to answer from)\n"
        "• <https://clinic.test/pto|PTO &lt;!channel&gt;> · Calling out sick\n• Payroll",
    ]
    assert violations(text=message.text, blocks=message.blocks) == []
    assert not any(t.startswith("*Sources*") for t in texts(message))


def test_an_answer_with_claims_shows_its_sources_not_the_closest_pages() -> None:
    [message] = answer_messages(answer((claim("Phone your manager."),), closest_pages=(PTO_PAGE,)))
    assert not any("came closest" in t for t in texts(message))


def test_a_blank_reply_is_no_reply_and_slack_gets_no_empty_text() -> None:
    [message] = answer_messages(answer((), citations=(), reply=" \n "))
    assert texts(message)[0] == NOT_COVERED and message.text == NOT_COVERED
    assert violations(text=message.text, blocks=message.blocks) == []


def test_a_conversational_reply_is_shown_without_not_found() -> None:
    [message] = answer_messages(
        answer((), citations=(), reply="You're welcome!", stop_reason="no_retrieval_needed")
    )
    assert texts(message)[0] == "You're welcome!" and NOT_COVERED not in texts(message)


def test_an_escalated_reply_shows_who_escalated_instead_of_the_button() -> None:
    options = ReplyOptions(
        escalated_by="U0ABC", escalation_link="https://x.slack.com/archives/C1/p1"
    )
    [message] = answer_messages(answer((claim("A."),), escalate=True), options=options)
    assert (
        "🙋 Escalated by <@U0ABC> → <https://x.slack.com/archives/C1/p1|escalation thread>"
        in texts(message)
    )
    assert ids.ESCALATE not in buttons(message)
    assert set(buttons(message)) == {ids.WHY}


def test_an_escalation_by_a_forged_user_id_mentions_nobody() -> None:
    options = ReplyOptions(escalated_by="U1> <!channel", escalation_link="javascript:alert(1)")
    [message] = answer_messages(answer((claim("A."),)), options=options)
    assert "🙋 Escalated to a human → escalation thread" in texts(message)


@pytest.mark.parametrize(
    ("escalate", "always", "shown"),
    [(False, False, False), (True, False, True), (False, True, True), (True, True, True)],
)
def test_the_escalate_button_appears_only_when_flagged_or_always_offered(
    escalate: bool, always: bool, shown: bool
) -> None:
    options = ReplyOptions(always_offer_escalation=always)
    [message] = answer_messages(answer((claim("A."),), escalate=escalate), options=options)
    assert (ids.ESCALATE in buttons(message)) is shown
    assert ids.WHY in buttons(message)


def test_buttons_carry_the_run_and_votes_are_slacks_feedback_buttons_last() -> None:
    [message] = answer_messages(answer((claim("A."),)), options=ReplyOptions(run_id=99))
    found = buttons(message)
    assert {b["value"] for b in found.values()} == {'{"run":99}'}
    assert [b["text"]["text"] for b in found.values()] == ["Why this answer?"]
    # The element as https://docs.slack.dev/reference/block-kit/block-elements/feedback-buttons-element
    # shows it, alone in the context_actions block that closes the message.
    assert message.blocks[-1] == {
        "type": "context_actions",
        "elements": [
            {
                "type": "feedback_buttons",
                "action_id": FEEDBACK,
                "positive_button": {
                    "text": {"type": "plain_text", "text": "👍"},
                    "value": 'up:{"run":99}',
                    "accessibility_label": "This answer helped",
                },
                "negative_button": {
                    "text": {"type": "plain_text", "text": "👎"},
                    "value": 'down:{"run":99}',
                    "accessibility_label": "This answer did not help",
                },
            }
        ],
    }
    element = message.blocks[-1]["elements"][0]
    assert vote_of({"value": element["positive_button"]["value"]}) == FeedbackVote(
        1, ids.ActionValue(run=99)
    )
    assert vote_of({"value": element["negative_button"]["value"]}).vote == -1  # type: ignore[union-attr]
    assert vote_of({"value": 'up:{"run":"1; DROP"}'}) is None
    assert vote_of({"value": "positive_feedback"}) is None


def test_an_answer_without_a_run_has_no_buttons() -> None:
    [message] = answer_messages(answer((claim("A."),), run_id=None))
    assert buttons(message) == {}


def test_a_claim_longer_than_a_section_is_cut_into_sections_of_its_own() -> None:
    long_quote = " ".join(f"Sentence {n} of the long policy." for n in range(200))
    claims = (claim("Short one."), claim(long_quote, cited=1), claim("Short two."))
    [message] = answer_messages(answer(claims))
    sections = [t for t in texts(message) if "Sentence" in t or "Short" in t]
    assert sections[0] == "• “Short one.” <https://docs.example/1|[1]>"
    assert sections[-1] == "• “Short two.” <https://docs.example/1|[1]>"
    middle = sections[1:-1]
    assert len(middle) >= 2 and all(len(s) <= SECTION_TEXT for s in middle)
    assert all(s.rstrip("”").rstrip().endswith(("policy.", "[1]>")) for s in middle)
    assert " ".join(middle).startswith("• “Sentence 0 of") and "Short" not in " ".join(middle)


def test_a_long_quote_keeps_its_quote_marker_on_every_continued_section() -> None:
    long_quote = " ".join(f"Sentence {n} of the long policy." for n in range(200))
    [message] = answer_messages(answer((claim("The policy says:", quote=long_quote),)))
    parts = [t for t in texts(message) if "Sentence" in t]
    assert parts[0].startswith("• The policy says: <https://docs.example/1|[1]>\n> Sentence 0")
    assert all(part.startswith("> ") for part in parts[1:])


def test_a_claim_longer_than_a_message_has_messages_of_its_own() -> None:
    enormous = " ".join(f"Clause {n} of the enormous rule." for n in range(1000))
    claims = (claim("Before."), claim(enormous), claim("After."))
    messages = answer_messages(answer(claims))
    holding = [i for i, m in enumerate(messages) if any("Clause" in t for t in texts(m))]
    assert len(holding) >= 3 and holding == list(range(holding[0], holding[-1] + 1))
    for index in holding:
        assert not any("Before." in t or "After." in t for t in texts(messages[index]))
        assert violations(text=messages[index].text, blocks=messages[index].blocks) == []


def test_an_answer_splits_the_same_way_before_and_after_it_is_escalated() -> None:
    claims = tuple(claim(f"Claim {n} " + "word " * 300) for n in range(40))
    before = answer_messages(answer(claims, escalate=True))
    after = answer_messages(
        answer(claims, escalate=True), options=ReplyOptions(escalated_by="U1AB")
    )
    assert len(before) == len(after) > 1
    assert [m.blocks for m in before[:-1]] == [m.blocks for m in after[:-1]]
    assert all(violations(text=m.text, blocks=m.blocks) == [] for m in after)


def test_the_placeholder_says_it_is_searching_and_which_step_it_is_on() -> None:
    assert placeholder_message().text == "Searching the knowledge base…"
    step = placeholder_message(step="Searching: <!here> leave")
    assert step.blocks[1]["elements"][0]["text"] == "Now: Searching: &lt;!here&gt; leave"
    queued = placeholder_message(queue_position=3)
    assert queued.text.startswith("You're number 3 in the queue")


def test_a_failure_is_one_plain_line_with_the_run_id() -> None:
    message = failure_message(run_id=41)
    [block] = message.blocks
    assert block["text"]["text"] == message.text and "(run 41)" in message.text
    assert "\n" not in message.text and "no run was recorded" in failure_message(run_id=None).text


def test_help_lists_the_command_forms() -> None:
    message = help_message()
    [text] = texts(message)
    for form in ("`/kb &lt;question&gt;`", "`/kb private &lt;question&gt;`", "`/kb help`"):
        assert form in text
    assert violations(text=message.text, blocks=message.blocks) == []
    for simple in (placeholder_message(step="x" * 5000), failure_message(run_id=1)):
        assert violations(text=simple.text, blocks=simple.blocks) == []


def test_only_a_verbatim_quote_is_ever_inside_quotation_marks() -> None:
    # Claude's statement is a paraphrase; in the bullets, the conflict lines and the
    # escalation post, what stands between “ and ” is the quote, never the statement.
    claims = (
        claim("Ten days a year.", cited=1, quote="You get 10 days of leave."),
        claim("Twelve days a year.", cited=2, quote="You get 12 days of leave."),
    )
    conflict = Conflict(sub_question="How many days?", claims=(0, 1))
    shown = answer(claims, citations=(citation(1), citation(2)), conflicts=(conflict,))
    escalation = escalation_message(
        EscalationPost(
            escalation_id=1,
            run_id=2,
            question="How many days?",
            asker="U0ASKER",
            answer=shown,
            escalated_by=None,
            channel="C0HELP",
            thread_link="https://acme.slack.com/archives/C0HELP/p1",
            user_group=None,
        )
    )
    everything = [t for m in [*answer_messages(shown), escalation] for t in texts(m)]
    quoted = {q for t in everything for q in re.findall(r"“([^”]*)”", t)}
    assert quoted == {"You get 10 days of leave.", "You get 12 days of leave."}


def test_a_claim_with_an_answer_span_leads_with_it_in_bold_before_its_quote() -> None:
    answer = Answer(
        question="How many credit hours can I carry over?",
        claims=(
            Claim(
                "You may carry over up to 24 credit hours.",
                "You may carry over up to 24 credit hours.",
                1,
                7,
                span="up to 24 credit hours",
            ),
        ),
        citations=(
            Citation(1, "Overtime", "https://kb.test/overtime", "overtime.md", 7, 1, "hb", "hb"),
        ),
        stop_reason="enough_evidence",
        escalate=False,
    )
    text = claim_mrkdwn(answer.claims[0], answer)
    assert text.startswith(
        "• *up to 24 credit hours* — “You may carry over up to 24 credit hours.”"
    )
    # a span that is the whole quote (a list with its lead-in) is not shown twice
    whole = Claim("Do this:\n- a\n- b", "Do this:\n- a\n- b", 1, 7, span="Do this:\n- a\n- b")
    assert claim_mrkdwn(whole, answer).count("Do this:") == 1
