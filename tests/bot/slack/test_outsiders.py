"""Slack Connect and guests: someone of another organisation, or a guest, sees no
document content unless slack.toml says what they may see in that place, on every
surface that shows content (mentions, DMs, /kb, the assistant panel, "Why this
answer?", App Home). The fixture corpus has `hr` (leave.md) and `ops` (equipment.md,
travel.md); members of the workspace see both everywhere here.
"""

from __future__ import annotations

import copy
import json

from bot.slack.access.config import AccessPolicy, BotOptions
from bot.slack.render import action_ids as ids
from bot.slack.render.notices import OUTSIDER
from store.filters import NO_FILTER, ChunkFilter
from tests.bot.slack.rig import (
    BOT_USER,
    RecordingAnswerer,
    button_click,
    buttons,
    mention,
    payload,
    slash_command,
    user_message,
    view_submission,
)
from tests.bot.slack.test_access import leaks_hr

LEAVE = "How do I request annual leave?"
OTHER_ORG = "T999OTHER"
POLICY = AccessPolicy.from_toml(
    """
[access]
default = ["*"]

[access.guests]
CGUEST = ["ops"]

[access.external]
CSHARED = ["ops"]
""",
    where="test",
)


def _recording(answerers: list[RecordingAnswerer]):
    def wrap(runtime):
        answerers.append(RecordingAnswerer(runtime.answerer()))
        return answerers[-1]

    return wrap


async def _ask(bot, fake_slack, *, channel: str, ts: str, **extra) -> dict:
    body = mention(LEAVE, ts=ts, event_id=f"Ev{ts}", channel=channel, **extra)
    fake_slack.add_message(channel, user_message(body))
    await bot.sender.event(body)
    await bot.idle()
    return next(m for m in fake_slack.messages[channel] if m.get("thread_ts") == ts)


async def test_someone_of_another_organisation_gets_one_polite_line_and_no_content(
    start_bot, fake_slack
):
    answerers: list[RecordingAnswerer] = []
    bot = await start_bot(answerer=_recording(answerers), access=POLICY)
    fake_slack.users["W777"] = {"team_id": OTHER_ORG}
    reply = await _ask(
        bot, fake_slack, channel="C111", ts="1700000700.000001", user="W777", user_team=OTHER_ORG
    )
    assert reply["text"] == OUTSIDER
    assert answerers[0].calls == []  # nothing was searched for them
    assert not leaks_hr(reply) and "kb.test" not in json.dumps(reply)


async def test_a_shared_channel_can_let_outsiders_see_what_slack_toml_lists(start_bot, fake_slack):
    answerers: list[RecordingAnswerer] = []
    bot = await start_bot(answerer=_recording(answerers), access=POLICY)
    fake_slack.users["W777"] = {"team_id": OTHER_ORG}
    reply = await _ask(
        bot, fake_slack, channel="CSHARED", ts="1700000701.000001", user="W777", user_team=OTHER_ORG
    )
    assert answerers[0].calls[0]["scope"] == ChunkFilter(collections=("ops",))
    assert reply["text"] != OUTSIDER and not leaks_hr(reply["blocks"])


async def test_a_guest_sees_only_what_the_channel_lets_guests_see(start_bot, fake_slack):
    answerers: list[RecordingAnswerer] = []
    bot = await start_bot(answerer=_recording(answerers), access=POLICY)
    fake_slack.users["W555"] = {"is_restricted": True, "is_ultra_restricted": True}
    allowed = await _ask(bot, fake_slack, channel="CGUEST", ts="1700000702.000001", user="W555")
    elsewhere = await _ask(bot, fake_slack, channel="C111", ts="1700000703.000001", user="W555")
    member = await _ask(bot, fake_slack, channel="C111", ts="1700000704.000001")
    assert [c["scope"] for c in answerers[0].calls] == [
        ChunkFilter(collections=("ops",)),
        NO_FILTER,  # the member W222, in the same channel: everything
    ]
    assert not leaks_hr(allowed["blocks"])
    assert elsewhere["text"] == OUTSIDER
    assert leaks_hr(member["blocks"])  # the control: members see hr here


async def test_what_users_info_said_is_kept_for_a_while(start_bot, fake_slack):
    bot = await start_bot(access=POLICY)
    for n in range(3):
        await _ask(bot, fake_slack, channel="C111", ts=f"1700000705.00000{n + 1}")
    assert len(fake_slack.calls_to("users.info")) == 1


async def test_a_direct_message_from_another_organisation_is_refused(start_bot, fake_slack):
    answerers: list[RecordingAnswerer] = []
    bot = await start_bot(answerer=_recording(answerers), access=POLICY)
    fake_slack.users["W222"] = {"team_id": OTHER_ORG}
    body = payload("event_message_im_in_thread.json")  # a Slack Connect DM: user_team set
    body["event"] |= {"text": LEAVE, "user_team": OTHER_ORG}
    await bot.sender.event(body)
    await bot.idle()
    (posted,) = fake_slack.calls_to("chat.postMessage")
    assert posted.params["text"] == OUTSIDER and answerers[0].calls == []


async def test_kb_from_a_guest_is_refused_privately_and_posts_nothing(start_bot, fake_slack):
    bot = await start_bot(access=POLICY)
    fake_slack.users["W222"] = {"is_restricted": True}
    await bot.sender.command(slash_command(LEAVE, response_url=fake_slack.hook_url()))
    await bot.idle()
    assert fake_slack.calls_to("chat.postMessage") == []  # not even the question
    (hook,) = await fake_slack.wait_for("hook")
    assert hook.params["text"] == OUTSIDER and hook.params["response_type"] == "ephemeral"


