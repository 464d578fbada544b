"""Agent runs capped per workspace: a fair queue with visible positions.

Each workspace (team) gets `limit` concurrent runs; later questions wait in order and are
told their place, so a busy workspace cannot starve another and nobody waits in silence.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

OnQueued = Callable[[int], Awaitable[None]]
"""Told the number of questions ahead (1 = next) when a question has to wait."""


@dataclass(slots=True)
class _Team:
    running: int = 0
    waiting: deque[asyncio.Future[None]] = field(default_factory=deque)


class WorkspaceQueue:
    def __init__(self, *, limit: int) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self._limit = limit
        self._teams: dict[str, _Team] = {}

    def depth(self) -> int:
        """Questions waiting for a slot, over every workspace."""
        return sum(len(team.waiting) for team in self._teams.values())

    def waiting(self, team_id: str) -> int:
        team = self._teams.get(team_id)
        return len(team.waiting) if team else 0

    @asynccontextmanager
    async def slot(self, team_id: str, *, on_queued: OnQueued | None = None) -> AsyncIterator[bool]:
        """Hold one of the team's run slots; yields whether the question had to wait."""
        team = self._teams.setdefault(team_id, _Team())
        waited = team.running >= self._limit
        if waited:
            await self._wait(team, on_queued)
        else:
            team.running += 1
        try:
            yield waited
        finally:
            self._release(team_id, team)

    async def _wait(self, team: _Team, on_queued: OnQueued | None) -> None:
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        team.waiting.append(turn)
        try:
            if on_queued is not None:
                await on_queued(len(team.waiting))
            await turn
        except BaseException:
            if turn.done() and not turn.cancelled():
                team.running -= 1  # the slot was handed over just as we gave up
                self._hand_over(team)
            elif turn in team.waiting:
                team.waiting.remove(turn)
            raise

    def _release(self, team_id: str, team: _Team) -> None:
        team.running -= 1
        self._hand_over(team)
        if not team.running and not team.waiting:
            self._teams.pop(team_id, None)

    def _hand_over(self, team: _Team) -> None:
        while team.waiting and team.running < self._limit:
            turn = team.waiting.popleft()
            if not turn.done():
                team.running += 1
                turn.set_result(None)
