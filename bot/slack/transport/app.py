"""Builds the bolt `AsyncApp`: built-in middleware on, ours after it, then every listener.

Order of a request: signature check (HTTP mode) → authorization (the identity read at
start-up, see web.py) →
bolt drops the bot's own events → url_verification → `watch_threads` (with `slack`
sources) → `drop_noise` → `mark_delivery`
→ the assistant middleware → listeners. A listener acks and hands its work off; the
work starts once the delivery is claimed in Postgres (exactly once, across instances).
Nothing on the ack path waits on the database or the agent, so the app runs with
`process_before_response=True`: the ack goes back as soon as the listener returns,
without bolt's 10 ms ack polling.
"""

from __future__ import annotations

import logging

from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult

from bot.slack.surfaces.listeners import register_all
from bot.slack.surfaces.services import SlackServices
from bot.slack.transport.middleware import drop_noise, mark_delivery, redact_logs, watch_threads
from bot.slack.transport.web import without_token

BOLT_LOGGER = "bot.slack.bolt"


def build_app(services: SlackServices) -> AsyncApp:
    logger = logging.getLogger(BOLT_LOGGER)
    redact_logs(logger)
    identity = services.identity

    async def authorize() -> AuthorizeResult:
        return identity

    app = AsyncApp(
        client=without_token(services.client),
        authorize=authorize,
        signing_secret=services.signing_secret,
        process_before_response=True,
        logger=logger,
        # The app serves one workspace with one bot token: no OAuth, no installation store.
        ignoring_self_events_enabled=True,
        request_verification_enabled=True,
        url_verification_enabled=True,
        ssl_check_enabled=True,
    )
    if services.thread_watch is not None:
        app.use(watch_threads(services.thread_watch))
    app.use(drop_noise(services.options))
    app.use(mark_delivery())
    register_all(app, services)
    return app
