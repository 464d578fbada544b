"""How every connector calls its API: a concurrency cap, and retries that respect the server.

HTTP 429 waits what the server's Retry-After says (capped, so a hostile value cannot
stall a run for a day); a 5xx or a dropped connection waits an exponential backoff with
full jitter, so many callers that failed together do not come back together
(tenacity's `wait_random_exponential`). After `attempts` tries the last error surfaces:
the connector turns it into that one document's failure, or the run's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_random_exponential,
)

from jobs.connectors.errors import TransientError

T = TypeVar("T")

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    attempts: int = 5
    # Backoff for a 5xx: a random wait in [0, min(max_delay, base_delay * 2^attempt)].
    base_delay: float = 0.5
    max_delay: float = 30.0
    # The longest Retry-After honoured as given; longer ones wait this long.
    max_retry_after: float = 120.0
    # Calls of one source in flight at once.
    concurrency: int = 4


class ApiCalls:
    """Every API call of one source run goes through `call`; `calls` counts the attempts.

    Built per run (never shared between sources), so the cap is per source.
    """

    def __init__(self, policy: RetryPolicy | None = None, *, sleep: Sleep | None = None) -> None:
        self.policy = policy or RetryPolicy()
        self._gate = asyncio.Semaphore(self.policy.concurrency)
        self._sleep = sleep or asyncio.sleep
        self._backoff = wait_random_exponential(
            multiplier=self.policy.base_delay, max=self.policy.max_delay
        )
        self.calls = 0
        self.retries = 0

    async def call(self, request: Callable[[], Awaitable[T]]) -> T:
        """`request()` under the cap, retried on TransientError; other errors pass through."""
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.policy.attempts),
            wait=self._wait,
            retry=retry_if_exception_type(TransientError),
            sleep=self._sleep,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                if attempt.retry_state.attempt_number > 1:
                    self.retries += 1
                return await self._once(request)
        raise AssertionError("unreachable: tenacity re-raises the last error")

    async def _once(self, request: Callable[[], Awaitable[T]]) -> T:
        # The slot is released while waiting to retry: a rate-limited call must not keep
        # the other calls of the source from going out.
        async with self._gate:
            self.calls += 1
            return await request()

    def _wait(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        if isinstance(error, TransientError) and error.retry_after is not None:
            return min(max(error.retry_after, 0.0), self.policy.max_retry_after)
        return float(self._backoff(state))


def retry_after_seconds(value: str | None) -> float | None:
    """An HTTP Retry-After header's seconds (RFC 9110 §10.2.3); None if absent or a date
    (the connectors' systems send seconds; a date then gets the ordinary backoff)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None
