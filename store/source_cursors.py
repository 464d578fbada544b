"""The source_cursors table: where each change-feed source was last read to (migration 0010)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg


@dataclass(frozen=True, slots=True)
class SourceCursor:
    source: str
    cursor: dict[str, Any]
    updated_at: datetime


class SourceCursorRepository:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def get(self, source: str) -> SourceCursor | None:
        """The cursor saved for `source`, or None: never synced (a first run reads everything)."""
        row = await self._pool.fetchrow(
            "SELECT source, cursor, updated_at FROM source_cursors WHERE source = $1", source
        )
        if row is None:
            return None
        return SourceCursor(row["source"], json.loads(row["cursor"]), row["updated_at"])

    async def save(self, source: str, cursor: dict[str, Any]) -> None:
        await self._pool.execute(
            """INSERT INTO source_cursors (source, cursor) VALUES ($1, $2)
               ON CONFLICT (source) DO UPDATE SET cursor = EXCLUDED.cursor, updated_at = now()""",
            source,
            json.dumps(cursor),
        )

    async def forget(self, source: str) -> bool:
        """Drop the cursor, so the next run reads the whole source again (True if one was held)."""
        result = await self._pool.execute("DELETE FROM source_cursors WHERE source = $1", source)
        return result.split()[-1] != "0"
