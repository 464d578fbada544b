"""Builds a Source from its (already validated) configuration and what the store holds of it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import aiohttp

from jobs.config import DirectorySourceConfig, SourceConfig, WebSourceConfig
from jobs.connectors.base import ConnectorContext, Cursor
from jobs.directory import DirectorySource
from jobs.documents import Source
from jobs.errors import SourceConfigError
from jobs.github.builder import build_github_source
from jobs.slack_threads.builder import build_slack_source
from jobs.web import HttpValidators, WebSource
from store.documents import StoredDocument

ConnectorBuilder = Callable[[Any, ConnectorContext], Source]
"""Builds one connector kind's Source from its config (typed per kind) and context."""


def _notion(config: Any, context: ConnectorContext) -> Source:
    from jobs.connectors import notion

    return notion.build(config, context)


def _confluence(config: Any, context: ConnectorContext) -> Source:
    from jobs.connectors import confluence

    return confluence.build_confluence(config, context)


def _google_drive(config: Any, context: ConnectorContext) -> Source:
    from jobs.connectors import google_drive

    return google_drive.build_google_drive(config, context)


# Connector kinds by `kind`. Each builder imports its client library when called, so
# `kb --help` and the Slack ack path never pay for it.
CONNECTORS: Mapping[str, ConnectorBuilder] = {
    "notion": _notion,
    "github": build_github_source,
    "slack": build_slack_source,
    "confluence": _confluence,
    "google_drive": _google_drive,
}


def build_source(
    config: SourceConfig,
    *,
    base_dir: Path,
    http: aiohttp.ClientSession | None = None,
    stored: Mapping[str, StoredDocument] | None = None,
    cursor: Cursor | None = None,
    credentials: Mapping[str, str] | None = None,
    only: frozenset[str] | None = None,
) -> Source:
    """The Source for `config`; relative folder roots are resolved against `base_dir`.

    `stored` is the source's documents as the store holds them: the directory source
    skips files unchanged since, the web source sends conditional GETs, a connector marks
    what its change feed did not mention as unchanged. `cursor` is where a connector's
    change feed was last read to; `credentials` maps the environment variable names the
    sources file gives to their values (read by bot/, never here). `only`: read just
    those documents again (a connector's refresh; jobs/connectors/base.py).
    """
    stored = stored or {}
    if only is not None and config.kind not in CONNECTORS:
        raise SourceConfigError(f"source {config.name!r} can't read single documents again")
    if isinstance(config, DirectorySourceConfig):
        return DirectorySource.from_settings(
            name=config.name, settings=config.settings, base_dir=base_dir, previous=stored
        )
    if isinstance(config, WebSourceConfig):
        if http is None:
            raise SourceConfigError(
                f"source {config.name!r} is a web source: it needs an HTTP session"
            )
        settings = config.settings.model_dump(exclude_none=True)
        return WebSource(
            name=config.name,
            session=http,
            validators=web_validators({uri: d.metadata for uri, d in stored.items()}),
            **settings,
        )
    builder = CONNECTORS.get(config.kind)
    if builder is None:
        raise SourceConfigError(f"source {config.name!r}: no connector for kind {config.kind!r}")
    context = ConnectorContext(
        stored=stored, cursor=cursor, credentials=credentials or {}, only=only
    )
    return builder(config, context)


def web_validators(metadata_by_uri: Mapping[str, dict[str, Any]]) -> dict[str, HttpValidators]:
    """The ETag / Last-Modified stored with each web document, for conditional GETs."""
    found = {}
    for uri, metadata in metadata_by_uri.items():
        http = metadata.get("http") or {}
        if http.get("etag") or http.get("last_modified"):
            found[uri] = HttpValidators(http.get("etag"), http.get("last_modified"))
    return found
