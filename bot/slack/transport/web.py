"""The Slack Web API client: base URL from settings, and retries for 429s, 5xx and resets.

A 429 waits out `Retry-After` (slack_sdk's rate-limit handler); a 500/503 or a dropped
connection is retried with backoff, so a brief Slack outage costs a delay, not an answer.
One aiohttp session is shared by every call, so calls reuse connections instead of
opening one each. The bot's identity (`auth.test`) is read once at start-up: a bad token
is one line then, and no ack ever waits for `auth.test`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import aiohttp
from slack_bolt.authorization import AuthorizeResult
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.errors import SlackBotError

DEFAULT_API_URL = "https://slack.com/api/"

OnApiError = Callable[[str], None]
"""Told the kind of each failed Web API attempt: ratelimited, 5xx or other."""


class ErrorObserver(AsyncRetryHandler):
    """Never retries: sees every attempt first and reports the failed ones by kind."""

    def __init__(self, on_error: OnApiError) -> None:
        super().__init__(max_retry_count=1_000_000)
        self._on_error = on_error

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        kind = api_error_kind(response, error)
        if kind is not None:
            self._on_error(kind)
        return False


def api_error_kind(response: HttpResponse | None, error: Exception | None) -> str | None:
    """ratelimited (429), 5xx, other (a dropped connection, `ok: false`), None for success."""
    if error is not None and response is None:
        return "other"
    if response is None:
        return None
    if response.status_code == 429:
        return "ratelimited"
    if response.status_code >= 500:
        return "5xx"
    body: Any = response.body
    if response.status_code >= 400 or (isinstance(body, dict) and body.get("ok") is False):
        return "other"
    return None


def retry_handlers(
    *, max_retries: int = 3, on_error: OnApiError | None = None
) -> list[AsyncRetryHandler]:
    observer: list[AsyncRetryHandler] = [ErrorObserver(on_error)] if on_error else []
    return [
        *observer,
        AsyncRateLimitErrorRetryHandler(max_retry_count=max_retries),
        AsyncServerErrorRetryHandler(max_retry_count=max_retries),
        AsyncConnectionErrorRetryHandler(max_retry_count=max_retries),
    ]


def build_web_client(
    *,
    token: str | None,
    base_url: str = DEFAULT_API_URL,
    session: aiohttp.ClientSession | None = None,
    on_error: OnApiError | None = None,
) -> AsyncWebClient:
    if not base_url.endswith("/"):
        base_url += "/"
    return AsyncWebClient(
        token=token,
        base_url=base_url,
        session=session,
        retry_handlers=retry_handlers(on_error=on_error),
    )


def without_token(client: AsyncWebClient) -> AsyncWebClient:
    """The same client minus its token: bolt's, which takes the token from `authorize`."""
    return build_web_client(token=None, base_url=client.base_url, session=client.session)


async def bot_identity(client: AsyncWebClient) -> AuthorizeResult:
    """Who the bot is (`auth.test`), as bolt's authorization wants it."""
    try:
        response = await client.auth_test()
    except SlackApiError as exc:
        raise SlackBotError(
            f"Slack refused the bot token ({exc.response.get('error')}); check SLACK_BOT_TOKEN"
        ) from exc
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        raise SlackBotError(
            f"cannot reach the Slack Web API at {client.base_url} ({type(exc).__name__}); "
            "check SLACK_API_URL and the network"
        ) from exc
    return AuthorizeResult.from_auth_test_response(
        auth_test_response=response, bot_token=client.token
    )
