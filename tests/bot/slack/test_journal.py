"""The journal of requests acked during a database outage (bot/slack/delivery/journal.py).

The end-to-end case (a process killed during the outage, its questions answered by the
next one) is in test_postgres_restart.py; these are the file format's promises.
"""

from __future__ import annotations

import stat
import time
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from slack_sdk.signature import SignatureVerifier

from bot.slack.delivery.journal import REPLAYED, Journal, KeptRequest
from tests.bot.slack.rig import SIGNING_SECRET


def test_a_kept_request_reads_back_as_it_was_and_is_private(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal")
    request = KeptRequest("http", "token=x&text=R%26D+leave", "application/x-www-form-urlencoded")
    journal.keep("command:abc", request)
    assert journal.kept() == [("command:abc", request)]
    (path,) = (tmp_path / "journal").iterdir()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    journal.drop("command:abc")
    assert journal.kept() == []
    journal.drop("command:abc")  # twice is fine


def test_an_unreadable_file_is_set_aside_and_the_others_are_kept(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.keep("event:Ev1", KeptRequest("socket_mode", '{"event_id": "Ev1"}', None))
    (tmp_path / "torn.json").write_text('{"key": "event:Ev2", "mo')  # cut by a crash
    (tmp_path / "wrong.json").write_text('{"key": "event:Ev3", "shape": 1}')
    assert [key for key, _ in journal.kept()] == ["event:Ev1"]
    assert sorted(p.name for p in tmp_path.glob("*.bad")) == ["torn.bad", "wrong.bad"]


def test_a_replayed_http_request_carries_a_fresh_valid_signature() -> None:
    body = '{"type": "event_callback", "event_id": "Ev1"}'
    request = KeptRequest("http", body, "application/json").to_request(SIGNING_SECRET)
    headers = {k: v[0] for k, v in request.headers.items()}
    assert abs(int(headers["x-slack-request-timestamp"]) - time.time()) < 60
    assert SignatureVerifier(SIGNING_SECRET).is_valid_request(body, headers)
    assert not SignatureVerifier("another-secret").is_valid_request(body, headers)
    assert request.context.get(REPLAYED) is True


@given(body=st.text(), mode=st.sampled_from(["http", "socket_mode"]))
def test_any_body_survives_the_round_trip(tmp_path_factory, body: str, mode: str) -> None:
    journal = Journal(tmp_path_factory.mktemp("journal"))
    request = KeptRequest(mode, body, None)
    journal.keep("event:x", request)
    assert journal.kept() == [("event:x", request)]
