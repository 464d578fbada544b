"""👍 / 👎 stored per run and user (changeable), the 👎 comment modal, and App Home."""

from __future__ import annotations

import copy
import json

from bot.slack.render import action_ids as ids
from store.index_runs import IndexRunRepository
from tests.bot.slack.rig import (
    button_click,
    buttons,
    feedback_click,
    mention,
    payload,
    view_submission,
)

QUESTION = "How do I request annual leave?"
UP, DOWN = "👍", "👎"


async def _answered(bot, fake_slack) -> dict:
    ts = "1700000500.000001"
    await bot.sender.event(mention(QUESTION, ts=ts, event_id="EvFeedback"))
    await bot.idle()
    return copy.deepcopy(next(m for m in fake_slack.messages["C111"] if m.get("thread_ts") == ts))


async def _press(bot, fake_slack, reply: dict, action_id: str, user: str) -> None:
    """👍 / 👎 on Slack's feedback_buttons; an old answer's button for the old action ids."""
    if action_id in (UP, DOWN):
        click = feedback_click(
            message=reply, user=user, positive=action_id == UP, response_url=fake_slack.hook_url()
        )
    else:
        click = button_click(
            button=buttons(reply["blocks"])[action_id],
            user=user,
            channel="C111",
            message=reply,
            response_url=fake_slack.hook_url(),
        )
    assert (await bot.sender.interaction(click)).status == 200
    await bot.idle()


async def test_one_vote_per_run_and_user_that_a_second_click_changes(start_bot, fake_slack, pool):
    bot = await start_bot()
    reply = await _answered(bot, fake_slack)
    await _press(bot, fake_slack, reply, UP, "W222")
    await _press(bot, fake_slack, reply, DOWN, "W222")
    await _press(bot, fake_slack, reply, UP, "W333")
    rows = await pool.fetch("SELECT user_id, vote FROM feedback ORDER BY user_id")
    assert [tuple(r) for r in rows] == [("W222", -1), ("W333", 1)]
    thanked = [c.params["user"] for c in fake_slack.calls_to("chat.postEphemeral")]
    assert thanked == ["W222", "W333"]  # each 👍 acknowledged; the 👎 opened its modal


async def test_an_answer_posted_before_feedback_buttons_still_takes_votes_on_its_old_buttons(
    start_bot, fake_slack, pool
):
    bot = await start_bot()
    reply = await _answered(bot, fake_slack)
    run = ids.parse_action_value(buttons(reply["blocks"])[ids.WHY]["value"]).run
    old_button = {"action_id": ids.FEEDBACK_UP, "value": ids.action_value(run=run)}
    click = button_click(
        button=old_button, user="W444", channel="C111", message=reply,
        response_url=fake_slack.hook_url(),
    )  # fmt: skip
    assert (await bot.sender.interaction(click)).status == 200
    await bot.idle()
    assert await pool.fetchval("SELECT vote FROM feedback WHERE user_id = 'W444'") == 1


async def test_a_feedback_value_the_bot_did_not_write_stores_nothing(start_bot, fake_slack, pool):
    bot = await start_bot()
    reply = await _answered(bot, fake_slack)
    click = feedback_click(
        message=reply, user="W222", positive=True, response_url=fake_slack.hook_url()
    )
    click["actions"][0]["value"] = "positive_feedback"  # the docs' example value, not ours
    assert (await bot.sender.interaction(click)).status == 200
    await bot.idle()
    assert await pool.fetchval("SELECT count(*) FROM feedback") == 0


async def test_a_thumbs_down_opens_a_comment_modal_whose_comment_is_stored(
    start_bot, fake_slack, pool
):
    bot = await start_bot()
    reply = await _answered(bot, fake_slack)
    await _press(bot, fake_slack, reply, DOWN, "W222")
    (opened,) = fake_slack.calls_to("views.open")
    modal = opened.params["view"]
    await bot.sender.interaction(
        view_submission(
            callback_id=modal["callback_id"],
            private_metadata=modal["private_metadata"],
            user="W222",
            values={
                ids.FEEDBACK_COMMENT_BLOCK: (ids.FEEDBACK_COMMENT_INPUT, "It missed the deadline")
            },
        )
    )
    await bot.idle()
    row = await pool.fetchrow("SELECT vote, comment FROM feedback")
    assert (row["vote"], row["comment"]) == (-1, "It missed the deadline")


async def test_app_home_shows_collections_counts_the_last_reindex_and_my_questions(
    start_bot, fake_slack, pool
):
    runs = IndexRunRepository(pool)
    await runs.finish(
        await runs.start(source="ops-docs"), status="succeeded", counts={}, failures=[]
    )
    finished = await pool.fetchval("SELECT finished_at FROM index_runs")
    bot = await start_bot()
    await _answered(bot, fake_slack)
    await bot.sender.event(payload("event_app_home_opened_home.json"))
    await bot.idle()
    (published,) = fake_slack.calls_to("views.publish")
    view = json.dumps(published.params["view"])
    assert published.params["view"]["type"] == "home"
    assert "hr" in view and "ops" in view and "ops-docs" in view
    assert f"{finished:%Y-%m-%d %H:%M}" in view
    assert QUESTION in view  # W222 asked it (the mention payload's user) and opened Home
    assert "<!date^" in view  # each viewer's own time zone
    assert "archives/C111/p1700000500000001" in view  # the question links to its thread
    assert "Knowledge gaps" in view  # the users.info payload file's user is an admin


async def test_app_home_shows_the_knowledge_gaps_to_admins_only(start_bot, fake_slack):
    bot = await start_bot()
    member = payload("web_users.info.json")
    member["user"] |= {"is_admin": False, "is_owner": False, "is_primary_owner": False}
    fake_slack.script("users.info", status=200, body=member)
    await bot.sender.event(payload("event_app_home_opened_home.json"))
    await bot.idle()
    (published,) = fake_slack.calls_to("views.publish")
    assert "Knowledge gaps" not in json.dumps(published.params["view"])
