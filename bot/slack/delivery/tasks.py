"""Background work started after Slack's ack: tracked, so shutdown and tests can wait for it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


class BackgroundTasks:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()
        self._idle = asyncio.Event()
        self._idle.set()

    def start(self, work: Coroutine[Any, Any, None], *, name: str) -> None:
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._tasks.add(task)
        self._idle.clear()
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task %s failed", task.get_name(), exc_info=task.exception())
        if not self._tasks:
            self._idle.set()

    async def wait_idle(self) -> None:
        """Return once no background work is running (work started meanwhile included)."""
        while self._tasks:
            await self._idle.wait()

    async def close(self, *, timeout: float = 30) -> None:
        """Let running work finish for up to `timeout` seconds, then cancel the rest."""
        try:
            await asyncio.wait_for(self.wait_idle(), timeout)
        except TimeoutError:
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
