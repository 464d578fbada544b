"""`kb serve`'s logs: one JSON object per line, ids and timings, never the question or a token.

The bot runs its real composition against the fake Slack; the log is what
`configure_logging` (the function `kb serve` calls) writes, captured from its stream.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from bot.logs import configure_logging
from tests.bot.slack.rig import BOT_TOKEN, mention

MARKER = "zorblaxquintet"
QUESTION = f"How do I request annual leave {MARKER}? My token is {BOT_TOKEN}"


@pytest.fixture
def json_log() -> Iterator[io.StringIO]:
    """The root logger writing JSON lines at info to a buffer, as under `kb serve`."""
    root = logging.getLogger()
    saved, level = list(root.handlers), root.level
    stream = io.StringIO()
    configure_logging(log_format="json", level=logging.INFO, stream=stream)
    try:
        yield stream
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved:
            root.addHandler(handler)
        root.setLevel(level)


async def test_a_question_is_logged_as_json_lines_with_ids_and_never_its_text_or_a_token(
    start_bot, fake_slack, json_log
):
    bot = await start_bot()
    ts = "1700000800.000001"
    await bot.sender.event(mention(QUESTION, ts=ts, event_id="EvLogged"))
    await bot.idle()
    reply = next(m for m in fake_slack.messages["C111"] if m.get("thread_ts") == ts)
    assert "HRLinks" in json.dumps(reply["blocks"])  # it was answered

    text = json_log.getvalue()
    lines = [json.loads(line) for line in text.splitlines()]  # every line is one object
    assert lines
    assert MARKER not in text and BOT_TOKEN not in text
    for line in lines:
        assert {"time", "level", "logger", "message"} <= line.keys()
    (answered,) = [line for line in lines if line["message"] == "answered"]
    assert answered["event_id"] == "EvLogged"
    assert answered["channel_id"] == "C111"
    assert isinstance(answered["run_id"], int) and answered["stage"] == "answer"
    assert answered["latency_ms"] > 0


async def test_a_token_in_a_logged_error_is_scrubbed(json_log):
    try:
        raise RuntimeError(f"Slack said no to {BOT_TOKEN}")
    except RuntimeError:
        logging.getLogger("bot.test").exception("call failed with %s", BOT_TOKEN)
    (line,) = [json.loads(x) for x in json_log.getvalue().splitlines()]
    assert BOT_TOKEN not in json.dumps(line)
    assert line["level"] == "error" and "RuntimeError" in line["exception"]
