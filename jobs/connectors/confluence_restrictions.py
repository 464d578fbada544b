"""Which Confluence pages are read-restricted, by their own restriction or an ancestor's.

Confluence hides a page from everyone its parent (or any ancestor) is hidden from, but
its REST API lists only the restrictions set on the page itself: a child of a restricted
page answers with empty `restrictions.read` (CONFCLOUD-71108, CONFSERVER-99749). So a
page is restricted here when it or any page of its `ancestors` expansion has read
restrictions of its own. What the listing already showed is known; an ancestor it did
not show is asked for once per run, and concurrent asks for the same id share one call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

OwnRestriction = Callable[[str], Awaitable[bool]]


class ReadRestrictions:
    """One run's answers to "is this page read-restricted, itself or through an ancestor"."""

    def __init__(self, *, lookup: OwnRestriction) -> None:
        # lookup(page id) -> whether that page has read restrictions of its own.
        self._lookup = lookup
        self._own: dict[str, asyncio.Future[bool]] = {}

    def note(self, page_id: str, *, restricted: bool) -> None:
        """Record what a listing said of a page's own restrictions (no call needed)."""
        known = self._own.get(page_id)
        if known is None or known.done():
            future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
            future.set_result(restricted)
            self._own[page_id] = future

    async def restricted(self, *, page_id: str, own: bool, ancestors: Sequence[str]) -> bool:
        self.note(page_id, restricted=own)
        if own:
            return True
        for ancestor in ancestors:
            if await self._own_restriction(ancestor):
                return True
        return False

    async def _own_restriction(self, page_id: str) -> bool:
        known = self._own.get(page_id)
        if known is None:
            known = asyncio.ensure_future(self._lookup(page_id))
            self._own[page_id] = known
        return await asyncio.shield(known)
