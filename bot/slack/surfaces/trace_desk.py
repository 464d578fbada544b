"""The "Why this answer?" trace: the stored run, shown to whoever clicked, and only to them.

The trace is filtered with the access of the channel the button was clicked in, so a
message shared elsewhere never shows sources that channel may not see.
"""

from __future__ import annotations

from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.access.gate import AccessGate
from bot.slack.access.visibility import chunk_ids_of, visible_run
from bot.slack.render.blocks import trace_message
from bot.slack.render.notices import NOT_THIS_MESSAGE, OUTSIDER, RUN_NOT_FOUND
from bot.slack.surfaces.click_checks import run_belongs_to_click
from bot.slack.surfaces.clicks import Click
from bot.slack.surfaces.responder import Responder
from store.catalog import Catalog
from store.runs import RunRepository


class TraceDesk:
    def __init__(
        self,
        *,
        client: AsyncWebClient,
        runs: RunRepository,
        catalog: Catalog,
        gate: AccessGate,
    ) -> None:
        self._client = client
        self._runs = runs
        self._catalog = catalog
        self._gate = gate

    async def show(self, click: Click) -> None:
        if not click.channel_id:
            return
        run = await self._runs.get(click.run_id) if click.run_id is not None else None
        if run is None or not run_belongs_to_click(run.origin, click):
            await Responder(self._client).tell(
                click, RUN_NOT_FOUND if run is None else NOT_THIS_MESSAGE
            )
            return
        # The trace is shown only to the person who clicked: their access, not the readers'.
        access = await self._gate.in_thread_of(
            channel_id=click.channel_id, user_id=click.user_id, user_team=click.user_team
        )
        if access.shows_nothing:
            await Responder(self._client).tell(click, OUTSIDER)
            return
        origins = await self._catalog.chunk_origins(chunk_ids_of(run))
        shown = visible_run(run, access, origins)
        message = trace_message(shown)
        await Responder(self._client).tell(click, message.text, message.blocks)
