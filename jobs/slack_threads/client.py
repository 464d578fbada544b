"""The Slack Web API calls the `slack` source makes, through slack_sdk's AsyncWebClient.

Cursor pagination (`response_metadata.next_cursor`) is followed here; HTTP 429 is waited
out by slack_sdk's rate-limit retry handler, which sleeps for the `Retry-After` Slack
sends. Slack's errors (HTTP 200, `ok: false`) become one-line errors: a refused token
names its environment variable, a channel the bot cannot read names the channel.
Method pages: https://api.slack.com/methods/conversations.history (and .replies, .info,
.list), users.info, chat.getPermalink, auth.test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from jobs.errors import DocumentError, JobsError

_CREDENTIAL_ERRORS = {"not_authed", "invalid_auth", "account_inactive", "token_revoked"}
_PAGE = 200  # Slack's advice for history: no more than 200 per page


class SlackSourceError(JobsError):
    """Slack refused a call the whole source needs (the token, the channel list)."""


class ChannelUnreadable(SlackSourceError):
    """One configured channel cannot be read (missing, or the bot is not a member)."""


class ThreadGone(DocumentError):
    """The thread no longer exists (its parent was deleted)."""


@dataclass(frozen=True, slots=True)
class ChannelInfo:
    id: str
    name: str
    is_private: bool
    is_member: bool


class SlackHistoryApi:
    def __init__(
        self,
        *,
        token: str,
        token_env: str,
        base_url: str = "https://slack.com/api/",
        timeout_seconds: float = 30.0,
        max_rate_limit_retries: int = 5,
    ) -> None:
        self._token_env = token_env
        self._client = AsyncWebClient(
            token=token,
            base_url=base_url,
            timeout=int(timeout_seconds),
            retry_handlers=[
                AsyncRateLimitErrorRetryHandler(max_retry_count=max_rate_limit_retries)
            ],
        )
        # Per run (this object lives for one run): display names by user id.
        self._names: dict[str, str] = {}

    async def bot_user(self) -> str:
        response = await self._call("auth.test")
        return str(response.get("user_id") or "")

    async def channels(self) -> list[ChannelInfo]:
        """Every channel the bot can see (public, and private ones it is a member of)."""
        found = []
        async for page in self._pages(
            "conversations.list", types="public_channel,private_channel", exclude_archived=True
        ):
            found += [_channel(c) for c in page.get("channels", [])]
        return found

    async def channel(self, channel_id: str) -> ChannelInfo:
        response = await self._call("conversations.info", channel=channel_id)
        return _channel(response["channel"])

    async def history(
        self, channel: ChannelInfo, *, oldest: float
    ) -> AsyncIterator[dict[str, Any]]:
        """Top-level messages (thread parents among them) newer than `oldest`, newest first."""
        async for page in self._pages(
            "conversations.history", channel=channel.id, oldest=f"{oldest:.6f}", where=channel
        ):
            for message in page.get("messages", []):
                yield message

    async def replies(self, channel: ChannelInfo, ts: str) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        try:
            async for page in self._pages(
                "conversations.replies", channel=channel.id, ts=ts, where=channel
            ):
                messages += page.get("messages", [])
        except SlackSourceError as error:
            if "thread_not_found" in str(error):
                raise ThreadGone("the thread was deleted in Slack") from error
            raise
        return messages

    async def display_name(self, user: str) -> str:
        if user not in self._names:
            try:
                response = await self._call("users.info", user=user)
                profile = response["user"].get("profile") or {}
                name = (
                    profile.get("display_name")
                    or profile.get("real_name")
                    or response["user"].get("real_name")
                    or response["user"].get("name")
                )
            except SlackSourceError as error:
                if "user_not_found" not in str(error):
                    raise
                name = None
            self._names[user] = str(name or user)
        return self._names[user]

    async def permalink(self, channel: ChannelInfo, ts: str) -> str:
        try:
            response = await self._call("chat.getPermalink", channel=channel.id, message_ts=ts)
        except SlackSourceError as error:
            if "message_not_found" in str(error):
                raise ThreadGone("the thread was deleted in Slack") from error
            raise
        return str(response["permalink"])

    async def _pages(
        self, method: str, *, where: ChannelInfo | None = None, **params: Any
    ) -> AsyncIterator[dict[str, Any]]:
        cursor = None
        while True:
            response = await self._call(
                method, where=where, limit=_PAGE, **params, **({"cursor": cursor} if cursor else {})
            )
            yield response
            cursor = (response.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                return

    async def _call(
        self, method: str, *, where: ChannelInfo | None = None, **params: Any
    ) -> dict[str, Any]:
        try:
            response = await self._client.api_call(method, http_verb="GET", params=params)
        except SlackApiError as error:
            code = str(error.response.get("error") or error.response.status_code)
            raise self._error(method, code, where) from error
        except SlackClientError as error:
            raise SlackSourceError(f"{method}: {type(error).__name__}") from error
        except TimeoutError as error:
            raise SlackSourceError(f"{method}: Slack did not answer in time") from error
        return dict(response.data) if isinstance(response.data, dict) else {}

    def _error(self, method: str, code: str, where: ChannelInfo | None) -> SlackSourceError:
        if code in _CREDENTIAL_ERRORS:
            return SlackSourceError(
                f"Slack refused the token in {self._token_env} ({code}); set {self._token_env} "
                "to the bot token (xoxb-…) of an installed app"
            )
        if where is not None and code in ("channel_not_found", "not_in_channel"):
            return ChannelUnreadable(
                f"#{where.name} ({where.id}): {code}; invite the bot to the channel"
                if code == "not_in_channel"
                else f"{where.id}: channel_not_found (deleted, or private without the bot)"
            )
        if code == "missing_scope":
            return SlackSourceError(
                f"{method}: missing_scope; reinstall the app with the scopes in manifest.yml"
            )
        return SlackSourceError(f"{method}: {code}")


def _channel(data: dict[str, Any]) -> ChannelInfo:
    return ChannelInfo(
        id=str(data["id"]),
        name=str(data.get("name") or data["id"]),
        is_private=bool(data.get("is_private")),
        is_member=bool(data.get("is_member")),
    )
