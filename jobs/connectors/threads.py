"""Running a blocking client (atlassian-python-api, google-api-python-client) off the loop.

Each call goes to a worker thread (asyncio.to_thread), at most `limit` at once per
source, so a sync never stalls the event loop that acks Slack, and a big source cannot
take every thread of the default executor.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class BlockingCalls:
    def __init__(self, limit: int = 4) -> None:
        self._slots = asyncio.Semaphore(limit)

    async def run(self, function: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        async with self._slots:
            return await asyncio.to_thread(functools.partial(function, *args, **kwargs))
