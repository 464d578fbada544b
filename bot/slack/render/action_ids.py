"""Every action id and view callback id the bot's messages and views use, and their values.

Listeners match on these names and the renderers emit them, so both import them from
here. A button's `value` (and a modal's `private_metadata`) is small JSON naming the run
and, on escalation messages, the escalation: `{"run": 123}`, `{"run": 123, "escalation":
7}`. It comes back from Slack inside a request anyone could forge, so `parse_action_value`
accepts exactly that shape and nothing else.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

# Buttons on an answer.
FEEDBACK_UP = "kb_feedback_up"
FEEDBACK_DOWN = "kb_feedback_down"
WHY = "kb_why"
ESCALATE = "kb_escalate"

# Buttons on an escalation post.
ESCALATION_RESOLVE = "kb_escalation_resolve"
ESCALATION_ANSWER = "kb_escalation_answer"

# Modals (view callback ids) and their one input each (block id, action id).
EXPERT_ANSWER_MODAL = "kb_expert_answer_modal"
EXPERT_ANSWER_BLOCK = "kb_expert_answer"
EXPERT_ANSWER_INPUT = "kb_expert_answer_text"
FEEDBACK_COMMENT_MODAL = "kb_feedback_comment_modal"
FEEDBACK_COMMENT_BLOCK = "kb_feedback_comment"
FEEDBACK_COMMENT_INPUT = "kb_feedback_comment_text"

ANSWER_ACTIONS = (FEEDBACK_UP, FEEDBACK_DOWN, WHY, ESCALATE)
ESCALATION_ACTIONS = (ESCALATION_RESOLVE, ESCALATION_ANSWER)

# Block Kit allows 2,000 characters in a button value; ours are a few dozen.
MAX_VALUE_CHARS = 2000
_KEYS = frozenset({"run", "escalation"})


class ActionValueError(ValueError):
    """A button value or private_metadata that this bot did not write."""


@dataclass(frozen=True, slots=True)
class ActionValue:
    run: int
    escalation: int | None = None


def action_value(*, run: int, escalation: int | None = None) -> str:
    """The compact JSON carried by a button or a modal: `{"run": 123}`."""
    data: dict[str, int] = {"run": _positive(run, "run")}
    if escalation is not None:
        data["escalation"] = _positive(escalation, "escalation")
    return json.dumps(data, separators=(",", ":"))


def parse_action_value(raw: object) -> ActionValue:
    """Read back what `action_value` wrote; anything else raises ActionValueError."""
    if not isinstance(raw, str):
        raise ActionValueError(f"action value must be a string, not {type(raw).__name__}")
    if len(raw) > MAX_VALUE_CHARS:
        raise ActionValueError(f"action value is {len(raw)} characters, over {MAX_VALUE_CHARS}")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ActionValueError(f"action value is not JSON: {exc.msg}") from None
    except RecursionError:
        raise ActionValueError("action value is nested too deeply") from None
    if not isinstance(data, dict):
        raise ActionValueError('action value must be a JSON object such as {"run": 123}')
    unknown = set(data) - _KEYS
    if unknown:
        raise ActionValueError(f"action value has unknown keys: {', '.join(sorted(unknown))}")
    if "run" not in data:
        raise ActionValueError("action value names no run")
    escalation = data.get("escalation")
    return ActionValue(
        run=_positive(data["run"], "run"),
        escalation=None if escalation is None else _positive(escalation, "escalation"),
    )


def _positive(number: object, name: str) -> int:
    # bool is an int in Python; `true` is not a run id.
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise ActionValueError(f"{name} must be a positive integer, not {repr(number)[:40]}")
    if number > 2**63 - 1:
        raise ActionValueError(f"{name} {number} is beyond a bigint")
    return number
