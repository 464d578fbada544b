"""Builds the `github` source from its settings; githubkit is imported only when it runs."""

from __future__ import annotations

from typing import Any

from jobs.connectors.base import ConnectorContext
from jobs.documents import Source


def build_github_source(config: Any, context: ConnectorContext) -> Source:
    from jobs.github.client import AppInstallation, Credentials, GitHubApi, Token
    from jobs.github.source import GitHubSource

    settings = config.settings
    credentials: Credentials
    if settings.app_id is not None and settings.installation_id is not None:
        key = context.credential(source=config.name, env=settings.private_key_env)
        credentials = AppInstallation(
            settings.app_id, settings.installation_id, key.value, key_env=key.env
        )
    else:
        token = context.credential(source=config.name, env=settings.token_env)
        credentials = Token(token.value, token.env)

    def api() -> GitHubApi:
        return GitHubApi(
            credentials,
            base_url=settings.base_url,
            timeout_seconds=settings.timeout_seconds,
            max_wait_seconds=settings.max_wait_seconds,
        )

    return GitHubSource(name=config.name, settings=settings, context=context, api=api)
