"""A question's delivery row kept up to date while it is answered, best effort.

The row (store/deliveries.py) is claimed with where the answer goes; as the answer
goes out, the desks note what a restart would need to reach the asker: the thread the
bot posted a `/kb` question in, the placeholder's ts, or that a private placeholder was
shown. Only the start-up recovery (recovery.py) reads these, so a failed write is
logged and the answer goes on.
"""

from __future__ import annotations

import logging

from store.deliveries import DeliveryLog

log = logging.getLogger(__name__)


class DeliveryTrail:
    def __init__(self, deliveries: DeliveryLog, key: str) -> None:
        self._deliveries = deliveries
        self.key = key

    async def replying_in(self, thread_ts: str) -> None:
        try:
            await self._deliveries.replying_in(self.key, thread_ts=thread_ts)
        except Exception:
            log.warning("could not record the answer's thread", exc_info=True)

    async def placeholder_posted(self, ts: str) -> None:
        try:
            await self._deliveries.placeholder_posted(self.key, ts=ts)
        except Exception:
            log.warning("could not record the placeholder", exc_info=True)

    async def placeholder_shown_ephemerally(self) -> None:
        try:
            await self._deliveries.placeholder_shown_ephemerally(self.key)
        except Exception:
            log.warning("could not record the private placeholder", exc_info=True)

    async def finish(self, outcome: str) -> None:
        try:
            await self._deliveries.finish(self.key, outcome=outcome)
        except Exception:
            log.warning("could not mark the delivery %s", outcome, exc_info=True)
