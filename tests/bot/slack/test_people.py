"""Who is asking: member, guest or outsider, from users.info and the event's team."""

from __future__ import annotations

import pytest

from bot.slack.access.config import Standing
from bot.slack.access.people import People, Workspace, standing_of
from bot.slack.access.shared_channels import SharedChannels
from bot.slack.transport.web import build_web_client
from tests.bot.slack.rig import BOT_TOKEN, TEAM, payload

HOME = Workspace(team_id="T111", enterprise_id="E111")


def _user(**fields) -> dict:
    user = payload("web_users.info.json")["user"] | {"team_id": "T111"}
    return user | fields


@pytest.mark.parametrize(
    ("user", "user_team", "standing"),
    [
        (_user(), None, Standing.MEMBER),
        (_user(), "T111", Standing.MEMBER),
        (_user(is_restricted=True), None, Standing.GUEST),
        (_user(is_ultra_restricted=True), "T111", Standing.GUEST),
        (_user(team_id="T999"), None, Standing.EXTERNAL),
        (_user(), "T999", Standing.EXTERNAL),  # the event says another workspace
        (_user(is_stranger=True), None, Standing.EXTERNAL),
        (_user(team_id=None), None, Standing.EXTERNAL),  # nothing says where they are from
        # Enterprise Grid: another workspace of the same organisation is not outside.
        (_user(team_id="T222", enterprise_user={"enterprise_id": "E111"}), "T2", Standing.MEMBER),
        (_user(team_id="T222", enterprise_user={"enterprise_id": "E9"}), "T2", Standing.EXTERNAL),
    ],
)
def test_standing_of_reads_the_user_and_the_events_team(user, user_team, standing) -> None:
    assert standing_of(user, workspace=HOME, user_team=user_team) is standing


async def test_a_lookup_is_kept_for_a_while_then_asked_again(fake_slack) -> None:
    now = [1000.0]
    client = build_web_client(token=BOT_TOKEN, base_url=fake_slack.base_url)
    people = People(
        client=client, workspace=Workspace(team_id=TEAM), cache_seconds=60, clock=lambda: now[0]
    )
    assert (await people.person("W222")).standing is Standing.MEMBER
    fake_slack.users["W222"] = {"is_restricted": True}
    now[0] += 59
    assert (await people.person("W222")).standing is Standing.MEMBER  # still the cached answer
    now[0] += 2
    assert (await people.person("W222")).standing is Standing.GUEST
    assert len(fake_slack.calls_to("users.info")) == 2


async def test_a_user_slack_will_not_describe_is_treated_as_external(fake_slack) -> None:
    client = build_web_client(token=BOT_TOKEN, base_url=fake_slack.base_url)
    people = People(client=client, workspace=Workspace(team_id=TEAM))
    fake_slack.script("users.info", status=200, body={"ok": False, "error": "user_not_found"})
    person = await people.person("W404")
    assert person.standing is Standing.EXTERNAL and not person.is_admin


async def test_a_channel_slack_will_not_describe_counts_as_shared(fake_slack) -> None:
    client = build_web_client(token=BOT_TOKEN, base_url=fake_slack.base_url)
    channels = SharedChannels(client=client)
    fake_slack.shared.add("CPARTNER")
    assert await channels.with_outsiders("CPARTNER")
    assert not await channels.with_outsiders("C111")
    fake_slack.script("conversations.info", status=200, body={"ok": False, "error": "x"})
    assert await channels.with_outsiders("CGONE")
    assert len(fake_slack.calls_to("conversations.info")) == 3
    assert not await channels.with_outsiders("C111")  # kept for a while
    assert len(fake_slack.calls_to("conversations.info")) == 3
