"""The Slack Web API client: base URL from settings, and retries for 429s, 5xx and resets.

A 429 waits out `Retry-After` (slack_sdk's rate-limit handler); a 500/503 or a dropped
connection is retried with backoff, so a brief Slack outage costs a delay, not an answer.
"""

from __future__ import annotations

from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

DEFAULT_API_URL = "https://slack.com/api/"


def retry_handlers(*, max_retries: int = 3) -> list[AsyncRetryHandler]:
    return [
        AsyncRateLimitErrorRetryHandler(max_retry_count=max_retries),
        AsyncServerErrorRetryHandler(max_retry_count=max_retries),
        AsyncConnectionErrorRetryHandler(max_retry_count=max_retries),
    ]


def build_web_client(*, token: str, base_url: str = DEFAULT_API_URL) -> AsyncWebClient:
    if not base_url.endswith("/"):
        base_url += "/"
    return AsyncWebClient(token=token, base_url=base_url, retry_handlers=retry_handlers())
