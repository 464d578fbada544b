"""👍 / 👎 as Slack's own `feedback_buttons` element in a `context_actions` block.

Wire format (https://docs.slack.dev/reference/block-kit/block-elements/feedback-buttons-element
and .../blocks/context-actions-block): one element with a `positive_button` and a
`negative_button`, each a plain_text label, a `value` and an optional accessibility label.
A click arrives as a block_actions payload whose action has `type: feedback_buttons`, the
element's `action_id`, and the `value` of the button pressed. Both values carry the run
(bot/slack/render/action_ids.py's JSON) behind a vote prefix, so the one action id tells 👍 from 👎.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.slack.render import action_ids as ids
from bot.slack.render.action_ids import ActionValue, ActionValueError, parse_action_value

Block = dict[str, Any]

FEEDBACK = "kb_feedback"
_UP, _DOWN = "up:", "down:"


def feedback_block(*, run_id: int) -> Block:
    """The context_actions block with the feedback_buttons element for this run."""
    value = ids.action_value(run=run_id)
    return {
        "type": "context_actions",
        "elements": [
            {
                "type": "feedback_buttons",
                "action_id": FEEDBACK,
                "positive_button": {
                    "text": {"type": "plain_text", "text": "👍"},
                    "value": _UP + value,
                    "accessibility_label": "This answer helped",
                },
                "negative_button": {
                    "text": {"type": "plain_text", "text": "👎"},
                    "value": _DOWN + value,
                    "accessibility_label": "This answer did not help",
                },
            }
        ],
    }


@dataclass(frozen=True, slots=True)
class FeedbackVote:
    vote: int  # 1 or -1, as the feedback table stores it
    value: ActionValue


def vote_of(action: Mapping[str, Any]) -> FeedbackVote | None:
    """The vote a feedback_buttons action carries; None for a value this bot did not write."""
    raw = action.get("value")
    if not isinstance(raw, str):
        return None
    for prefix, vote in ((_UP, 1), (_DOWN, -1)):
        if raw.startswith(prefix):
            try:
                return FeedbackVote(vote, parse_action_value(raw[len(prefix) :]))
            except ActionValueError:
                return None
    return None
