"""Whole rows in and out of a table, for export, import and nothing else.

A repository names its table, its columns, which of them are jsonb, and its key; these
helpers read rows as plain values (jsonb parsed) and write them back idempotently: an
INSERT … ON CONFLICT DO NOTHING, then, when the key was taken, whether the row already
there is the same one (compared on `same_when`) or another.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import asyncpg

Restored = Literal["added", "present", "conflict"]

# Table and column names are formatted into SQL: they come from module constants in
# store/, and are checked here so that nothing else could ever be.
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]*")


@dataclass(frozen=True, slots=True)
class TableRows:
    table: str
    columns: tuple[str, ...]
    json_columns: frozenset[str]
    key: tuple[str, ...]
    # Columns that tell "the same row, imported before" from "another row with this key".
    same_when: tuple[str, ...]

    def __post_init__(self) -> None:
        names = (self.table, *self.columns, *self.json_columns, *self.key, *self.same_when)
        bad = [n for n in names if not _IDENTIFIER.fullmatch(n)]
        if bad:
            raise ValueError(f"not a plain SQL identifier: {bad[0]!r}")

    def plain(self, row: asyncpg.Record) -> dict[str, Any]:
        values = {c: row[c] for c in self.columns}
        for column in self.json_columns:
            if isinstance(values[column], str):
                values[column] = json.loads(values[column])
        return values

    def select(self, where: str = "TRUE") -> str:
        order = ", ".join(self.key)
        return f"SELECT {', '.join(self.columns)} FROM {self.table} WHERE {where} ORDER BY {order}"

    async def restore(self, conn: asyncpg.Connection, values: Mapping[str, Any]) -> Restored:
        args = [
            json.dumps(values[c]) if c in self.json_columns and values[c] is not None else values[c]
            for c in self.columns
        ]
        marks = ", ".join(f"${i}" for i in range(1, len(self.columns) + 1))
        added = await conn.fetchval(
            f"INSERT INTO {self.table} ({', '.join(self.columns)}) VALUES ({marks}) "
            "ON CONFLICT DO NOTHING RETURNING true",
            *args,
        )
        if added:
            return "added"
        where = " AND ".join(f"{c} = ${i}" for i, c in enumerate(self.key, start=1))
        row = await conn.fetchrow(
            f"SELECT {', '.join(self.same_when)} FROM {self.table} WHERE {where}",
            *[values[c] for c in self.key],
        )
        if row is not None and all(row[c] == values[c] for c in self.same_when):
            return "present"
        return "conflict"

    async def sync_sequence(self, conn: asyncpg.Connection, column: str = "id") -> None:
        """Move the id sequence past the ids imported, so new rows never collide."""
        if not _IDENTIFIER.fullmatch(column):
            raise ValueError(f"not a plain SQL identifier: {column!r}")
        await conn.execute(
            f"SELECT setval(pg_get_serial_sequence('{self.table}', '{column}'), "
            f"GREATEST((SELECT max({column}) FROM {self.table}), 1))"
        )


def ids(rows: Sequence[Mapping[str, Any]], column: str) -> list[int]:
    return sorted({int(r[column]) for r in rows})
