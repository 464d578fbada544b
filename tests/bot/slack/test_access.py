"""Per-channel access: a channel never sees a source outside its collections, by any path.

The fixture corpus has `hr` (leave.md) and `ops` (equipment.md, travel.md). Here CHR may
see both; every other channel, direct messages, the escalation channel and App Home
only `ops`. The paths: mentions, `/kb` and `/kb private`, direct messages, follow-ups,
"Why this answer?", escalation posts, the experts' answers (the escalations source) and
App Home.
"""

from __future__ import annotations

import copy
import json
import re

from bot.slack.access.config import AccessPolicy, BotOptions
from bot.slack.render import action_ids as ids
from store.filters import ChunkFilter
from tests.bot.slack.rig import (
    RecordingAnswerer,
    button_click,
    buttons,
    mention,
    payload,
    slash_command,
    user_message,
    view_submission,
)

POLICY = AccessPolicy.from_toml(
    """
[access]
default = ["ops"]
home = ["ops"]

[access.channels]
CHR = ["hr", "ops"]
""",
    where="test",
)
OPTIONS = BotOptions(escalation_channel="CESC", always_escalate=True)
LEAVE = "How do I request annual leave?"


def leaks_hr(value: object) -> bool:
    """Whether anything of the hr collection (leave.md) shows in `value`."""
    text = json.dumps(value)
    return bool(re.search(r"HRLinks|kb\.test/leave|hr-docs|\bLeave\b", text))


async def _ask(bot, fake_slack, question: str, *, channel: str, ts: str) -> dict:
    body = mention(question, ts=ts, event_id=f"Ev{ts}", channel=channel)
    fake_slack.add_message(channel, user_message(body))
    await bot.sender.event(body)
    await bot.idle()
    reply = next(m for m in fake_slack.messages[channel] if m.get("thread_ts") == ts)
    return copy.deepcopy(reply)


def _click(fake_slack, reply: dict, action_id: str, *, channel: str, user: str = "W222") -> dict:
    return button_click(
        button=buttons(reply["blocks"])[action_id],
        user=user,
        channel=channel,
        message=reply,
        response_url=fake_slack.hook_url(),
    )


async def test_an_answer_draws_only_on_the_channels_collections(start_bot, fake_slack):
    answerers: list[RecordingAnswerer] = []

    def recording(runtime):
        answerers.append(RecordingAnswerer(runtime.answerer()))
        return answerers[-1]

    bot = await start_bot(answerer=recording, access=POLICY, options=OPTIONS)
    in_hr = await _ask(bot, fake_slack, LEAVE, channel="CHR", ts="1700000400.000001")
    elsewhere = await _ask(bot, fake_slack, LEAVE, channel="C111", ts="1700000401.000001")
    assert leaks_hr(in_hr["blocks"])  # the control: CHR may see it, and does
    assert not leaks_hr(elsewhere["blocks"])
    assert answerers[0].calls[1]["scope"] == ChunkFilter(collections=("ops",))


async def test_a_follow_up_never_carries_sources_the_channel_may_no_longer_see(
    start_bot, fake_slack
):
    bot = await start_bot(access=POLICY, options=OPTIONS)
    await _ask(bot, fake_slack, LEAVE, channel="CHR", ts="1700000402.000001")
    # Another instance, configured since to let CHR see only ops, reads the same thread.
    narrowed = AccessPolicy(default=POLICY.default, channels={"CHR": POLICY.default})
    answerers: list[RecordingAnswerer] = []

    def recording(runtime):
        answerers.append(RecordingAnswerer(runtime.answerer()))
        return answerers[-1]

    other = await start_bot(answerer=recording, access=narrowed, options=OPTIONS)
    follow_up = payload("event_message_channel_in_thread.json")
    follow_up["event"] |= {
        "channel": "CHR",
        "text": "And sick leave?",
        "ts": "1700000402.000900",
        "thread_ts": "1700000402.000001",
    }
    await other.sender.event(follow_up)
    await other.idle()
    history = answerers[0].calls[0]["history"]
    assert [t.role for t in history] == ["user", "bot"]
    assert not leaks_hr([t.text for t in history])
    assert all(c.collection == "ops" for t in history for c in t.citations)


async def test_why_this_answer_clicked_in_another_channel_hides_what_it_may_not_see(
    start_bot, fake_slack
):
    bot = await start_bot(access=POLICY, options=OPTIONS)
    reply = await _ask(bot, fake_slack, LEAVE, channel="CHR", ts="1700000403.000001")
    await bot.sender.interaction(_click(fake_slack, reply, ids.WHY, channel="CHR"))
    await bot.idle()
    shared = copy.deepcopy(reply) | {"ts": "1700000403.555555"}
    await bot.sender.interaction(_click(fake_slack, shared, ids.WHY, channel="C111"))
    await bot.idle()
    in_hr, in_other = fake_slack.calls_to("chat.postEphemeral")
    assert leaks_hr(in_hr.params)
    assert not leaks_hr(in_other.params)


