"""The escalation post, its resolved state, the "Escalated by" note and the expert's answer."""

from __future__ import annotations

import re
from typing import Any

from agent.answer import Answer, Citation, Claim, Gap, PageRead
from bot.slack.render import action_ids as ids
from bot.slack.render.blocks import (
    EscalationPost,
    ReplyOptions,
    SlackMessage,
    answer_messages,
    escalation_message,
    escalation_status_blocks,
    expert_answer_messages,
    mark_escalated,
    resolved_escalation_message,
)
from bot.slack.render.limits import violations


def found() -> Answer:
    cited = Citation(1, "Leave", "https://docs.example/leave", "leave.md", 10, 1, "hb", "hr")
    texts = [f"Claim {n} <!channel>. " * 40 for n in range(30)]
    # What the post quotes is each claim's quote (the statement may be a paraphrase).
    claims = tuple(Claim(statement="s", quote=t, citation=1, chunk_id=10) for t in texts)
    gaps = (Gap(sub_question="Carry-over <@U1>?", reason="no_results", detail="not documented"),)
    return Answer("How much leave?", claims, (cited,), "max_steps_reached", True, gaps=gaps)


def post(**fields: Any) -> EscalationPost:
    defaults: dict[str, Any] = {
        "escalation_id": 5,
        "run_id": 77,
        "question": "How much leave <!here> do I carry over?",
        "asker": "U0ASKER",
        "answer": found(),
        "escalated_by": "U0OTHER",
        "channel": "C0HELP",
        "thread_link": "https://acme.slack.com/archives/C0HELP/p123",
        "user_group": "S0EXPERTS",
    }
    return EscalationPost(**{**defaults, **fields})


def all_text(message: SlackMessage) -> str:
    """The fallback and every text string of the blocks, one per line."""
    found = [message.text]

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                found.append(value) if key == "text" and isinstance(value, str) else walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(message.blocks)
    return "\n".join(found)


def tokens(message: SlackMessage) -> set[str]:
    return set(re.findall(r"<[!@#][^>]*>", all_text(message)))


def test_the_post_pings_only_the_configured_group_and_names_the_asker() -> None:
    message = escalation_message(post())
    assert violations(text=message.text, blocks=message.blocks) == []
    assert tokens(message) == {"<!subteam^S0EXPERTS>", "<@U0ASKER>", "<@U0OTHER>", "<#C0HELP>"}
    assert message.text.startswith("<!subteam^S0EXPERTS> Question for a human:")
    body = message.blocks[1]["text"]["text"]
    assert body.startswith("<!subteam^S0EXPERTS> <@U0ASKER> asked in <#C0HELP>:\n> How much")
    assert "<https://acme.slack.com/archives/C0HELP/p123|Open the thread>" in body


def test_the_post_shows_what_was_found_with_citations_and_what_is_missing() -> None:
    text = all_text(escalation_message(post()))
    assert "*What I found*\n• “Claim 0 &lt;!channel&gt;." in text
    assert "[1]" in text and "more in the thread" in text
    assert "*Sources*\n[1] <https://docs.example/leave|Leave>" in text
    assert "*Missing*\n• Carry-over &lt;@U1&gt;? — not documented" in text


def test_a_post_with_nothing_found_names_the_pages_that_came_closest() -> None:
    page = PageRead("PTO", "https://clinic.test/pto", "pto.md", "hr", 4, "Calling out sick")
    nothing = Answer("Can I text?", (), (), "no_better_action", True, closest_pages=(page,))
    text = all_text(escalation_message(post(answer=nothing)))
    assert (
        "*What I found:* nothing grounded in the documents.\n"
        "*Pages that came closest* (not enough to answer from)\n"
        "• <https://clinic.test/pto|PTO> · Calling out sick"
    ) in text


def test_the_post_carries_both_buttons_with_the_run_and_escalation() -> None:
    [row] = [b for b in escalation_message(post()).blocks if b["type"] == "actions"]
    assert [(e["action_id"], e["value"]) for e in row["elements"]] == [
        (ids.ESCALATION_ANSWER, '{"run":77,"escalation":5}'),
        (ids.ESCALATION_RESOLVE, '{"run":77,"escalation":5}'),
    ]
    assert [e["text"]["text"] for e in row["elements"]] == [
        "Answer & add to knowledge base",
        "Mark resolved",
    ]


def test_a_group_or_user_id_from_anywhere_but_an_id_pings_nobody() -> None:
    message = escalation_message(
        post(user_group="S1> <!channel", asker="here", escalated_by=None, channel=None, answer=None)
    )
    assert tokens(message) == set()
    assert "*What I found:* nothing grounded in the documents." in all_text(message)


def test_a_resolved_post_loses_its_buttons_and_says_who_resolved_it() -> None:
    resolved = resolved_escalation_message(post(), resolved_by="U0EXPERT", answered=False)
    assert not [b for b in resolved.blocks if b["type"] == "actions"]
    assert resolved.blocks[-1]["elements"][0]["text"] == "✅ Resolved by <@U0EXPERT>"
    [status] = escalation_status_blocks(
        resolved_by="U0EXPERT", answered=True, answer_link="https://acme.slack.com/p9"
    )
    assert status["elements"][0]["text"] == (
        "✅ Answered by <@U0EXPERT> and added to the knowledge base · "
        "<https://acme.slack.com/p9|the answer>"
    )


def test_marking_a_posted_reply_replaces_the_escalate_button_once() -> None:
    answer = Answer("Q?", (), (), "insufficient_grounding", True, run_id=3)
    [reply] = answer_messages(answer)
    marked = mark_escalated(reply.blocks, escalated_by="U0ABC", link="https://acme.slack.com/p1")
    assert mark_escalated(marked, escalated_by="U0ABC", link="https://acme.slack.com/p1") == marked
    ids_left = [e["action_id"] for b in marked if b["type"] == "actions" for e in b["elements"]]
    assert ids_left == [ids.WHY]
    rendered = answer_messages(
        answer,
        options=ReplyOptions(escalated_by="U0ABC", escalation_link="https://acme.slack.com/p1"),
    )
    assert marked == rendered[-1].blocks


def test_the_expert_answer_is_quoted_escaped_and_credited() -> None:
    messages = expert_answer_messages(
        text="Carry over 240 hours.\n<!channel> see [policy](https://docs.example/p)",
        expert="U0EXPERT",
        escalation_link="https://acme.slack.com/p2",
    )
    [message] = messages
    text = all_text(message)
    assert "💬 <@U0EXPERT> answered:" in text
    assert "> Carry over 240 hours.\n> &lt;!channel&gt; see <https://docs.example/p|policy>" in text
    assert "Added to the knowledge base" in text
    long = expert_answer_messages(text="& " * 3000, expert="U0EXPERT")
    assert all(violations(text=m.text, blocks=m.blocks) == [] for m in long)
