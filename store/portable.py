"""The data that cannot be re-derived, as JSON Lines: escalations (with the experts'
answers, status and resolver), feedback, and the runs they refer to.

Documents, chunks and vectors are not exported: a reindex rebuilds them from their
sources. The file starts with a header line, then one object per line, each with a
`type` (`run`, `escalation`, `feedback`), runs first so every reference resolves, rows
in key order, keys sorted: exporting the same data twice gives the same bytes.

An import checks every line before writing anything (an error names the line), then
restores everything in one transaction. It is idempotent: a row already there (same
key, same content) is left alone, so importing a file twice adds nothing. A row whose
key is taken by *another* row (an id reused in a database that has lived on) stops the
import with the line number: nothing is half-imported.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from store.errors import ExportFileInvalid
from store.escalations import EscalationRepository
from store.feedback import FeedbackRepository
from store.rows import ids
from store.runs import RunRepository

FORMAT = "slack-kb-export"
VERSION = 1

# Each record type's fields and what they hold. "?" allows null.
_INT, _STR, _TIME, _OBJ, _LIST, _BOOL, _NUM, _INTS = (
    "int", "str", "time", "object", "list", "bool", "number", "int list",
)  # fmt: skip
SCHEMAS: dict[str, dict[str, tuple[str, bool]]] = {
    "run": {
        "id": (_INT, False), "created_at": (_TIME, False), "finished_at": (_TIME, True),
        "status": (_STR, False), "question": (_STR, False), "scope": (_OBJ, False),
        "origin": (_OBJ, False), "history_turns": (_INT, False), "reasoner": (_STR, False),
        "stop_reason": (_STR, True), "escalate": (_BOOL, True), "steps": (_LIST, False),
        "queries": (_LIST, False), "evidence_chunk_ids": (_INTS, False),
        "verification": (_OBJ, False), "answer": (_OBJ, True), "error": (_STR, True),
        "standalone_question": (_STR, True), "sub_questions": (_LIST, False),
        "sources": (_LIST, False), "notes": (_LIST, False), "latency_ms": (_NUM, True),
        "stats": (_OBJ, False),
    },
    "escalation": {
        "id": (_INT, False), "run_id": (_INT, False), "team_id": (_STR, False),
        "channel_id": (_STR, False), "thread_ts": (_STR, True), "asker_id": (_STR, False),
        "question": (_STR, False), "collection": (_STR, False),
        "escalated_by": (_STR, False), "escalated_at": (_TIME, False),
        "thread_permalink": (_STR, True), "post_channel_id": (_STR, True),
        "post_ts": (_STR, True), "post_permalink": (_STR, True), "status": (_STR, False),
        "resolved_by": (_STR, True), "resolved_at": (_TIME, True), "answer": (_STR, True),
    },
    "feedback": {
        "run_id": (_INT, False), "user_id": (_STR, False), "vote": (_INT, False),
        "comment": (_STR, True), "created_at": (_TIME, False), "updated_at": (_TIME, False),
    },
}  # fmt: skip
_CHOICES: dict[tuple[str, str], frozenset[object]] = {
    ("escalation", "status"): frozenset({"open", "resolved"}),
    ("feedback", "vote"): frozenset({1, -1}),
}


@dataclass(slots=True)
class ImportReport:
    added: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SCHEMAS, 0))
    present: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SCHEMAS, 0))


async def export_lines(pool: asyncpg.Pool) -> list[str]:
    """The export file's lines (without newlines)."""
    escalations = await EscalationRepository(pool).export()
    feedback = await FeedbackRepository(pool).export()
    runs = await RunRepository(pool).export(ids([*escalations, *feedback], "run_id"))
    lines = [_dump({"type": "header", "format": FORMAT, "version": VERSION})]
    for kind, rows in (("run", runs), ("escalation", escalations), ("feedback", feedback)):
        lines += [_dump({"type": kind, **row}) for row in rows]
    return lines


