"""A Slack thread's messages → which threads count and the document's text."""

from __future__ import annotations

from typing import Any

from jobs.slack_threads.threads import ThreadRules, decode, mentioned_users, qualifies, thread_text

BOT = "UBOT"
NAMES = {"U1": "Alice", "U2": "Bob", "U3": "Carol"}


def message(user: str, text: str, ts: str, **extra: Any) -> dict[str, Any]:
    return {"type": "message", "user": user, "text": text, "ts": ts, **extra}


QUESTION = message("U1", "How do I reset my VPN token?", "100.000001")
ANSWER = message("U2", "Use <https://vpn.example.com/reset|the portal> &amp; wait 5 min", "101.1")
BOT_ANSWER = message(BOT, "Searching…", "100.5", bot_id="B1")
JOIN = message("U3", "<@U3> has joined the channel", "100.7", subtype="channel_join")


def test_the_text_is_the_question_then_each_persons_reply_without_bots_or_joins() -> None:
    thread = thread_text([QUESTION, BOT_ANSWER, JOIN, ANSWER], names=NAMES, bot_user=BOT)
    assert thread.text == (
        "Alice asked:\n\nHow do I reset my VPN token?\n\n"
        "Bob replied:\n\nUse [the portal](https://vpn.example.com/reset) & wait 5 min"
    )
    assert thread.title == "How do I reset my VPN token?"
    assert (thread.latest, thread.replies, thread.authors) == ("101.1", 1, ("Alice", "Bob"))


def test_a_thread_counts_only_with_a_persons_question_and_enough_replies_from_people() -> None:
    rules = ThreadRules()
    assert qualifies([QUESTION, ANSWER], rules, bot_user=BOT)
    assert not qualifies([QUESTION, BOT_ANSWER, JOIN], rules, bot_user=BOT)
    assert not qualifies([BOT_ANSWER, ANSWER], rules, bot_user=BOT)  # a bot's post
    assert not qualifies([QUESTION, ANSWER], ThreadRules(min_replies=2), bot_user=BOT)


def test_the_optional_checkmark_and_expert_rules() -> None:
    checked = {**ANSWER, "reactions": [{"name": "white_check_mark", "users": ["U1"], "count": 1}]}
    needs_check = ThreadRules(require_reaction="white_check_mark")
    assert not qualifies([QUESTION, ANSWER], needs_check, bot_user=BOT)
    assert qualifies([QUESTION, checked], needs_check, bot_user=BOT)
    assert qualifies([QUESTION, ANSWER], ThreadRules(experts=("U2",)), bot_user=BOT)
    assert not qualifies([QUESTION, ANSWER], ThreadRules(experts=("U3",)), bot_user=BOT)


def test_slack_markup_decodes_once_into_names_channels_and_links() -> None:
    text = "ask <@U3> in <#C1|help> or <!here>; see <https://x.test/a?b=1&amp;c=2>; &amp;lt; stays"
    assert decode(text, names=NAMES.get) == (
        "ask @Carol in #help or @here; see https://x.test/a?b=1&c=2; &lt; stays"
    )
    mentions = [message("U1", "cc <@U3> <@U2|bob>", "1.0"), BOT_ANSWER]
    assert mentioned_users(mentions, bot_user=BOT) == {"U1", "U2", "U3"}  # not the bot
