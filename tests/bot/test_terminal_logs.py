"""The interactive commands' log lines (`kb ask`, `kb index`, … without --verbose): each
record one line, an exception as its type and message, never a traceback or a token."""

from __future__ import annotations

import io
import logging
import sys

from hypothesis import example, given
from hypothesis import strategies as st

from bot.logs import configure_logging
from tests.bot.slack.rig import BOT_TOKEN


def _formatter(*, tracebacks: bool) -> logging.Formatter:
    """The formatter configure_logging installs, with the root logger left as it was."""
    root = logging.getLogger()
    saved, level = list(root.handlers), root.level
    try:
        handler = configure_logging(log_format="text", stream=io.StringIO(), tracebacks=tracebacks)
    finally:
        for handler_now in list(root.handlers):
            root.removeHandler(handler_now)
        for old in saved:
            root.addHandler(old)
        root.setLevel(level)
    assert handler.formatter is not None
    return handler.formatter


ONE_LINE = _formatter(tracebacks=False)
VERBOSE = _formatter(tracebacks=True)


def _record(message: str, error: BaseException | None) -> logging.LogRecord:
    exc_info = None
    if error is not None:
        try:
            raise error
        except BaseException:  # noqa: BLE001 - captured as logging would
            exc_info = sys.exc_info()
    return logging.LogRecord("asyncpg.pool", logging.WARNING, __file__, 1, message, (), exc_info)


def test_an_exception_is_its_type_and_message_on_the_records_line() -> None:
    record = _record("Failed to restore the pool connection floor; retrying",
                     ConnectionRefusedError(111, "Connection refused"))  # fmt: skip
    line = ONE_LINE.format(record)
    assert line.endswith(
        "WARNING asyncpg.pool: Failed to restore the pool connection floor; retrying"
        " (ConnectionRefusedError: [Errno 111] Connection refused)"
    )
    assert "\n" not in line
    # --verbose keeps the traceback, and the record is left as it came for other handlers.
    assert "Traceback (most recent call last)" in VERBOSE.format(record)


text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80)


@given(
    message=text,
    error_message=st.one_of(st.none(), text),
    token_at=st.sampled_from(["message", "error", "nowhere"]),
)
@example(message="pool lost\n  retrying", error_message="refused\nat line 2", token_at="error")
def test_every_record_is_one_line_without_a_traceback_or_a_token(
    message: str, error_message: str | None, token_at: str
) -> None:
    if token_at == "message":
        message = f"{message}\n{BOT_TOKEN}\n{message}"
    error = None if error_message is None else RuntimeError(error_message)
    if error is not None and token_at == "error":
        error = RuntimeError(f"{error_message}\n  token {BOT_TOKEN}")
    line = ONE_LINE.format(_record(message, error))
    assert "\n" not in line and "\r" not in line
    assert "Traceback" not in line or "Traceback" in message + (error_message or "")
    assert BOT_TOKEN not in line
    if error is not None:
        assert line.endswith(")") and "(RuntimeError: " in line