async def test_the_escalation_post_shows_only_what_the_escalation_channel_may_see(
    start_bot, fake_slack
):
    bot = await start_bot(access=POLICY, options=OPTIONS)
    reply = await _ask(bot, fake_slack, LEAVE, channel="CHR", ts="1700000404.000001")
    assert leaks_hr(reply["blocks"])
    await bot.sender.interaction(_click(fake_slack, reply, ids.ESCALATE, channel="CHR"))
    await bot.idle()
    (post,) = fake_slack.messages["CESC"]
    assert "annual leave" in post["text"]  # the question is there, the hr sources are not
    assert not leaks_hr([post["text"], post["blocks"]])


async def test_an_experts_answer_is_cited_only_where_the_asking_channels_collection_is_seen(
    start_bot, fake_slack, pool
):
    bot = await start_bot(access=POLICY, options=OPTIONS)
    question = "Who approves parental leave for contractors?"
    reply = await _ask(bot, fake_slack, question, channel="CHR", ts="1700000405.000001")
    await bot.sender.interaction(_click(fake_slack, reply, ids.ESCALATE, channel="CHR"))
    await bot.idle()
    post = copy.deepcopy(fake_slack.messages["CESC"][0])
    await bot.sender.interaction(
        _click(fake_slack, post, ids.ESCALATION_ANSWER, channel="CESC", user="W333")
    )
    await bot.idle()
    modal = fake_slack.calls_to("views.open")[0].params["view"]
    answer = "Parental leave for contractors is approved by the contracting officer, not HR."
    await bot.sender.interaction(
        view_submission(
            callback_id=modal["callback_id"],
            private_metadata=modal["private_metadata"],
            user="W333",
            values={ids.EXPERT_ANSWER_BLOCK: (ids.EXPERT_ANSWER_INPUT, answer)},
        )
    )
    await bot.idle()
    assert await pool.fetchval("SELECT collection FROM escalations") == "hr"
    in_hr = await _ask(bot, fake_slack, question, channel="CHR", ts="1700000406.000001")
    elsewhere = await _ask(bot, fake_slack, question, channel="C111", ts="1700000407.000001")
    assert "contracting officer" in json.dumps(in_hr["blocks"])
    assert "contracting officer" not in json.dumps(elsewhere["blocks"])


async def test_app_home_lists_only_what_app_home_may_see(start_bot, fake_slack):
    bot = await start_bot(access=POLICY, options=OPTIONS)
    await bot.sender.event(payload("event_app_home_opened_home.json"))
    await bot.idle()
    (published,) = fake_slack.calls_to("views.publish")
    assert published.params["user_id"] == "W222"
    assert "ops-docs" in json.dumps(published.params["view"])
    assert not leaks_hr(published.params["view"])


async def test_kb_and_kb_private_draw_only_on_the_channels_collections(start_bot, fake_slack):
    bot = await start_bot(access=POLICY, options=OPTIONS)
    shown: dict[tuple[str, str], list] = {}
    for channel in ("CHR", "C111"):
        for text in (LEAVE, f"private {LEAVE}"):
            updates, hooks = len(fake_slack.calls_to("chat.update")), len(fake_slack.hooks)
            form = slash_command(text, response_url=fake_slack.hook_url())
            form["channel_id"] = channel
            await bot.sender.command(form)
            await bot.idle()
            new = fake_slack.calls_to("chat.update")[updates:] + fake_slack.hooks[hooks:]
            shown[channel, text.split()[0]] = [c.params for c in new]
    assert leaks_hr(shown["CHR", "How"]) and leaks_hr(shown["CHR", "private"])  # the control
    assert shown["C111", "How"] and not leaks_hr(shown["C111", "How"])
    assert shown["C111", "private"] and not leaks_hr(shown["C111", "private"])


async def test_a_direct_message_draws_only_on_what_direct_messages_may_see(start_bot, fake_slack):
    bot = await start_bot(access=POLICY, options=OPTIONS)
    dm = payload("event_message_im_in_thread.json")
    dm["event"] |= {"text": LEAVE, "channel": "D222", "ts": "1700000408.000001"}
    dm["event"].pop("thread_ts")
    dm["event"].pop("parent_user_id")
    await bot.sender.event(dm)
    await bot.idle()
    (answer,) = [
        c.params
        for c in fake_slack.calls_to("chat.update")
        if c.params["channel"] == "D222" and c.params.get("metadata")
    ]
    assert answer["metadata"]["event_type"] == "kb_answer"
    assert not leaks_hr(answer)
