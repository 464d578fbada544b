"""Slack-escaped text is decoded once on the way in and escaped once on the way out.

"R&D" arrives as `R&amp;D`; the agent must search "R&D", and every place the question is
shown again (the /kb echo, the assistant title, escalation posts, App Home) must send
`R&amp;D` once, never `R&amp;amp;D`.
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from bot.slack.access.config import BotOptions
from bot.slack.render import action_ids as ids
from bot.slack.render.blocks import answer_messages
from bot.slack.render.mrkdwn import clean, escape
from bot.slack.transport.incoming import decode
from tests.bot.slack.rig import (
    RecordingAnswerer,
    button_click,
    buttons,
    mention,
    payload,
    slash_command,
)
from tests.bot.slack.test_blocks import answer, claim

# What Slack sends for: R&D <budget> @bob #finance the HR portal @leads @here "a&lt;b"
SENT = (
    "R&amp;D &lt;budget&gt; <@U999|bob> <#C222|finance> <https://hr.example/p|the HR portal> "
    "<!subteam^S0LEADS|@leads> <!here> a&amp;lt;b"
)
TYPED = "R&D <budget> @bob #finance the HR portal (https://hr.example/p) @leads @here a&lt;b"


@given(st.text())
@example("R&D")
@example("&amp;")  # a person typing an entity gets the entity back, not '&'
@example("&lt;@U123&gt;")
@example("<@U123> <!channel> <https://evil.example|ok>")
@example("a < b > c & d")
def test_escaping_then_decoding_gives_back_the_text(text: str) -> None:
    assert decode(escape(text)) == clean(text)


@given(st.text())
@example("<@U123|bob> &amp;")
@example("<!subteam^S1|@all> <!date^1392734382^{date}|Feb 18, 2014>")
@example("&amp;lt;!here&amp;gt;")
@example("<<@U1>>")
def test_decoded_text_escaped_again_holds_no_control_sequence(sent: str) -> None:
    wire = escape(decode(sent))
    assert "<" not in wire and ">" not in wire
    assert decode(wire) == clean(decode(sent))


@pytest.mark.parametrize(
    ("sent", "typed"),
    [
        (SENT, TYPED),
        ("R&amp;amp;D", "R&amp;D"),  # decoded once: the text someone typed as "R&amp;D"
        ("<mailto:ann@corp.example|ann@corp.example>", "ann@corp.example"),
        ("<http://example.com|example.com>", "example.com"),
        ("<https://a.example>", "https://a.example"),
        ("<@U123>", "@U123"),
        ("<#C123|>", "#C123"),
        ("<!subteam^S123>", "@S123"),
        ("<!date^1392734382^{date}|Feb 18, 2014>", "Feb 18, 2014"),
    ],
)
def test_references_read_as_slack_shows_them(sent: str, typed: str) -> None:
    assert decode(sent) == typed


def test_searched_for_shows_the_rewritten_question_escaped_once() -> None:
    (message,) = answer_messages(
        answer((claim("Leave is in HRLinks."),), question="And R&D?", standalone_question="R&D")
    )
    shown = json.dumps(message.blocks)
    assert "Searched for: R&amp;D" in shown and "&amp;amp;" not in shown


async def test_the_agent_gets_the_text_a_person_typed(start_bot, fake_slack):
    answerers: list[RecordingAnswerer] = []

    def recording(runtime):
        answerers.append(RecordingAnswerer(runtime.answerer()))
        return answerers[-1]

    bot = await start_bot(answerer=recording)
    await bot.sender.event(mention(SENT, ts="1700000100.000001", event_id="EvEscaped"))
    await bot.idle()
    assert answerers[0].calls[0]["question"] == TYPED


async def test_the_kb_echo_shows_r_and_d_escaped_once(start_bot, fake_slack):
    bot = await start_bot()
    await bot.sender.command(slash_command("R&amp;D leave?", response_url=fake_slack.hook_url()))
    await bot.idle()
    echo = fake_slack.calls_to("chat.postMessage")[0]
    assert echo.params["text"] == "<@W222> asked: R&amp;D leave?"


async def test_the_assistant_title_shows_r_and_d_escaped_once(start_bot, fake_slack):
    bot = await start_bot()
    started = payload("event_assistant_thread_started.json")
    await bot.sender.event(started | {"event_id": "EvStarted"})
    await bot.idle()
    body = payload("event_message_im_in_thread.json")
    body["event_id"] = "EvTitle"
    body["event"] |= {"text": "R&amp;D leave?", "ts": "1726133700.1", "event_ts": "1726133700.1"}
    await bot.sender.event(body)
    await bot.idle()
    (title,) = fake_slack.calls_to("assistant.threads.setTitle")
    assert title.params["title"] == "R&amp;D leave?"


async def test_escalation_post_and_app_home_show_r_and_d_escaped_once(start_bot, fake_slack):
    bot = await start_bot(options=BotOptions(escalation_channel="CESC"))
    ts = "1700000200.000001"
    await bot.sender.event(mention("R&amp;D parking permit?", ts=ts, event_id="EvRnD"))
    await bot.idle()
    reply = copy.deepcopy(next(m for m in fake_slack.messages["C111"] if m.get("thread_ts") == ts))
    click = button_click(
        button=buttons(reply["blocks"])[ids.ESCALATE],
        user="W222",
        channel="C111",
        message=reply,
        response_url=fake_slack.hook_url(),
    )
    await bot.sender.interaction(click)
    await bot.idle()
    post = json.dumps(fake_slack.messages["CESC"][0])
    assert "R&amp;D parking permit?" in post and "&amp;amp;" not in post

    await bot.sender.event(payload("event_app_home_opened_home.json"))
    await bot.idle()
    (published,) = fake_slack.calls_to("views.publish")
    home = json.dumps(published.params["view"])
    assert "R&amp;D parking permit?" in home and "&amp;amp;" not in home
