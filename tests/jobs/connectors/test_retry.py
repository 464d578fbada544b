"""The retry policy every connector's calls go through (jobs/connectors/retry.py)."""

from __future__ import annotations

import asyncio

import pytest

from jobs.connectors.errors import ConnectorError, TransientError
from jobs.connectors.retry import ApiCalls, RetryPolicy, retry_after_seconds


class Flaky:
    """Fails with the given errors in turn, then answers."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def recording() -> tuple[ApiCalls, list[float]]:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    return ApiCalls(RetryPolicy(attempts=4, base_delay=1.0, max_delay=8.0), sleep=sleep), slept


async def test_a_429_waits_what_retry_after_says_then_succeeds() -> None:
    calls, slept = recording()
    request = Flaky(TransientError("429", retry_after=7.0))
    assert await calls.call(request) == "ok"
    assert slept == [7.0] and calls.calls == 2 and calls.retries == 1


async def test_a_hostile_retry_after_is_capped() -> None:
    calls, slept = recording()
    assert await calls.call(Flaky(TransientError("429", retry_after=86_400.0))) == "ok"
    assert slept == [calls.policy.max_retry_after]


async def test_5xx_backs_off_exponentially_with_jitter_within_the_cap() -> None:
    calls, slept = recording()
    request = Flaky(*(TransientError("500") for _ in range(3)))
    assert await calls.call(request) == "ok"
    # Full jitter: attempt n waits a random time in [0, min(8, 1 * 2^n)].
    assert len(slept) == 3
    assert all(0 <= s <= cap for s, cap in zip(slept, (2.0, 4.0, 8.0), strict=True))


async def test_after_the_last_attempt_the_error_surfaces() -> None:
    calls, slept = recording()
    request = Flaky(*(TransientError("503") for _ in range(10)))
    with pytest.raises(TransientError):
        await calls.call(request)
    assert request.calls == 4 and len(slept) == 3


async def test_other_errors_are_not_retried() -> None:
    calls, slept = recording()
    request = Flaky(ConnectorError("401"))
    with pytest.raises(ConnectorError):
        await calls.call(request)
    assert request.calls == 1 and slept == []


async def test_no_more_than_concurrency_calls_are_in_flight() -> None:
    calls = ApiCalls(RetryPolicy(concurrency=2))
    in_flight, most = 0, 0
    release = asyncio.Event()

    async def request() -> None:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await release.wait()
        in_flight -= 1

    tasks = [asyncio.create_task(calls.call(request)) for _ in range(5)]
    while most < 2:
        await asyncio.sleep(0)
    for _ in range(20):
        await asyncio.sleep(0)  # give the other three every chance to start
    assert most == 2
    release.set()
    await asyncio.gather(*tasks)


@pytest.mark.parametrize(
    ("header", "seconds"), [("3", 3.0), (" 1.5 ", 1.5), (None, None), ("-1", None),
                            ("Wed, 21 Oct 2015 07:28:00 GMT", None)],
)  # fmt: skip
def test_retry_after_reads_seconds(header: str | None, seconds: float | None) -> None:
    assert retry_after_seconds(header) == seconds
