"""The reasoner in charge of a run, with its fallback: every decision goes through here.

When the reasoner is unavailable (ReasonerUnavailable) the decision is retried with the
fallback reasoner, which then makes the rest of the run's decisions; the trace says so.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from agent.errors import ReasonerUnavailable
from agent.reasoners.base import Reasoner, Route
from agent.run_recorder import RunRecorder

log = logging.getLogger(__name__)
T = TypeVar("T")


class Decisions:
    def __init__(
        self, reasoner: Reasoner, fallback: Reasoner | None, recorder: RunRecorder
    ) -> None:
        self.reasoner = reasoner
        self._fallback = fallback
        self._recorder = recorder

    async def decide(
        self, action: str, summary: str, call: Callable[[Reasoner], Awaitable[T]]
    ) -> T:
        """A decision recorded as one step of the trace."""
        started = time.perf_counter()
        result = await self.quietly(call)
        self._recorder.record(action, summary, _summary(result), started)
        return result

    async def quietly(self, call: Callable[[Reasoner], Awaitable[T]]) -> T:
        """A decision the caller records (or that is too small to record)."""
        try:
            return await call(self.reasoner)
        except ReasonerUnavailable as exc:
            fallback = self._fallback
            if fallback is None or fallback is self.reasoner:
                raise
            note = f"{self.reasoner.name} was unavailable ({exc}); {fallback.name} took over"
            log.warning("%s", note)
            self._recorder.state.notes.append(note)
            self._recorder.record(
                "fallback", self.reasoner.name, fallback.name, time.perf_counter()
            )
            self.reasoner = fallback
            return await call(fallback)


def _summary(result: object) -> str:
    if isinstance(result, Route):
        return f"{result.action}: {result.standalone}"
    if isinstance(result, list):
        return f"{len(result)} items"
    if result is None:
        return "nothing new"
    return str(result)[:200]
