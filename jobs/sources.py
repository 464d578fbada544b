"""Builds a Source from its configuration."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aiohttp

from jobs.config import SourceConfig
from jobs.directory import DirectorySource
from jobs.documents import Source
from jobs.errors import SourceConfigError
from jobs.web import HttpValidators, WebSource

_DIRECTORY_KEYS = {
    "root",
    "include",
    "exclude",
    "url_style",
    "base_url",
    "url_template",
    "max_bytes",
}
_WEB_KEYS = {
    "urls", "sitemaps", "same_host", "respect_robots", "user_agent", "timeout_seconds",
    "max_bytes", "concurrency", "max_pages",
}  # fmt: skip


def build_source(
    config: SourceConfig,
    *,
    base_dir: Path,
    http: aiohttp.ClientSession | None = None,
    validators: Mapping[str, HttpValidators] | None = None,
) -> Source:
    """The Source for `config`; relative folder roots are resolved against `base_dir`."""
    settings = dict(config.settings)
    if config.kind == "directory":
        _check_keys(config, settings, _DIRECTORY_KEYS)
        root = settings.pop("root", None)
        if not isinstance(root, str):
            raise SourceConfigError(f"source {config.name!r}: settings.root (a folder) is required")
        settings.setdefault("url_style", "template" if "url_template" in settings else "none")
        return DirectorySource(name=config.name, root=base_dir / root, **settings)
    _check_keys(config, settings, _WEB_KEYS)
    if http is None:
        raise SourceConfigError(f"source {config.name!r} is a web source: it needs an HTTP session")
    if not settings.get("urls") and not settings.get("sitemaps"):
        raise SourceConfigError(f"source {config.name!r}: give settings.urls or settings.sitemaps")
    return WebSource(name=config.name, session=http, validators=validators or {}, **settings)


def web_validators(metadata_by_uri: Mapping[str, dict[str, Any]]) -> dict[str, HttpValidators]:
    """The ETag / Last-Modified stored with each web document, for conditional GETs."""
    found = {}
    for uri, metadata in metadata_by_uri.items():
        http = metadata.get("http") or {}
        if http.get("etag") or http.get("last_modified"):
            found[uri] = HttpValidators(http.get("etag"), http.get("last_modified"))
    return found


def _check_keys(config: SourceConfig, settings: dict[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(settings) - allowed)
    if unknown:
        raise SourceConfigError(
            f"source {config.name!r}: unknown settings {unknown}; allowed: {sorted(allowed)}"
        )
