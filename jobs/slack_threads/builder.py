"""Builds the `slack` source from its settings; slack_sdk is imported only when it runs."""

from __future__ import annotations

from typing import Any

from jobs.connectors.base import ConnectorContext
from jobs.documents import Source


def build_slack_source(config: Any, context: ConnectorContext) -> Source:
    from jobs.slack_threads.client import SlackHistoryApi
    from jobs.slack_threads.source import SlackThreadsSource

    settings = config.settings
    token = context.credential(source=config.name, env=settings.token_env)

    def api() -> SlackHistoryApi:
        return SlackHistoryApi(
            token=token.value,
            token_env=token.env,
            base_url=settings.base_url,
            timeout_seconds=settings.timeout_seconds,
        )

    return SlackThreadsSource(name=config.name, settings=settings, context=context, api=api)
