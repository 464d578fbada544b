"""The questions this process is answering, whose leases its sweep renews (a heartbeat).

A delivery row's lease (store/deliveries.py) says its question is still being worked on;
while a question is held here, every sweep of this process extends its lease, so a
sweep on another replica never takes a question that is alive. A process that dies
stops renewing, and its questions' leases run out.

A question whose outcome could not be recorded (the database was down when it
finished) stays held, with its outcome, until the sweep records it: otherwise its lease
would run out and a sweep would re-run a question already answered or failed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager


class Leases:
    def __init__(self) -> None:
        self._held: Counter[str] = Counter()
        self._unrecorded: dict[str, str] = {}

    @contextmanager
    def holding(self, key: str | None) -> Iterator[None]:
        """Hold `key` for the block (nothing when `key` is None)."""
        if key is None:
            yield
            return
        self._held[key] += 1
        try:
            yield
        finally:
            self._held[key] -= 1
            if not self._held[key]:
                del self._held[key]

    def finish_later(self, key: str, outcome: str) -> None:
        """`key` finished with `outcome`, not yet recorded: keep its lease meanwhile."""
        self._unrecorded[key] = outcome

    def unrecorded(self) -> list[tuple[str, str]]:
        return sorted(self._unrecorded.items())

    def recorded(self, key: str) -> None:
        self._unrecorded.pop(key, None)

    def keys(self) -> list[str]:
        return sorted(set(self._held) | set(self._unrecorded))
