"""The long-running process: the HTTP server (health, Slack's events) and the Slack app.

`kb serve` serves `/healthz` (liveness: the process answers), `/readyz` (readiness,
check by check: bot/health.py), `/metrics` (Prometheus: bot/metrics.py) and, when
Slack is configured, Slack's requests at
`/slack/events` (HTTP mode, when a signing secret is set) and/or a Socket Mode
connection (when an app-level token is set). Without Slack tokens it says in one line
which variables are missing and serves health and the schedule alone.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import aiohttp
from aiohttp import web
from pydantic import SecretStr

from bot.health import ReadinessProbe
from bot.metrics import CONTENT_TYPE
from bot.settings import Settings
from bot.wiring import Runtime

if TYPE_CHECKING:
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
    from slack_bolt.async_app import AsyncApp

    from bot.slack.delivery.sweep import Sweep
    from bot.slack.surfaces.services import SlackServices
    from bot.slack.transport.thread_watch import ThreadWatch

log = logging.getLogger(__name__)

RUNTIME = web.AppKey("runtime", Runtime)
PROBE = web.AppKey("readiness", ReadinessProbe)


def build_http_app(
    runtime: Runtime,
    *,
    slack: AsyncApp | None = None,
    scheduler_running: Callable[[], bool] | None = None,
    reindex_scheduled: bool = False,
) -> web.Application:
    """/healthz, /readyz and /metrics; Slack's requests at /slack/events when `slack` is
    given. `scheduler_running` tells /readyz whether the schedule runs (None: no schedule
    in this process, which /readyz reports as not ready)."""
    max_body = runtime.settings.slack_max_body_bytes
    app = web.Application(client_max_size=max_body)
    app[RUNTIME] = runtime
    app[PROBE] = ReadinessProbe(
        pool=runtime.pool,
        model_loaded=lambda: runtime.embedder.loaded,
        keyword_index_warm=lambda: runtime.keyword_search.version is not None,
        scheduler_running=scheduler_running,
        reindex_scheduled=reindex_scheduled,
        max_reindex_age=runtime.settings.max_reindex_age,
    )
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
    if slack is not None:
        from bot.slack.transport.http import mount

        mount(app, slack, max_body_bytes=max_body, on_ack=runtime.metrics.slack_acked)
    return app


@dataclass(slots=True)
class SlackRunning:
    services: SlackServices
    app: AsyncApp
    http: bool  # serve /slack/events (a signing secret is set)
    socket_mode: AsyncSocketModeHandler | None = None


@asynccontextmanager
async def running_slack(
    runtime: Runtime, *, thread_watch: ThreadWatch | None = None
) -> AsyncIterator[SlackRunning | None]:
    """The Slack app, when its tokens are set (None otherwise); Socket Mode connected.
    `thread_watch` is told of the messages that change an indexed Slack thread."""
    settings = runtime.settings
    if settings.slack_missing():
        yield None
        return
    from bot.slack.delivery.journal import replay
    from bot.slack.transport.app import build_app
    from bot.slack.transport.web import bot_identity, build_web_client

    assert settings.slack_bot_token is not None
    # One session for every Web API call: calls reuse connections instead of opening one each.
    async with aiohttp.ClientSession() as session:
        client = build_web_client(
            token=settings.slack_bot_token.get_secret_value(),
            base_url=settings.slack_api_url,
            session=session,
            on_error=runtime.metrics.slack_api_error,
        )
        secret = settings.slack_signing_secret
        services = runtime.slack_services(
            client=client,
            identity=await bot_identity(client),
            signing_secret=secret.get_secret_value() if secret else None,
            thread_watch=thread_watch,
        )
        running = SlackRunning(services=services, app=build_app(services), http=secret is not None)
        sweep = build_sweep(runtime, services)
        await sweep.once()  # what a stopped process left, before new questions come in
        if services.journal is not None:  # what a process stopped during an outage kept
            await replay(services.journal, running.app, services.signing_secret)
        sweeping = asyncio.create_task(
            sweep.run(every=_sweep_period(runtime.settings)), name="question sweep"
        )
        try:
            if settings.slack_app_token is not None:
                running.socket_mode = await _connect(running.app, settings.slack_app_token)
            yield running
        finally:
            if running.socket_mode is not None:
                await running.socket_mode.close_async()
            # Answers still running keep their leases while they finish; nothing new is taken.
            sweep.draining = True
            await services.tasks.close()
            sweeping.cancel()
            await asyncio.gather(sweeping, return_exceptions=True)


def build_sweep(runtime: Runtime, services: SlackServices) -> Sweep:
    """The question sweep of this process (bot/slack/delivery/sweep.py)."""
    from bot.slack.delivery.sweep import Sweep

    return Sweep(
        pool=runtime.pool,
        client=services.client,
        deliveries=services.deliveries,
        leases=services.leases,
        rerun=services.rerun,
        tasks=services.tasks,
    )


def _sweep_period(settings: Settings) -> float:
    """KB_SLACK_SWEEP_EVERY, but at least three renewals per lease."""
    return min(settings.slack_sweep_every, settings.slack_lease / 3)


async def healthz(request: web.Request) -> web.Response:
    """Liveness: 200 whenever the event loop answers. Nothing else is checked, so a
    database outage makes the process unready (/readyz), never restarted."""
    return web.json_response({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    """Readiness, check by check: 200 when all hold, 503 (with each result) otherwise."""
    readiness = await request.app[PROBE].check()
    if not readiness.ready:
        failed = ", ".join(c.name for c in readiness.checks if not c.ok)
        log.warning("not ready: %s", failed, extra={"stage": "readyz"})
    return web.json_response(readiness.as_dict(), status=200 if readiness.ready else 503)


async def metrics(request: web.Request) -> web.Response:
    body = request.app[RUNTIME].metrics.exposition()
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})


async def _connect(app: AsyncApp, token: SecretStr) -> AsyncSocketModeHandler:
    from slack_sdk.errors import SlackApiError

    from bot.slack.errors import SlackBotError
    from bot.slack.transport.socket_mode import connect

    try:
        return await connect(app, app_token=token.get_secret_value())
    except SlackApiError as exc:
        raise SlackBotError(
            f"Socket Mode could not connect ({exc.response.get('error')}); check "
            "SLACK_APP_TOKEN (an app-level token with connections:write) and SLACK_API_URL"
        ) from exc
    except (aiohttp.ClientError, OSError) as exc:
        raise SlackBotError(
            f"Socket Mode could not reach Slack ({type(exc).__name__}); check SLACK_API_URL "
            "and the network"
        ) from exc


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
