"""Query-sized embeddings asked for at the same time, gathered into one model call.

When many runs retrieve at once (50 mentions answered together), each asks for its
question's vector, and the embedder has one thread. One model call per question queues
them there, each call paying the hand-off to the thread and its GIL round trips again; on
a busy 2-core machine that queue, not the model, was most of retrieval's time
(bench/results/slack_load.md). The batcher gives the model, in one call, everything asked
for while its previous call ran. A request made while the model is idle starts at once,
with no timer, so a question asked alone is as fast as before; a burst drains in a few
calls (bench/query_batching.py measures the difference).

Work nobody waits for (the sentence warm-up after a start or a reindex, agent/
sentence_warmup.py) asks in the background: its requests go only once no other request
has been made for `background_quiet` seconds, so a burst of questions neither queues
behind it nor shares the two cores with it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import numpy as np

Encode = Callable[[list[str]], Awaitable[np.ndarray]]


@dataclass(slots=True)
class _Request:
    texts: list[str]
    future: asyncio.Future[np.ndarray]


class QueryBatcher:
    """Runs `encode` on the texts of every request waiting, at most `max_texts` a call.

    Each caller gets its own rows back, in order. An error in a call reaches every caller
    whose texts were in it; a caller cancelled while waiting is left out of the next call
    and its cancellation touches no one else. Background requests share a call only with
    other background requests, made once no other request has come for `background_quiet`
    seconds.
    """

    def __init__(self, *, encode: Encode, max_texts: int, background_quiet: float) -> None:
        self._encode = encode
        self._max_texts = max_texts
        self._quiet = background_quiet
        self._waiting: list[_Request] = []
        self._background: list[_Request] = []
        self._drain: asyncio.Task[None] | None = None
        # Set when a request that is not background arrives: ends a background wait.
        self._arrived = asyncio.Event()
        self._last_arrival = float("-inf")  # the loop's clock
        self.calls = 0  # model calls made, for tests and benchmarks

    async def embed(self, texts: Sequence[str], *, background: bool = False) -> np.ndarray:
        loop = asyncio.get_running_loop()
        request = _Request(list(texts), loop.create_future())
        if background:
            self._background.append(request)
        else:
            self._waiting.append(request)
            self._last_arrival = loop.time()
            self._arrived.set()
        if self._drain is None or self._drain.done() or self._drain.get_loop() is not loop:
            self._arrived = asyncio.Event()  # an Event belongs to the loop it first waits on
            self._drain = loop.create_task(self._drain_waiting())
        return await request.future

    async def _drain_waiting(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._waiting or self._background:
                taken = _next_call(self._waiting, self._max_texts)
                if not taken:
                    quiet_in = self._last_arrival + self._quiet - loop.time()
                    if quiet_in > 0:
                        await self._until_arrival(quiet_in)
                        continue
                    taken = _next_call(self._background, self._max_texts)
                await self._run(taken)
        finally:
            # Only when the drain itself is cancelled (its loop shutting down): no
            # caller may wait for a call that will never run.
            for request in (*self._waiting, *self._background):
                request.future.cancel()
            self._waiting.clear()
            self._background.clear()

    async def _until_arrival(self, seconds: float) -> None:
        """Wait `seconds`, or less if a request that is not background arrives."""
        self._arrived.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._arrived.wait(), seconds)

    async def _run(self, requests: list[_Request]) -> None:
        if not requests:
            return
        texts = [text for request in requests for text in request.texts]
        self.calls += 1
        try:
            vectors = await self._encode(texts)
        except asyncio.CancelledError:
            for request in requests:
                request.future.cancel()
            raise
        except Exception as exc:  # noqa: BLE001 - handed to each caller, who re-raises it
            for request in requests:
                if not request.future.done():
                    request.future.set_exception(exc)
            return
        start = 0
        for request in requests:
            end = start + len(request.texts)
            if not request.future.done():
                request.future.set_result(vectors[start:end])
            start = end


def _next_call(waiting: list[_Request], max_texts: int) -> list[_Request]:
    """The first requests of `waiting` (cancelled ones dropped) whose texts fit one call,
    taken off it; the first always goes, however many texts it has."""
    taken: list[_Request] = []
    count = 0
    while waiting:
        request = waiting[0]
        if request.future.done():
            waiting.pop(0)
            continue
        if taken and count + len(request.texts) > max_texts:
            break
        taken.append(waiting.pop(0))
        count += len(request.texts)
    return taken
