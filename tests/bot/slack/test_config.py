"""The access file: which collections each place may see; mistakes in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.slack.access.config import AccessPolicy, Standing, access_report, load_access
from bot.slack.errors import SlackConfigError
from store.filters import NO_FILTER, ChunkFilter


def test_without_a_file_every_channel_sees_everything(tmp_path: Path) -> None:
    policy = load_access(tmp_path / "slack.toml")
    assert policy.for_channel("C1").scope == NO_FILTER
    assert policy.for_channel("D1").home_collection == "escalations"


def test_channels_dms_the_panel_and_home_follow_the_file(tmp_path: Path) -> None:
    path = tmp_path / "slack.toml"
    path.write_text(
        '[access]\ndefault = ["handbook"]\ndm = ["handbook", "eng"]\n'
        '[access.channels]\nCENG = ["eng", "handbook"]\nCALL = ["*"]\n'
    )
    policy = load_access(path)
    assert policy.for_channel("CRANDOM").scope == ChunkFilter(collections=("handbook",))
    assert policy.for_channel("CENG").home_collection == "eng"
    assert policy.for_channel("CALL").scope == NO_FILTER
    assert policy.for_channel("D123", channel_type="im").allows("eng")
    assert policy.assistant == policy.dm and policy.home == policy.dm


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[access]\ndefault = []\n", "access.default: Value error, list at least one"),
        ("[access]\nchanels = {}\n", "access.chanels: Extra inputs are not permitted"),
        ('[access.channels]\nC1 = "eng"\n', "access.channels.C1: Input should be a valid list"),
        ("[access\n", "is not valid TOML"),
    ],
)
def test_a_mistake_is_one_line_naming_the_file_and_the_key(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "slack.toml"
    path.write_text(text)
    with pytest.raises(SlackConfigError) as error:
        load_access(path)
    assert str(path) in str(error.value) and message in str(error.value)
    assert "\n" not in str(error.value)


def test_from_toml_is_what_load_access_reads() -> None:
    policy = AccessPolicy.from_toml('[access]\nhome = ["ops"]\n', where="x")
    assert policy.home.allows("ops") and not policy.home.allows("hr")


def test_guests_and_outsiders_see_nothing_unless_a_place_lists_it() -> None:
    policy = AccessPolicy.from_toml(
        '[access]\ndefault = ["hr", "ops"]\n'
        '[access.guests]\nCG = ["ops", "eng"]\n'
        '[access.external]\ndefault = ["*"]\nCX = []\n',
        where="x",
    )
    channel = policy.for_channel("CG")
    assert policy.for_person(channel, channel_id="CG", standing=Standing.MEMBER) == channel
    # Never more than the place: eng is not the channel's to show.
    guest = policy.for_person(channel, channel_id="CG", standing=Standing.GUEST)
    assert guest.collections == ("ops",)
    assert policy.for_person(channel, channel_id="C1", standing=Standing.GUEST).shows_nothing
    outsider = policy.for_person(channel, channel_id="C1", standing=Standing.EXTERNAL)
    assert outsider == channel
    assert policy.for_person(channel, channel_id="CX", standing=Standing.EXTERNAL).shows_nothing


def test_without_a_file_nobody_outside_the_workspace_sees_anything(tmp_path: Path) -> None:
    policy = load_access(tmp_path / "slack.toml")
    place = policy.for_channel("C1")
    for standing in (Standing.GUEST, Standing.EXTERNAL):
        assert policy.for_person(place, channel_id="C1", standing=standing).shows_nothing
    assert policy.sees_everything() == [
        "channels not listed",
        "direct messages",
        "the assistant panel",
        "App Home",
    ]


def test_a_mistake_in_the_guests_section_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "slack.toml"
    path.write_text('[access.guests]\nC1 = "ops"\n')
    with pytest.raises(SlackConfigError) as error:
        load_access(path)
    assert "access.guests" in str(error.value) and "C1: list collection names" in str(error.value)
    assert "\n" not in str(error.value)


def test_the_start_up_summary_says_where_everything_is_seen() -> None:
    policy = AccessPolicy.from_toml(
        '[access]\ndefault = ["ops"]\ndm = ["*"]\n[access.channels]\nCALL = ["*"]\n'
        '[access.external]\nCX = ["ops"]\n',
        where="x",
    )
    assert policy.summary() == [
        "members see every collection in: direct messages, the assistant panel, App Home, CALL",
        "guests see: nothing",
        "other organisations see: CX ops",
    ]


def test_kb_serve_names_the_file_or_says_the_default_is_in_force(tmp_path: Path) -> None:
    path = tmp_path / "slack.toml"
    (first, *_) = access_report(load_access(path), path=path)
    assert first == (
        f"Slack access (no {path}, so the default): members see every collection in: "
        "channels not listed, direct messages, the assistant panel, App Home"
    )
    path.write_text('[access]\ndefault = ["ops"]\n')
    (first, *_) = access_report(load_access(path), path=path)
    assert first == f"Slack access ({path}): no place shows members every collection"
