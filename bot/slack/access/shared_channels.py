"""Whether a channel is shared with another organisation (Slack Connect), so everything
posted in it is read by people outside the workspace, whoever asked.

conversations.info (https://docs.slack.dev/reference/methods/conversations.info) says
`is_ext_shared` (and `is_pending_ext_shared` while an invitation is open); a channel
shared only within an Enterprise Grid organisation (`is_org_shared`) is not outside.
Direct messages are judged by who is in them (bot/slack/access/people.py), not here. A channel
Slack will not describe counts as shared: when in doubt, no content.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

log = logging.getLogger(__name__)

CACHE_SECONDS = 300.0


class SharedChannels:
    """conversations.info with a short per-channel cache; one per running app."""

    def __init__(
        self,
        *,
        client: AsyncWebClient,
        cache_seconds: float = CACHE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._cache_seconds = cache_seconds
        self._clock = clock
        self._known: dict[str, tuple[float, bool]] = {}

    async def with_outsiders(self, channel_id: str) -> bool:
        now = self._clock()
        cached = self._known.get(channel_id)
        if cached is not None and now - cached[0] < self._cache_seconds:
            return cached[1]
        try:
            channel = (await self._client.conversations_info(channel=channel_id)).get("channel")
        except SlackApiError as exc:
            log.warning(
                "conversations.info refused (%s): treated as shared", exc.response.get("error")
            )
            return True
        shared = any((channel or {}).get(f) for f in ("is_ext_shared", "is_pending_ext_shared"))
        self._known = {c: k for c, k in self._known.items() if now - k[0] < self._cache_seconds}
        self._known[channel_id] = (now, shared)
        return shared
