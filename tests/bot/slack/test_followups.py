"""Replies in the bot's thread: answered only when meant for the bot; a thank-you gets a reaction.

The decision is measured on tests/fixtures/slack_followups.json (60 replies, each with the
decision a person watching the thread would want), then followed through signed HTTP.
"""

from __future__ import annotations

import json

import pytest

from bot.slack.surfaces.message_desk import THANKS_REACTION
from bot.slack.transport.followups import FollowUp, follow_up, is_thanks, reads_as_request
from bot.slack.transport.predicates import Route, event_of, never_for_the_bot, route
from tests.bot.slack.rig import FIXTURES, mention, payload, user_message

BOT, ASKER, COLLEAGUE = "W111", "W222", "W333"
REPLIES = json.loads((FIXTURES / "slack_followups.json").read_text(encoding="utf-8"))["replies"]


def _decide(reply: dict) -> FollowUp:
    author = ASKER if reply["from"] == "asker" else COLLEAGUE
    return follow_up(reply["text"], author=author, askers=frozenset({ASKER}), bot_user_id=BOT)


def test_the_fixture_holds_sixty_replies_of_each_kind() -> None:
    kinds = {r["expect"] for r in REPLIES}
    assert len(REPLIES) == 60 and kinds == {"answer", "react", "ignore"}


def test_at_least_95_percent_of_the_fixture_replies_get_the_expected_decision() -> None:
    misses = [(r["text"], _decide(r).value) for r in REPLIES if _decide(r).value != r["expect"]]
    right = (len(REPLIES) - len(misses)) / len(REPLIES)
    assert right >= 0.95, misses


@pytest.mark.parametrize(
    ("text", "author", "expected"),
    [
        ("<@W111> and for interns?", COLLEAGUE, FollowUp.ANSWER),  # a mention always counts
        ("<@U0HR42> can you approve it?", ASKER, FollowUp.IGNORE),  # talking to someone else
        ("<!channel> is this current?", ASKER, FollowUp.IGNORE),
        ("what about part-timers", ASKER, FollowUp.ANSWER),  # a follow-up without "?"
        ("what about part-timers", COLLEAGUE, FollowUp.IGNORE),  # not the asker
        ("thanks!", ASKER, FollowUp.REACT),
        ("thanks!", COLLEAGUE, FollowUp.IGNORE),
        ("I'll ask my manager tomorrow", ASKER, FollowUp.IGNORE),
        ("", ASKER, FollowUp.IGNORE),
    ],
)
def test_each_rule_of_the_decision(text: str, author: str, expected: FollowUp) -> None:
    assert follow_up(text, author=author, askers=frozenset({ASKER}), bot_user_id=BOT) is expected


def test_a_thank_you_with_a_question_is_a_question() -> None:
    assert is_thanks("perfect, thx 🙏")
    assert not is_thanks("thanks! and what about parental leave?")
    assert reads_as_request("thanks, and for contractors")
    assert not reads_as_request("does anyone know if the office is open?")


def _reply_event(text: str, *, user: str) -> dict:
    event = dict(event_of(payload("event_message_channel_in_thread.json")) or {})
    return event | {"text": text, "user": user}


def test_the_route_of_a_reply_follows_the_decision_and_the_setting() -> None:
    options = {"bot_user_id": BOT, "help_channels": frozenset(), "thread_answered": True}
    askers = frozenset({ASKER})

    def decide(text: str, user: str = ASKER, **kwargs) -> Route:
        merged = options | {"thread_needs_mention": False, "thread_askers": askers} | kwargs
        return route(_reply_event(text, user=user), **merged)

    assert decide("what about part-timers") is Route.ANSWER
    assert decide("thanks!") is Route.REACT
    assert decide("what about part-timers", COLLEAGUE) is Route.IGNORE
    assert decide("what about part-timers", thread_needs_mention=True) is Route.IGNORE
    assert decide("what about part-timers", thread_answered=False) is Route.IGNORE
    # Chatter is dropped before any database write; a thank-you is not.
    none: frozenset[str] = frozenset()
    chatter = _reply_event("<@U0HR42> can you approve it?", user=ASKER)
    thanks = _reply_event("thanks!", user=ASKER)
    assert never_for_the_bot(chatter, bot_user_id=BOT, help_channels=none)
    assert not never_for_the_bot(thanks, bot_user_id=BOT, help_channels=none)


def _follow_up(text: str, *, ts: str, thread_ts: str, user: str = ASKER) -> dict:
    body = payload("event_message_channel_in_thread.json")
    body["event_id"] = f"Ev{ts}"
    body["event"] |= {"text": text, "ts": ts, "event_ts": ts, "thread_ts": thread_ts}
    body["event"] |= {"channel": "C111", "user": user}
    return body


async def test_in_a_thread_the_bot_answered_it_answers_follow_ups_and_thanks_with_a_reaction(
    start_bot, fake_slack
):
    bot = await start_bot()
    thread = "1700000200.000001"
    first = mention("How do I request annual leave?", ts=thread, event_id="EvFollow0")
    fake_slack.add_message("C111", user_message(first))
    await bot.sender.event(first)
    await bot.idle()
    assert len(fake_slack.calls_to("chat.postMessage")) == 1

    replies = [
        ("thanks!", ASKER),  # → a reaction
        ("<@U0HR42> can you approve it when it comes in?", ASKER),  # → to a colleague
        ("same for me, I never know where the form is", COLLEAGUE),  # → not the asker
        ("what about sick leave after the fact", ASKER),  # → answered, no "?"
    ]
    for n, (text, user) in enumerate(replies, start=1):
        body = _follow_up(text, ts=f"1700000200.00010{n}", thread_ts=thread, user=user)
        fake_slack.add_message("C111", user_message(body))
        assert (await bot.sender.event(body)).status == 200
        await bot.idle()

    (reaction,) = fake_slack.calls_to("reactions.add")
    assert reaction.params == {
        "channel": "C111",
        "timestamp": "1700000200.000101",
        "name": THANKS_REACTION,
    }
    posted = fake_slack.calls_to("chat.postMessage")
    assert len(posted) == 2  # the first answer and the follow-up, nothing for the chatter
    assert posted[1].params["thread_ts"] == thread
    answer = fake_slack.calls_to("chat.update")[-1]
    assert "sick" in json.dumps(answer.params["blocks"]).lower()

    # The thank-you delivered again (Slack retries) is not reacted to twice.
    again = _follow_up("thanks!", ts="1700000200.000101", thread_ts=thread)
    again["event_id"] = "EvRetry"
    await bot.sender.event(again, retry_num=1)
    await bot.idle()
    assert len(fake_slack.calls_to("reactions.add")) == 1
