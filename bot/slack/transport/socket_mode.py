"""Socket Mode: the same app over a WebSocket Slack opens for us (no public URL needed).

slack_sdk's aiohttp Socket Mode client calls `apps.connections.open` with the app-level
token (on the configured Web API base URL), connects, acks each envelope with bolt's
response, and reconnects when Slack asks it to.
"""

from __future__ import annotations

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp


async def connect(app: AsyncApp, *, app_token: str) -> AsyncSocketModeHandler:
    handler = AsyncSocketModeHandler(app, app_token=app_token, web_client=app.client)
    await handler.connect_async()
    return handler