async def test_the_assistant_panel_refuses_a_guest_and_suggests_nothing(start_bot, fake_slack):
    answerers: list[RecordingAnswerer] = []
    bot = await start_bot(answerer=_recording(answerers), access=POLICY)
    fake_slack.users["W222"] = {"is_ultra_restricted": True}
    started = payload("event_assistant_thread_started.json")
    started["event_id"] = "EvStartedGuest"
    await bot.sender.event(started)
    await bot.idle()
    question = payload("event_message_im_in_thread.json")
    question["event"] |= {"text": LEAVE, "ts": "1726133700.1", "event_ts": "1726133700.1"}
    await bot.sender.event(question)
    await bot.idle()
    assert fake_slack.calls_to("assistant.threads.setSuggestedPrompts") == []
    assert answerers[0].calls == []
    assert fake_slack.calls_to("chat.postMessage")[-1].params["text"] == OUTSIDER


async def test_why_this_answer_clicked_by_an_outsider_shows_no_trace(start_bot, fake_slack):
    bot = await start_bot(access=POLICY)
    reply = copy.deepcopy(await _ask(bot, fake_slack, channel="C111", ts="1700000706.000001"))
    fake_slack.users["W777"] = {"team_id": OTHER_ORG}
    click = button_click(
        button=buttons(reply["blocks"])[ids.WHY],
        user="W777",
        channel="C111",
        message=reply,
        response_url=fake_slack.hook_url(),
    )
    click["user"]["team_id"] = OTHER_ORG
    await bot.sender.interaction(click)
    await bot.idle()
    (told,) = fake_slack.calls_to("chat.postEphemeral")
    assert told.params["text"] == OUTSIDER and "blocks" not in told.params


async def test_app_home_lists_no_collection_to_a_guest(start_bot, fake_slack):
    bot = await start_bot(access=POLICY)
    fake_slack.users["W222"] = {"is_restricted": True}  # an admin flag does not count
    await bot.sender.event(payload("event_app_home_opened_home.json"))
    await bot.idle()
    (published,) = fake_slack.calls_to("views.publish")
    view = json.dumps(published.params["view"])
    assert "hr-docs" not in view and "ops-docs" not in view
    assert "Knowledge gaps" not in view


async def test_in_a_channel_shared_with_another_organisation_members_get_what_it_may_show(
    start_bot, fake_slack
):
    answerers: list[RecordingAnswerer] = []
    bot = await start_bot(answerer=_recording(answerers), access=POLICY)
    fake_slack.shared |= {"C111", "CSHARED"}  # Slack Connect: the partner reads every thread
    refused = await _ask(bot, fake_slack, channel="C111", ts="1700000707.000001")
    allowed = await _ask(bot, fake_slack, channel="CSHARED", ts="1700000708.000001")
    assert refused["text"] == OUTSIDER
    assert [c["scope"] for c in answerers[0].calls] == [ChunkFilter(collections=("ops",))]
    assert not leaks_hr(allowed["blocks"])


async def test_a_private_answer_in_a_shared_channel_follows_the_member_who_asked(
    start_bot, fake_slack
):
    bot = await start_bot(access=POLICY)
    fake_slack.shared.add("C111")
    await bot.sender.command(slash_command(f"private {LEAVE}", response_url=fake_slack.hook_url()))
    await bot.idle()
    hooks = [h for h in fake_slack.hooks if h.params.get("blocks")]
    assert leaks_hr(hooks[-1].params["blocks"])  # only the member reads it: everything
    assert fake_slack.calls_to("chat.postMessage") == []


async def test_a_partner_in_the_escalation_channel_cannot_write_into_the_knowledge_base(
    start_bot, fake_slack, pool
):
    bot = await start_bot(options=BotOptions(escalation_channel="CESC", always_escalate=True))
    fake_slack.members["CESC"] = [BOT_USER, "W777"]  # a vendor invited to the experts' channel
    fake_slack.users["W777"] = {"team_id": OTHER_ORG}
    reply = copy.deepcopy(await _ask(bot, fake_slack, channel="C111", ts="1700000709.000001"))
    escalate = button_click(
        button=buttons(reply["blocks"])[ids.ESCALATE],
        user="W222",
        channel="C111",
        message=reply,
        response_url=fake_slack.hook_url(),
    )
    await bot.sender.interaction(escalate)
    await bot.idle()
    post = copy.deepcopy(fake_slack.messages["CESC"][0])
    answer = buttons(post["blocks"])[ids.ESCALATION_ANSWER]
    await bot.sender.interaction(
        button_click(
            button=answer,
            user="W777",
            channel="CESC",
            message=post,
            response_url=fake_slack.hook_url(),
        )
    )
    await bot.idle()
    assert fake_slack.calls_to("views.open") == []
    forged = view_submission(
        callback_id=ids.EXPERT_ANSWER_MODAL,
        private_metadata=answer["value"],
        user="W777",
        values={ids.EXPERT_ANSWER_BLOCK: (ids.EXPERT_ANSWER_INPUT, "Leave is unlimited.")},
    )
    await bot.sender.interaction(forged)
    await bot.idle()
    assert await pool.fetchval("SELECT answer FROM escalations") is None
