"""A click acts only on what belongs to the message it was made on; experts only add answers.

Button values are whatever the client sends, so each test forges one: another channel's
run, another person's private answer, an escalation's button pressed elsewhere, and an
"Answer & add to knowledge base" by someone outside the experts.
"""

from __future__ import annotations

import copy
import json

from bot.slack.access.config import BotOptions
from bot.slack.render import action_ids as ids
from bot.slack.render.notices import EXPERTS_ONLY, NOT_THIS_MESSAGE
from tests.bot.slack.rig import button_click, buttons, feedback_buttons, mention, slash_command

OPTIONS = BotOptions(
    escalation_channel="CESC", escalation_usergroup="S0EXPERTS", always_escalate=True
)
QUESTION = "How do I request annual leave?"


async def _reply(bot, fake_slack, *, ts: str = "1700000400.000001") -> dict:
    await bot.sender.event(mention(QUESTION, ts=ts, event_id=f"Ev{ts}"))
    await bot.idle()
    return copy.deepcopy(next(m for m in fake_slack.messages["C111"] if m.get("thread_ts") == ts))


async def _click(bot, fake_slack, button: dict, *, user: str, channel: str, message, **kw) -> None:
    body = button_click(
        button=button,
        user=user,
        channel=channel,
        message=message,
        response_url=fake_slack.hook_url(),
        **kw,
    )
    assert (await bot.sender.interaction(body)).status == 200
    await bot.idle()


def _notes(fake_slack) -> list[str]:
    return [c.params.get("text", "") for c in fake_slack.calls_to("chat.postEphemeral")]


async def test_why_with_a_run_from_another_channel_shows_nothing(start_bot, fake_slack):
    bot = await start_bot(options=OPTIONS)
    reply = await _reply(bot, fake_slack)
    forged = {**reply, "ts": "1700000999.000001"}
    await _click(
        bot,
        fake_slack,
        buttons(reply["blocks"])[ids.WHY],
        user="W666",
        channel="C999",
        message=forged,
    )
    assert _notes(fake_slack) == [NOT_THIS_MESSAGE]
    assert all("blocks" not in c.params for c in fake_slack.calls_to("chat.postEphemeral"))


THUMBS_UP = "👍"


def _with_thumbs_up(blocks: list[dict]) -> dict[str, dict]:
    """The message's buttons, and its 👍 (a feedback_buttons element) as one more."""
    found = buttons(blocks)
    element = feedback_buttons(blocks)
    found[THUMBS_UP] = {
        "action_id": element["action_id"],
        "value": element["positive_button"]["value"],
    }
    return found


async def test_someone_else_cannot_open_escalate_or_vote_on_a_private_answer(
    start_bot, fake_slack, pool
):
    bot = await start_bot(options=OPTIONS)
    hook = fake_slack.hook_url("private")
    await bot.sender.command(slash_command(f"private {QUESTION}", response_url=hook))
    await bot.idle()
    private = _with_thumbs_up(fake_slack.hooks[-1].params["blocks"])
    for action in (ids.WHY, ids.ESCALATE, THUMBS_UP):
        await _click(
            bot,
            fake_slack,
            private[action],
            user="W666",
            channel="C111",
            message=None,
            is_ephemeral=True,
        )
    assert _notes(fake_slack) == [NOT_THIS_MESSAGE] * 3
    assert fake_slack.messages["CESC"] == []
    assert await pool.fetchval("SELECT count(*) FROM feedback") == 0
    # The asker may: the same buttons work for them.
    await _click(
        bot,
        fake_slack,
        private[THUMBS_UP],
        user="W222",
        channel="C111",
        message=None,
        is_ephemeral=True,
    )
    assert await pool.fetchval("SELECT count(*) FROM feedback") == 1


async def test_only_experts_may_answer_and_escalation_buttons_act_only_on_their_post(
    start_bot, fake_slack, pool
):
    bot = await start_bot(options=OPTIONS)
    reply = await _reply(bot, fake_slack)
    await _click(
        bot,
        fake_slack,
        buttons(reply["blocks"])[ids.ESCALATE],
        user="W222",
        channel="C111",
        message=reply,
    )
    (post,) = copy.deepcopy(fake_slack.messages["CESC"])
    on_post = buttons(post["blocks"])

    await _click(
        bot, fake_slack, on_post[ids.ESCALATION_ANSWER], user="W666", channel="CESC", message=post
    )
    assert fake_slack.calls_to("views.open") == []
    assert _notes(fake_slack)[-1] == EXPERTS_ONLY

    elsewhere = {**post, "ts": reply["ts"]}
    await _click(
        bot,
        fake_slack,
        on_post[ids.ESCALATION_RESOLVE],
        user="W333",
        channel="C111",
        message=elsewhere,
    )
    assert _notes(fake_slack)[-1] == NOT_THIS_MESSAGE
    assert await pool.fetchval("SELECT status FROM escalations") != "resolved"

    # A member of the expert group (not of the channel), then of the channel: the form opens.
    for expert in ("W444", "W333"):
        await _click(
            bot,
            fake_slack,
            on_post[ids.ESCALATION_ANSWER],
            user=expert,
            channel="CESC",
            message=post,
        )
    assert len(fake_slack.calls_to("views.open")) == 2
    assert "kb_" in json.dumps(fake_slack.calls_to("views.open")[0].params["view"])
