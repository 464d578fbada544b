"""The long-running process: an HTTP server (health now; Slack events later) and the schedule."""

from __future__ import annotations

import asyncio
import logging
import signal

import asyncpg
from aiohttp import web

from bot.wiring import Runtime

log = logging.getLogger(__name__)

RUNTIME = web.AppKey("runtime", Runtime)


def build_http_app(runtime: Runtime) -> web.Application:
    app = web.Application()
    app[RUNTIME] = runtime
    app.router.add_get("/healthz", healthz)
    return app


async def healthz(request: web.Request) -> web.Response:
    """200 when the database answers, 503 (with what to check) when it does not."""
    runtime = request.app[RUNTIME]
    try:
        counts = await asyncio.wait_for(runtime.documents.counts(), timeout=5)
    except (asyncpg.PostgresError, OSError, TimeoutError):
        log.warning("health check: database unreachable")
        return web.json_response(
            {"status": "unavailable", "detail": "the database does not answer"}, status=503
        )
    return web.json_response({"status": "ok", **counts})


async def serve_until_stopped(app: web.Application, *, host: str, port: int) -> None:
    """Serve `app` until SIGINT or SIGTERM."""
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    log.info("listening on http://%s:%d", host, port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()
