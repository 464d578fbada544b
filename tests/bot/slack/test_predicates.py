"""The pure decisions over payloads, on the real payload files."""

from __future__ import annotations

import pytest

from bot.slack.transport.predicates import (
    CommandKind,
    Route,
    delivery_key,
    event_of,
    is_dm,
    is_noise,
    is_thread_reply,
    mentions,
    message_key,
    parse_kb_command,
    question_text,
    route,
)
from tests.bot.slack.rig import payload

BOT = "W111"


def _event(name: str) -> dict:
    event = event_of(payload(name))
    assert event is not None
    return dict(event)


def _route(event: dict, **kwargs) -> Route:
    options = {"bot_user_id": BOT, "help_channels": frozenset(), "thread_answered": False}
    return route(event, **(options | {"thread_needs_mention": False} | kwargs))


@pytest.mark.parametrize(
    ("name", "noise"),
    [
        ("event_app_mention.json", False),
        ("event_message_im_in_thread.json", False),
        ("event_message_channel_in_thread.json", False),
        ("event_message_changed_channel.json", True),
        ("event_message_deleted.json", True),
        ("event_message_channel_join.json", True),
        ("event_message_bot.json", True),
    ],
)
def test_noise_is_edits_deletions_joins_and_bots(name: str, noise: bool) -> None:
    assert is_noise(_event(name), bot_user_id=BOT, bot_id="B1", ignore_bots=True) is noise


def test_the_bots_own_message_is_noise_whatever_the_bot_setting() -> None:
    own = _event("event_message_channel_in_thread.json") | {"user": BOT}
    assert is_noise(own, bot_user_id=BOT, bot_id=None, ignore_bots=False)
    by_bot_id = _event("event_message_bot.json")
    assert is_noise(by_bot_id, bot_user_id=BOT, bot_id="B999", ignore_bots=False)
    assert not is_noise(by_bot_id, bot_user_id=BOT, bot_id="B1", ignore_bots=False)


def test_thread_replies_dms_and_mentions_are_read_from_the_payloads() -> None:
    assert is_thread_reply(_event("event_message_in_thread_minimal.json"))
    assert is_thread_reply(_event("event_app_mention_in_thread.json"))
    assert not is_thread_reply(_event("event_app_mention.json"))
    assert is_dm(_event("event_message_im_in_thread.json"))
    assert mentions(_event("event_app_mention.json")["text"], BOT)
    assert not mentions(_event("event_app_mention.json")["text"], "W999")
    assert question_text("<@W111> Hi there!", bot_user_id=BOT) == "Hi there!"
    assert question_text("<@W111|kb>  ask <@U2>", bot_user_id=BOT) == "ask @U2"


def test_routes() -> None:
    mention = _event("event_app_mention.json")
    top_level = _event("event_message_channel_in_thread.json")
    top_level.pop("thread_ts")
    reply = _event("event_message_channel_in_thread.json")
    assert _route(mention) is Route.ANSWER
    assert _route(_event("event_message_im_in_thread.json")) is Route.ANSWER
    assert _route(top_level) is Route.IGNORE
    assert _route(top_level, help_channels=frozenset({"C111"})) is Route.ANSWER_IF_GROUNDED
    assert _route(top_level | {"text": "<@W111> hi"}) is Route.ANSWER
    assert _route(reply) is Route.IGNORE
    assert _route(reply, thread_answered=True) is Route.ANSWER
    assert _route(reply, thread_answered=True, thread_needs_mention=True) is Route.IGNORE
    assert _route(reply | {"text": "<@W111> and?"}, thread_answered=True) is Route.ANSWER


def test_one_message_has_one_key_whichever_event_brings_it() -> None:
    mention = _event("event_app_mention.json")
    as_message = _event("event_message_channel_in_thread.json") | {
        "channel": mention["channel"],
        "ts": mention["ts"],
    }
    assert message_key(mention) == message_key(as_message)


def test_delivery_keys_are_event_ids_or_payload_fingerprints() -> None:
    assert delivery_key(payload("event_app_mention.json")) == ("event:Ev111", "event")
    assert delivery_key(payload("event_url_verification.json")) is None
    click = payload("interactive_block_actions_button.json")
    key, kind = delivery_key(click) or ("", "")
    assert kind == "block_actions" and key == (delivery_key(dict(click)) or ("",))[0]
    other = click | {"trigger_id": "111.222.other"}
    assert delivery_key(other) != delivery_key(click)


@pytest.mark.parametrize(
    ("text", "private_default", "expected"),
    [
        ("", False, (CommandKind.HELP, "", False)),
        ("help", False, (CommandKind.HELP, "", False)),
        ("private", False, (CommandKind.HELP, "", False)),
        ("private How do I?", False, (CommandKind.ASK, "How do I?", True)),
        ("How do I?", False, (CommandKind.ASK, "How do I?", False)),
        ("How do I?", True, (CommandKind.ASK, "How do I?", True)),
        ("public How do I?", True, (CommandKind.ASK, "How do I?", False)),
        ("help me book travel", False, (CommandKind.ASK, "help me book travel", False)),
    ],
)
def test_kb_command_text(text: str, private_default: bool, expected: tuple) -> None:
    assert parse_kb_command(text, private_by_default=private_default) == expected


def test_chatter_is_top_level_talk_without_a_mention_outside_help_channels() -> None:
    from bot.slack.transport.predicates import never_for_the_bot

    top_level = _event("event_message_channel_in_thread.json")
    top_level.pop("thread_ts")
    none: frozenset[str] = frozenset()
    assert never_for_the_bot(top_level, bot_user_id=BOT, help_channels=none)
    assert not never_for_the_bot(top_level, bot_user_id=BOT, help_channels=frozenset({"C111"}))
    assert not never_for_the_bot(
        _event("event_message_channel_in_thread.json"), bot_user_id=BOT, help_channels=none
    )
    assert not never_for_the_bot(
        _event("event_app_mention.json"), bot_user_id=BOT, help_channels=none
    )
    assert not never_for_the_bot(
        _event("event_message_im_in_thread.json"), bot_user_id=BOT, help_channels=none
    )
