"""A delivery claimed while Postgres is down: kept in this process until it is back.

Slack has had its 200 by then (the ack never waits on the database: transport/middleware.py), so
it will not retry, and not acking instead would put the database back on the ack path
and leave the question to Slack's three retries over a few minutes. So the claim is
retried, backing off up to `longest` seconds between tries, until the database answers;
the work then runs as if the question had just arrived, and the claim still makes it
exactly once (a duplicate delivery held by another replica finds the key taken). So
that a process stopped during the outage loses nothing, `on_wait` is called at the first
failed try: the caller writes the request to the journal (journal.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from store.errors import CONNECTION_FAILURES

log = logging.getLogger(__name__)


async def claim_when_reachable(
    claim: Callable[[], Awaitable[bool]],
    *,
    on_wait: Callable[[], Awaitable[None]] | None = None,
    first: float = 0.5,
    longest: float = 10,
) -> bool:
    """`claim()`, tried again while the database cannot be reached; `on_wait()` once,
    when it first cannot."""
    delay = first
    waited = False
    while True:
        try:
            claimed = await claim()
        except CONNECTION_FAILURES:
            if not waited:
                log.warning("the database is unreachable; the delivery waits for it")
                waited = True
                if on_wait is not None:
                    await on_wait()
            await asyncio.sleep(delay)  # a back-off between tries, not a wait for an event
            delay = min(delay * 2, longest)
            continue
        if waited:
            log.info("the database is back; the delivery that waited for it goes on")
        return claimed
