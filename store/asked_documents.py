"""The documents answers cite most: what people ask about, read from the stored runs.

Each run keeps its answer (agent_runs.answer, JSON) with the cited documents; counting
them over recent runs gives the most-asked-about titles, used for the assistant panel's
suggested prompts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg


@dataclass(frozen=True, slots=True)
class CitedDocument:
    title: str
    collection: str
    answers: int  # how many answers cited it


class AskedDocuments:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def most_cited(self, *, since: datetime, limit: int = 20) -> list[CitedDocument]:
        rows = await self._pool.fetch(
            """SELECT c->>'title' AS title, c->>'collection' AS collection,
                      count(DISTINCT r.id) AS answers
               FROM agent_runs r,
                    jsonb_array_elements(
                        CASE WHEN jsonb_typeof(r.answer->'citations') = 'array'
                             THEN r.answer->'citations' ELSE '[]'::jsonb END
                    ) AS c
               WHERE r.created_at >= $1 AND coalesce(c->>'title', '') <> ''
               GROUP BY 1, 2
               ORDER BY answers DESC, title
               LIMIT $2""",
            since,
            limit,
        )
        return [CitedDocument(r["title"], r["collection"] or "", r["answers"]) for r in rows]