async def import_lines(pool: asyncpg.Pool, lines: Iterable[str]) -> ImportReport:
    """Check every line, then restore them all in one transaction (see the module doc)."""
    records = parse(lines)
    report = ImportReport()
    restore = {
        "run": RunRepository.restore,
        "escalation": EscalationRepository.restore,
        "feedback": FeedbackRepository.restore,
    }
    async with pool.acquire() as conn, conn.transaction():
        for number, kind, values in records:
            outcome = await restore[kind](conn, values)
            if outcome == "conflict":
                raise ExportFileInvalid(
                    number,
                    f"{kind} {values.get('id')} is already in this database with other "
                    "content; import into a fresh database, or one restored from the same "
                    "source",
                )
            (report.added if outcome == "added" else report.present)[kind] += 1
        await RunRepository.restored(conn)
        await EscalationRepository.restored(conn)
    return report


def parse(lines: Iterable[str]) -> list[tuple[int, str, dict[str, Any]]]:
    """(line number, type, values) per record; ExportFileInvalid names the first bad line."""
    records: list[tuple[int, str, dict[str, Any]]] = []
    runs: set[int] = set()
    header = False
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ExportFileInvalid(number, f"not JSON ({exc.msg})") from None
        if not isinstance(data, dict):
            raise ExportFileInvalid(number, "not a JSON object")
        kind = data.pop("type", None)
        if not header:
            if kind != "header" or data.get("format") != FORMAT:
                raise ExportFileInvalid(number, f"not a {FORMAT} file (no header line)")
            if data.get("version") != VERSION:
                raise ExportFileInvalid(number, f"version {data.get('version')!r} is unknown")
            header = True
            continue
        if kind not in SCHEMAS:
            raise ExportFileInvalid(number, f"unknown type {kind!r}")
        values = _checked(number, kind, data)
        if kind == "run":
            runs.add(values["id"])
        elif values["run_id"] not in runs:
            raise ExportFileInvalid(
                number, f"{kind} refers to run {values['run_id']}, not in the file"
            )
        records.append((number, kind, values))
    if not header:
        raise ExportFileInvalid(1, f"empty: not a {FORMAT} file")
    return records


def _checked(number: int, kind: str, data: Mapping[str, Any]) -> dict[str, Any]:
    schema = SCHEMAS[kind]
    unknown = sorted(set(data) - set(schema))
    if unknown:
        raise ExportFileInvalid(number, f"{kind}: unknown field {unknown[0]!r}")
    values: dict[str, Any] = {}
    for name, (expected, nullable) in schema.items():
        if name not in data:
            raise ExportFileInvalid(number, f"{kind}: field {name!r} is missing")
        value = data[name]
        if value is None and nullable:
            values[name] = None
            continue
        converted = _convert(value, expected)
        if converted is _BAD:
            raise ExportFileInvalid(number, f"{kind}: field {name!r} must be {_article(expected)}")
        choices = _CHOICES.get((kind, name))
        if choices is not None and converted not in choices:
            allowed = ", ".join(sorted(map(str, choices)))
            raise ExportFileInvalid(number, f"{kind}: {name} {converted!r} is not one of {allowed}")
        values[name] = converted
    return values


_BAD = object()


def _convert(value: Any, expected: str) -> Any:
    if expected == _INT:
        return value if isinstance(value, int) and not isinstance(value, bool) else _BAD
    if expected == _STR:
        return value if isinstance(value, str) else _BAD
    if expected == _BOOL:
        return value if isinstance(value, bool) else _BAD
    if expected == _NUM:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return float(value) if ok else _BAD
    if expected == _OBJ:
        return value if isinstance(value, dict) else _BAD
    if expected == _LIST:
        return value if isinstance(value, list) else _BAD
    if expected == _INTS:
        ok = isinstance(value, list) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        )
        return value if ok else _BAD
    if not isinstance(value, str):  # _TIME
        return _BAD
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return _BAD
    return parsed if parsed.tzinfo is not None else _BAD


def _article(expected: str) -> str:
    return {_TIME: "an ISO 8601 time with a UTC offset", _INT: "an integer"}.get(
        expected, f"a {expected}" if expected[0] not in "aeiou" else f"an {expected}"
    )


def _dump(record: Mapping[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False, default=_default)


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"cannot export a {type(value).__name__}")
