"""Slack threads the `slack` sources index, read again as soon as they change.

A scheduled run of a `slack` source sees an edit or a deletion only when its re-scan
window comes round (`rescan_days`, every few hours). While the bot runs, Slack tells it at
once: a `message` event of subtype `message_changed` or `message_deleted`, or a new reply,
in a channel the bot is in. The listener hands each such event here (`touched`: no I/O,
nothing on the ack path); a few seconds later, the threads touched meanwhile are read
again, each source's own at once (`ReindexJob.refresh`: one `conversations.replies` per
thread, the cursor untouched). Only channels a source has synced count: their ids are in
its saved cursor. A refresh skipped because a reindex held the lock is tried again at the
next flush; one that fails is logged, and the next scheduled run catches the change.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from jobs.config import SlackSourceConfig

log = logging.getLogger(__name__)


class RefreshOutcome(Protocol):
    skipped: bool
    errors: dict[str, str]


Refresh = Callable[[SlackSourceConfig, list[str]], Awaitable[RefreshOutcome]]


class SavedCursors(Protocol):
    async def get(self, source: str) -> Any: ...


class ThreadWatch:
    def __init__(
        self,
        *,
        sources: Sequence[SlackSourceConfig],
        refresh: Refresh,
        cursors: SavedCursors,
        delay_seconds: float = 5.0,
    ) -> None:
        self._sources = list(sources)
        self._refresh = refresh
        self._cursors = cursors
        self._delay = delay_seconds
        self._pending: set[str] = set()  # CHANNEL/THREAD_TS
        self._flushing: asyncio.Task[None] | None = None
        self.refreshed = 0  # threads read again so far (for tests and logs)

    def touched(self, event: Mapping[str, Any]) -> None:
        """Note the thread an edit, a deletion or a reply belongs to (called on the ack
        path: no I/O here)."""
        if not self._sources:
            return
        uri = thread_of(event)
        if uri is None:
            return
        self._pending.add(uri)
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.get_running_loop().create_task(self._flush_later())

    async def _flush_later(self) -> None:
        await asyncio.sleep(self._delay)
        await self.flush()

    async def flush(self) -> None:
        """Read the touched threads again now, each with the source that synced its channel."""
        touched, self._pending = self._pending, set()
        for config in self._sources:
            try:
                channels = await self._synced_channels(config.name)
                uris = sorted(u for u in touched if u.partition("/")[0] in channels)
                if not uris:
                    continue
                outcome = await self._refresh(config, uris)
            except Exception:  # a refresh is a courtesy: the scheduled run catches up
                log.warning(
                    "could not read touched threads of %s again", config.name, exc_info=True
                )
                continue
            if outcome.skipped:
                self._pending.update(uris)  # a reindex held the lock: next flush
            elif outcome.errors:
                log.warning("refreshing threads of %s: %s", config.name, outcome.errors)
            else:
                self.refreshed += len(uris)
        if self._pending and (self._flushing is None or self._flushing.done()):
            self._flushing = asyncio.get_running_loop().create_task(self._flush_later())

    async def close(self) -> None:
        if self._flushing is not None:
            self._flushing.cancel()

    async def _synced_channels(self, source: str) -> set[str]:
        saved = await self._cursors.get(source)
        cursor = getattr(saved, "cursor", None) or {}
        channels = cursor.get("channels") if isinstance(cursor, dict) else None
        return set(channels) if isinstance(channels, dict) else set()


def thread_of(event: Mapping[str, Any]) -> str | None:
    """`CHANNEL/THREAD_TS` of the thread an event changes, or None: an edit (the edited
    message's thread), a deletion (the deleted message's), or a reply someone wrote.
    Bots' messages are not part of an indexed thread."""
    channel = event.get("channel")
    if event.get("type") != "message" or not isinstance(channel, str):
        return None
    subtype = event.get("subtype")
    if subtype == "message_changed":
        message = event.get("message")
    elif subtype == "message_deleted":
        message = event.get("previous_message") or {"ts": event.get("deleted_ts")}
    elif subtype in (None, "thread_broadcast", "file_share"):
        message = event if event.get("thread_ts") else None  # a reply, not a new post
    else:
        return None
    if not isinstance(message, Mapping) or message.get("bot_id"):
        return None
    root = message.get("thread_ts") or message.get("ts")
    return f"{channel}/{root}" if isinstance(root, str) and root else None
