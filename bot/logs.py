"""Logging for `kb`: one JSON object per line on stderr (or plain text for people).

A JSON line holds `time` (UTC, ISO 8601), `level`, `logger`, `message` and, where the
code knows them, the fields in `FIELDS` (`run_id`, `channel_id`, `event_id`, `stage`,
`latency_ms`, …), given as `extra={...}` or taken from the request's log context:
the Slack middleware calls `bind(event_id=…, channel_id=…)`, and the work started after
the ack inherits that context (asyncio copies it into each task). The context is a
`ContextVar`, so it belongs to a request's task, never to the process.

What a line never holds at info level: message text, document text, tokens, secrets.
The code logs ids and counts, not text; as a last line of defence every line's message
and traceback are scrubbed of anything shaped like a Slack token or an API key.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from types import MappingProxyType
from typing import IO, Any, Literal

LogFormat = Literal["json", "text"]

# The structured fields a line may carry, in this order after the fixed four.
FIELDS = (
    "run_id",
    "event_id",
    "channel_id",
    "stage",
    "latency_ms",
    "stop_reason",
    "source",
    "outcome",
    "kind",
    "count",
)

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

_CONTEXT: ContextVar[Mapping[str, Any]] = ContextVar("kb_log_context", default=MappingProxyType({}))

_SECRET = re.compile(
    r"xox[a-z]-[A-Za-z0-9-]+|xapp-[A-Za-z0-9-]+|sk-ant-[A-Za-z0-9_-]+|(?i:bearer\s+\S+)"
)


def scrub(text: str) -> str:
    """`text` with anything shaped like a token or key replaced by `[secret]`."""
    return _SECRET.sub("[secret]", text)


def begin(**fields: Any) -> None:
    """Start a request's log context afresh with `fields` (nothing from an earlier request
    handled in the same task, as Socket Mode does, carries over)."""
    _CONTEXT.set({k: v for k, v in fields.items() if v is not None})


def bind(**fields: Any) -> None:
    """Add fields to every line logged from here on in this task (and tasks it starts)."""
    _CONTEXT.set({**_CONTEXT.get(), **{k: v for k, v in fields.items() if v is not None}})


@contextmanager
def bound(**fields: Any) -> Iterator[None]:
    """`bind` for the duration of a block."""
    token = _CONTEXT.set({**_CONTEXT.get(), **{k: v for k, v in fields.items() if v is not None}})
    try:
        yield
    finally:
        _CONTEXT.reset(token)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": scrub(record.getMessage()),
        }
        context = _CONTEXT.get()
        for name in FIELDS:
            value = getattr(record, name, None)
            if value is None:
                value = context.get(name)
            if value is not None:
                line[name] = value
        if record.exc_info:
            line["exception"] = scrub(self.formatException(record.exc_info))
        return json.dumps(line, ensure_ascii=False, default=str)


class _ScrubbingTextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return scrub(super().format(record))


class _OneLineTextFormatter(_ScrubbingTextFormatter):
    """A record as one line, for a person at a terminal: a library's multi-line message
    folded, and an exception as its type and message instead of a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        saved = record.exc_info, record.exc_text, record.stack_info
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        try:
            line = " ".join(super().format(record).split())
        finally:
            record.exc_info, record.exc_text, record.stack_info = saved
        exc = saved[0][1] if saved[0] else None
        if exc is not None:
            line += scrub(f" ({type(exc).__name__}: {' '.join(str(exc).split())})")
        return line


def configure_logging(
    *,
    log_format: LogFormat,
    level: int = logging.INFO,
    stream: IO[str] | None = None,
    tracebacks: bool = True,
) -> logging.Handler:
    """Send every log record at `level` and above to `stream` (stderr) in `log_format`;
    replaces whatever handlers the root logger had. Returns the handler.

    `tracebacks=False` (the interactive commands without --verbose) writes each text
    record on one line, an exception by its type and message."""
    handler = logging.StreamHandler(stream or sys.stderr)
    text = _ScrubbingTextFormatter if tracebacks else _OneLineTextFormatter
    handler.setFormatter(JsonFormatter() if log_format == "json" else text(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # Quiet libraries whose info lines say nothing an operator needs.
    for noisy in ("pgserver", "apscheduler.executors.default", "httpx"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    # Libraries that log whole request and response bodies (message and document text) at
    # debug: never below info, even with --verbose.
    for chatty in ("slack_sdk", "slack_bolt", "anthropic", "httpcore", "aiohttp", "asyncio"):
        logging.getLogger(chatty).setLevel(max(level, logging.INFO))
    return handler
