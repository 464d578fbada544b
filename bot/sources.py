"""Which sources this deployment indexes: the sources file, or the bundled handbook."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import click

from bot.settings import Settings
from jobs.config import (
    DirectorySettings,
    DirectorySourceConfig,
    SourceConfig,
    credential_envs,
    load_sources,
)
from jobs.directory import HANDBOOK_SLACK, HANDBOOK_URL
from jobs.errors import JobsError, SourceConfigError


def handbook_config(settings: Settings) -> SourceConfig:
    """The bundled TTS Handbook (or KB_SAMPLE_KB), indexed when no sources file exists."""
    root = settings.sample_kb
    if not root.is_dir():
        # Checked here, before any server starts: indexing a missing folder would only
        # log the failure and leave the demo answering from an empty knowledge base.
        raise SourceConfigError(
            f"KB_SAMPLE_KB is {str(root)!r}, which is not a folder; point it at a folder "
            "holding pages/, or unset it to use the bundled handbook"
        )
    return DirectorySourceConfig(
        name="handbook",
        collection="handbook",
        settings=DirectorySettings(
            root=str(root),
            include=["pages/**/*.md"],
            url_style="eleventy",
            base_url=HANDBOOK_URL,
            slack_workspace_url=HANDBOOK_SLACK,
        ),
    )


def configured_sources(settings: Settings) -> tuple[list[SourceConfig], Path]:
    """The configured sources and the folder their relative paths start from."""
    path = settings.sources_path
    if path.exists():
        return load_sources(path), path.parent
    return [handbook_config(settings)], Path.cwd()


def select_sources(
    settings: Settings, path: Path | None, source: str | None, name: str | None, url: str | None
) -> tuple[list[SourceConfig], Path]:
    if path is not None:
        if not path.is_dir():
            raise click.UsageError(f"{path} is not a folder; give a folder of documents to index")
        return [folder_config(path, name=name, url_template=url)], Path.cwd()
    configs, base_dir = configured_sources(settings)
    if source is None:
        return configs, base_dir
    chosen = [c for c in configs if c.name == source]
    if not chosen:
        known = ", ".join(c.name for c in configs)
        raise click.UsageError(f"no source called {source!r}; configured sources: {known}")
    return chosen, base_dir


def source_credentials(
    configs: Sequence[SourceConfig], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The connectors' secrets, by the environment variable names the sources file gives.

    Only these variables are read (bot/ is the one layer that reads the environment); a
    missing one is reported by the source that needs it, when it runs.
    """
    environ = os.environ if environ is None else environ
    names = {env for config in configs for env in credential_envs(config)}
    return {name: environ[name] for name in sorted(names) if environ.get(name)}


async def check_sources(settings: Settings, *, online: bool = False) -> None:
    """`kb sources --check`: the sources file is valid and every folder root exists; with
    `online`, every connector authenticates and says what it can see, one line each."""
    configs, base_dir = configured_sources(settings)
    for config in configs:
        if isinstance(config, DirectorySourceConfig):
            root = base_dir / config.settings.root
            if not root.is_dir():
                raise SourceConfigError(
                    f"{settings.sources_path}: source {config.name!r}: settings.root: {root} "
                    "is not a folder"
                )
    origin = settings.sources_path if settings.sources_path.exists() else "built-in default"
    click.echo(f"ok: {len(configs)} source(s) in {origin}")
    if online:
        failed = await check_online(configs, base_dir=base_dir)
        if failed:
            raise SourceConfigError(f"{failed} source(s) could not be read; see above")


async def check_online(configs: Sequence[SourceConfig], *, base_dir: Path) -> int:
    """Authenticate each connector and print one line each; return how many failed."""
    from jobs.connectors.base import OnlineCheck
    from jobs.sources import build_source

    credentials = source_credentials(configs)
    failed = 0
    for config in configs:
        try:
            source = build_source(config, base_dir=base_dir, credentials=credentials)
        except JobsError as exc:
            click.echo(f"  {config.name}: FAILED: {exc}")
            failed += 1
            continue
        if not isinstance(source, OnlineCheck):
            click.echo(f"  {config.name}: {config.kind} source, nothing to check online")
            continue
        try:
            seen = await source.check()
        except JobsError as exc:
            click.echo(f"  {config.name}: FAILED: {exc}")
            failed += 1
            continue
        click.echo(f"  {config.name}: ok, {seen.describe()}")
    return failed


def folder_config(path: Path, *, name: str | None, url_template: str | None) -> SourceConfig:
    """An ad-hoc source for `kb index PATH`."""
    return DirectorySourceConfig(
        name=name or path.resolve().name,
        settings=DirectorySettings(root=str(path.resolve()), url_template=url_template),
    )
