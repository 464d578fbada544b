"""The `slack` source: each answered thread of the configured channels is one document.

Per channel, per run: `conversations.history` from `oldest` = the newest thread seen
last run, or `rescan_days` ago if that is earlier (late replies, edits and deletions
happen to recent threads), or `lookback_days` ago on the first sync. Each thread parent
in that window is read whole (`conversations.replies`) and becomes a document if it is
a person's question with enough replies from people (optionally with a ✅ reaction or an
expert's reply); messages from bots (this bot's answers among them) and joins are left
out. A stored thread started inside the window that history no longer shows was deleted
in Slack: it is deleted here. Threads older than the window are kept as they are.

Document: uri `CHANNEL/THREAD_TS`, URL the thread's permalink (chat.getPermalink, read
once and kept), title `#channel: the question's first line`, updated = the last reply's
time, collection = the channel's name (or `collections` in the settings). The cursor:
per channel id, its name and the newest thread ts seen.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from jobs.config import SlackSettings
from jobs.connectors.base import ChangeFeedSource, ConnectorContext, Cursor, SourceCheck
from jobs.documents import (
    FailedDocument,
    GoneDocument,
    SourceDocument,
    SourceItem,
    UnchangedDocument,
)
from jobs.slack_threads.client import (
    ChannelInfo,
    ChannelUnreadable,
    SlackHistoryApi,
    ThreadGone,
)
from jobs.slack_threads.threads import (
    ThreadRules,
    mentioned_users,
    qualifies,
    thread_text,
    ts_time,
)

_DAY = 86_400.0


class SlackThreadsSource(ChangeFeedSource):
    def __init__(
        self,
        *,
        name: str,
        settings: SlackSettings,
        context: ConnectorContext,
        api: Callable[[], SlackHistoryApi],
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(name=name, context=context)
        self._settings = settings
        self._api = api
        self._clock = clock
        self._rules = ThreadRules(
            min_replies=settings.min_replies,
            require_reaction=settings.require_reaction,
            experts=tuple(settings.experts),
        )
        self._state: dict[str, dict[str, Any]] = {}
        self._retry: set[str] = set()

    async def changes(self, cursor: Cursor | None) -> AsyncIterator[SourceItem]:
        saved: dict[str, dict[str, Any]] = dict((cursor or {}).get("channels", {}))
        api = self._api()
        bot_user = await api.bot_user()
        channels, unreadable = await self._channels(api)
        for configured, reason in unreadable:
            yield FailedDocument(f"{configured}/", reason)
        for channel in channels:
            async for item in self._channel_items(api, channel, saved.get(channel.id), bot_user):
                yield item
        readable = {c.id for c in channels}
        failed = {configured for configured, _ in unreadable}
        for configured in failed:
            # Keep where an unreadable channel's feed stopped, for when it is readable again.
            for channel_id, entry in saved.items():
                if configured in (channel_id, entry.get("name")):
                    self._state[channel_id] = dict(entry)
        for uri, stored in self.context.stored.items():
            channel_id = uri.split("/", 1)[0]
            if channel_id in readable:
                continue
            if channel_id in failed or _channel_name(stored.metadata) in failed:
                yield UnchangedDocument(uri)  # its channel could not be read this run
            else:
                yield GoneDocument(uri, "its channel is no longer in the source's settings")

    async def refresh(self, uris: frozenset[str]) -> AsyncIterator[SourceItem]:
        """Threads the bot saw edited, deleted or replied to (`CHANNEL/THREAD_TS`), read
        again now; one in a channel this source does not read is ignored."""
        api = self._api()
        bot_user = await api.bot_user()
        channels, _ = await self._channels(api)
        by_id = {c.id: c for c in channels}
        for uri in sorted(uris):
            channel_id, _, ts = uri.partition("/")
            channel = by_id.get(channel_id)
            if channel is None or not ts:
                continue
            item = await self._thread(api, channel, ts, uri, bot_user)
            if item is not None:
                yield item

    def cursor_after(self, *, failed: Sequence[str]) -> Cursor:
        state = {channel: dict(entry) for channel, entry in self._state.items()}
        for uri in failed:
            channel, _, thread = uri.partition("/")
            if channel in state and thread:
                # Read that thread again next run: start no later than it.
                newest = float(state[channel]["newest"])
                state[channel]["newest"] = f"{min(newest, float(thread) - 1e-6):.6f}"
        return {"channels": state}

    async def check(self, *, titles: int = 3) -> SourceCheck:
        api = self._api()
        await api.bot_user()
        channels, unreadable = await self._channels(api)
        if unreadable:
            raise ChannelUnreadable(unreadable[0][1])
        threads = 0
        oldest = self._clock() - self._settings.lookback_days * _DAY
        for channel in channels:
            async for message in api.history(channel, oldest=oldest):
                threads += 1 if message.get("reply_count") else 0
        return SourceCheck(visible=threads, titles=tuple(f"#{c.name}" for c in channels[:titles]))

    # -- channels -----------------------------------------------------------------------

    async def _channels(
        self, api: SlackHistoryApi
    ) -> tuple[list[ChannelInfo], list[tuple[str, str]]]:
        """The configured channels the bot can read, and (channel, reason) for the others."""
        wanted = self._settings.channels
        by_name: dict[str, ChannelInfo] = {}
        if any(not self._settings.is_id(c) for c in wanted):
            by_name = {c.name: c for c in await api.channels()}
        found: list[ChannelInfo] = []
        unreadable: list[tuple[str, str]] = []
        for configured in wanted:
            try:
                if self._settings.is_id(configured):
                    channel = await api.channel(configured)
                elif configured in by_name:
                    channel = by_name[configured]
                else:
                    raise ChannelUnreadable(
                        f"#{configured}: no such channel the bot can see (a private channel "
                        "needs the bot invited)"
                    )
                if not channel.is_member:
                    raise ChannelUnreadable(
                        f"#{channel.name} ({channel.id}): the bot is not a member; invite it "
                        "with /invite @kb"
                    )
                found.append(channel)
            except ChannelUnreadable as error:
                unreadable.append((configured, str(error)))
        return found, unreadable

    def _named_collection(self, channel: ChannelInfo) -> str | None:
        named = self._settings.collections
        return named.get(channel.id) or named.get(channel.name)

    def _collection(self, channel: ChannelInfo) -> str:
        return self._named_collection(channel) or channel.name

    async def _channel_items(
        self,
        api: SlackHistoryApi,
        channel: ChannelInfo,
        entry: dict[str, Any] | None,
        bot_user: str,
    ) -> AsyncIterator[SourceItem]:
        now = self._clock()
        if entry:
            oldest = min(float(entry["newest"]), now - self._settings.rescan_days * _DAY)
            newest = float(entry["newest"])
        else:
            oldest = newest = now - self._settings.lookback_days * _DAY
        seen: set[str] = set()
        try:
            async for message in api.history(channel, oldest=oldest):
                newest = max(newest, float(message["ts"]))
                if not message.get("reply_count"):
                    continue
                uri = f"{channel.id}/{message['ts']}"
                seen.add(uri)
                item = await self._thread(api, channel, str(message["ts"]), uri, bot_user)
                if item is not None:
                    yield item
        except ChannelUnreadable as error:
            yield FailedDocument(f"{channel.id}/", str(error))
            return
        for uri in self.context.stored:
            channel_id, _, thread = uri.partition("/")
            if channel_id == channel.id and thread and float(thread) > oldest and uri not in seen:
                yield GoneDocument(uri, "the thread was deleted in Slack")
        self._state[channel.id] = {"name": channel.name, "newest": f"{newest:.6f}"}

    async def _thread(
        self, api: SlackHistoryApi, channel: ChannelInfo, ts: str, uri: str, bot_user: str
    ) -> SourceItem | None:
        stored = self.context.stored.get(uri)
        try:
            messages = await api.replies(channel, ts)
            if not qualifies(messages, self._rules, bot_user=bot_user):
                if stored:
                    return GoneDocument(uri, "no longer an answered thread")
                return None
            names = {
                user: await api.display_name(user)
                for user in mentioned_users(messages, bot_user=bot_user)
            }
            url = stored.url if stored and stored.url else await api.permalink(channel, ts)
        except ThreadGone as error:
            return GoneDocument(uri, error.reason) if stored else None
        thread = thread_text(messages, names=names, bot_user=bot_user)
        return SourceDocument(
            uri=uri,
            title=f"#{channel.name}: {thread.title}",
            url=url,
            text=thread.text,
            metadata={
                "slack": {
                    "channel": channel.id,
                    "channel_name": channel.name,
                    "private": channel.is_private,
                    # Searched only in that channel (store/private_collections.py), unless
                    # the admin named the collection: then slack.toml's access decides.
                    **(
                        {"visible_only_in": channel.id}
                        if channel.is_private and not self._named_collection(channel)
                        else {}
                    ),
                    "thread_ts": ts,
                    "replies": thread.replies,
                    "authors": list(thread.authors),
                }
            },
            updated_at=ts_time(thread.latest),
            collection=self._collection(channel),
        )


def _channel_name(metadata: dict[str, Any]) -> str | None:
    slack = metadata.get("slack")
    name = slack.get("channel_name") if isinstance(slack, dict) else None
    return name if isinstance(name, str) else None
