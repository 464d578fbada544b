"""HTTP mode: Slack's requests at /slack/events on the server's aiohttp app.

The body is capped (Content-Length checked first, then aiohttp's `client_max_size`
while reading): a larger request gets 413 before bolt sees it. bolt checks the
signature (v0, signing secret, timestamp within five minutes) and answers 401 when it
does not hold.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest

EVENTS_PATH = "/slack/events"
SLACK_APP = web.AppKey("slack_app", AsyncApp)
MAX_BODY = web.AppKey("slack_max_body", int)
OnAck = Callable[[float], None]
ON_ACK: web.AppKey[OnAck] = web.AppKey("slack_on_ack")


def mount(
    app: web.Application,
    slack_app: AsyncApp,
    *,
    max_body_bytes: int,
    on_ack: OnAck = lambda seconds: None,
) -> None:
    """Serve `slack_app` at /slack/events; `on_ack` is told each ack's latency in seconds."""
    app[SLACK_APP] = slack_app
    app[MAX_BODY] = max_body_bytes
    app[ON_ACK] = on_ack
    app.router.add_post(EVENTS_PATH, slack_events)


async def slack_events(request: web.Request) -> web.Response:
    started = time.monotonic()
    response = await _dispatch(request)
    request.app[ON_ACK](time.monotonic() - started)
    return response


async def _dispatch(request: web.Request) -> web.Response:
    limit = request.app[MAX_BODY]
    if request.content_length is not None and request.content_length > limit:
        return _too_large(limit)
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        return _too_large(limit)
    if len(raw) > limit:
        return _too_large(limit)
    try:
        body = raw.decode("utf-8")
    except UnicodeDecodeError:
        return web.Response(status=400, text="the body is not UTF-8")
    bolt_request = AsyncBoltRequest(
        body=body,
        query=request.query_string,
        headers={k: v for k, v in request.headers.items()},
    )
    return await to_aiohttp_response(await request.app[SLACK_APP].async_dispatch(bolt_request))


def _too_large(limit: int) -> web.Response:
    return web.Response(status=413, text=f"request body over {limit} bytes")
