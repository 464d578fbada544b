"""Builds the `github` source from its settings; githubkit is imported only when it runs."""

from __future__ import annotations

from typing import Any

from jobs.connectors.base import ConnectorContext
from jobs.documents import Source


def build_github_source(config: Any, context: ConnectorContext) -> Source:
    from jobs.github.client import GitHubApi
    from jobs.github.source import GitHubSource

    settings = config.settings
    token = context.credential(source=config.name, env=settings.token_env)

    def api() -> GitHubApi:
        return GitHubApi(
            token=token.value,
            token_env=token.env,
            base_url=settings.base_url,
            timeout_seconds=settings.timeout_seconds,
            max_wait_seconds=settings.max_wait_seconds,
        )

    return GitHubSource(name=config.name, settings=settings, context=context, api=api)
