"""Button values and modal metadata: small JSON this bot wrote, and nothing else accepted."""

from __future__ import annotations

import json

import pytest

from bot.slack.render import action_ids as actions
from bot.slack.render.action_ids import (
    ActionValue,
    ActionValueError,
    action_value,
    parse_action_value,
)


def test_a_value_names_its_run_and_reads_back() -> None:
    assert action_value(run=123) == '{"run":123}'
    assert parse_action_value(action_value(run=123)) == ActionValue(run=123)
    assert parse_action_value(action_value(run=5, escalation=7)) == ActionValue(5, 7)


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (None, "must be a string"),
        ("", "not JSON"),
        ("run=1", "not JSON"),
        ("[1]", "JSON object"),
        ('{"escalation": 3}', "names no run"),
        ('{"run": "1"}', "positive integer"),
        ('{"run": true}', "positive integer"),
        ('{"run": 0}', "positive integer"),
        ('{"run": -4}', "positive integer"),
        ('{"run": 1.5}', "positive integer"),
        ('{"run": 99999999999999999999}', "beyond a bigint"),
        ('{"run": 1, "escalation": null, "admin": true}', "unknown keys: admin"),
        ('{"run": 1, "pad": "' + "x" * 2000 + '"}', "over 2000"),
        ("[" * 1500 + "]" * 1500, "over 2000"),
        ("[" * 999 + "]" * 999, "nested too deeply"),
    ],
)
def test_a_malformed_or_oversized_value_is_rejected_with_the_reason(raw: object, says: str) -> None:
    with pytest.raises(ActionValueError, match=says):
        parse_action_value(raw)


def test_writing_a_value_for_no_real_run_is_refused() -> None:
    with pytest.raises(ActionValueError):
        action_value(run=0)


def test_every_action_and_callback_id_is_distinct_and_namespaced() -> None:
    names = [v for k, v in vars(actions).items() if k.isupper() and isinstance(v, str)]
    assert len(names) == len(set(names))
    assert all(name.startswith("kb_") and len(name) <= 255 for name in names)
    assert json.loads(action_value(run=1)) == {"run": 1}
