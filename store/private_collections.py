"""Which collections hold threads of a private Slack channel, and which channel that is.

The slack source (jobs/slack_threads/) puts a private channel's threads in a collection
of their own and marks each document `metadata.slack.visible_only_in` = the channel id,
unless the admin named the collection (then slack.toml's access decides). Search then
leaves those collections out everywhere but in that channel (bot/slack/access/gate.py), whatever
a place's access lists: a private conversation is never quoted where its members can't
read it.

Read afresh for every question, never cached: a cache would leave a channel synced a
moment ago visible everywhere until it expired. A partial index
(store/migrations/0012_private_threads.sql) keeps the read to the marked documents.
"""

from __future__ import annotations

import asyncpg

_OWNERS_SQL = """
SELECT DISTINCT coalesce(d.collection, s.collection) AS collection,
       d.metadata -> 'slack' ->> 'visible_only_in' AS channel
FROM documents d
JOIN sources s ON s.id = d.source_id
WHERE d.metadata -> 'slack' ? 'visible_only_in'
"""


class PrivateCollections:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def owners(self) -> dict[str, frozenset[str]]:
        """Collection → the private channel(s) it may be searched in."""
        found: dict[str, set[str]] = {}
        for row in await self._pool.fetch(_OWNERS_SQL):
            found.setdefault(row["collection"], set()).add(row["channel"])
        return {c: frozenset(channels) for c, channels in found.items()}

    async def hidden_from(self, channel_id: str | None) -> frozenset[str]:
        """The private collections a place may not search (all of them outside channels:
        DMs, the assistant panel, App Home)."""
        owners = await self.owners()
        return frozenset(c for c, channels in owners.items() if channel_id not in channels)
