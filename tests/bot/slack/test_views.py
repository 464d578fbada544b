"""The App Home tab and the two modals, and reading a submitted modal back."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.slack.render import action_ids as ids
from bot.slack.render.action_ids import ActionValue, ActionValueError
from bot.slack.render.limits import view_violations
from bot.slack.render.views import (
    ExpertAnswerForm,
    FeedbackCommentForm,
    HomeContent,
    KnowledgeGap,
    RecentQuestion,
    SourceSummary,
    expert_answer_modal,
    feedback_comment_modal,
    home_view,
    submitted_text,
    view_value,
)


def texts(view: dict) -> str:  # type: ignore[type-arg]
    return "\n".join(
        obj["text"]
        for block in view["blocks"]
        for obj in [block.get("text"), *block.get("elements", []), block.get("label")]
        if isinstance(obj, dict) and isinstance(obj.get("text"), str)
    )


def test_the_home_tab_says_what_the_bot_knows_how_to_ask_and_your_questions() -> None:
    view = home_view(
        HomeContent(
            sources=[
                SourceSummary("handbook", "hr", 120),
                SourceSummary("policies", "hr", 1),
                SourceSummary("eng-docs <!channel>", "engineering", 1),
            ],
            last_reindex=datetime(2024, 5, 1, 6, 30, tzinfo=UTC),
            recent_questions=[
                RecentQuestion(
                    "How do I request leave?", datetime(2024, 5, 2), "https://a.slack.com/p1"
                ),
                RecentQuestion("<!here> travel?"),
            ],
        )
    )
    assert view["type"] == "home" and view_violations(view) == []
    text = texts(view)
    assert "• *engineering* — 1 document from eng-docs &lt;!channel&gt;" in text
    assert "• *hr* — 121 documents from handbook, policies" in text
    # Each viewer sees their own time zone; UTC where Slack cannot (the fallback text).
    assert (
        "Last successful reindex: <!date^1714545000^{date_short_pretty} at {time}"
        "|2024-05-01 06:30 UTC>" in text
    )
    assert "`/kb private &lt;question&gt;` answers only you" in text
    stamp = int(datetime(2024, 5, 2).timestamp())
    assert (
        f"• <https://a.slack.com/p1|How do I request leave?> · "
        f"<!date^{stamp}^{{date_short_pretty}}|2024-05-02>" in text
    )
    assert "Knowledge gaps" not in text  # not an admin
    assert "• &lt;!here&gt; travel?" in text


def test_an_empty_home_tab_says_nothing_is_indexed_yet() -> None:
    text = texts(home_view(HomeContent()))
    assert "Nothing is indexed yet." in text and "No reindex has finished yet." in text
    many = HomeContent(
        sources=[SourceSummary(f"s{n}", f"collection-{n}", n) for n in range(500)],
        recent_questions=[
            RecentQuestion("q" * 500, link="https://a.slack.com/p") for _ in range(500)
        ],
    )
    assert view_violations(home_view(many)) == []


def test_the_expert_modal_is_one_multiline_input_that_remembers_the_escalation() -> None:
    view = expert_answer_modal(ExpertAnswerForm(escalation_id=5, run_id=77, question="Q <!here>?"))
    assert view_violations(view) == []
    assert view["callback_id"] == ids.EXPERT_ANSWER_MODAL
    assert view_value(view) == ActionValue(run=77, escalation=5)
    [field] = [b for b in view["blocks"] if b["type"] == "input"]
    assert field["block_id"] == ids.EXPERT_ANSWER_BLOCK
    assert field["element"]["type"] == "plain_text_input" and field["element"]["multiline"] is True
    assert "*Question:* Q &lt;!here&gt;?" in texts(view)


def test_the_feedback_modal_asks_for_an_optional_comment() -> None:
    view = feedback_comment_modal(FeedbackCommentForm(run_id=8))
    assert view_violations(view) == [] and view["callback_id"] == ids.FEEDBACK_COMMENT_MODAL
    [field] = [b for b in view["blocks"] if b["type"] == "input"]
    assert field["optional"] is True and view_value(view) == ActionValue(run=8)


def test_a_submission_is_read_back_and_a_forged_one_rejected() -> None:
    submitted = {
        "private_metadata": '{"run":77,"escalation":5}',
        "state": {
            "values": {
                ids.EXPERT_ANSWER_BLOCK: {
                    ids.EXPERT_ANSWER_INPUT: {
                        "type": "plain_text_input",
                        "value": "  Carry over 240 hours.  ",
                    }
                }
            }
        },
    }
    text = submitted_text(
        submitted, block_id=ids.EXPERT_ANSWER_BLOCK, action_id=ids.EXPERT_ANSWER_INPUT
    )
    assert text == "Carry over 240 hours."
    assert submitted_text({}, block_id="x", action_id="y") == ""
    with pytest.raises(ActionValueError):
        view_value({"private_metadata": '{"run": "77; DROP TABLE"}'})


def test_an_admins_home_tab_lists_the_knowledge_gaps() -> None:
    gaps = [KnowledgeGap("How do I get a parking permit?", 3), KnowledgeGap("<!here> vpn?", 1)]
    view = home_view(HomeContent(gaps=gaps))
    text = texts(view)
    assert view_violations(view) == []
    assert "• How do I get a parking permit? — 3 times" in text
    assert "• &lt;!here&gt; vpn? — 1 time" in text
    assert "No questions escalated" in texts(home_view(HomeContent(gaps=[])))
