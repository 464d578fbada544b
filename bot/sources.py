"""Which sources this deployment indexes: the sources file, or the bundled handbook."""

from __future__ import annotations

from pathlib import Path

from bot.settings import Settings
from jobs.config import SourceConfig, load_sources
from jobs.directory import HANDBOOK_URL
from jobs.errors import SourceConfigError


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
    return SourceConfig(
        name="handbook",
        kind="directory",
        collection="handbook",
        settings={
            "root": str(root),
            "include": ["pages/**/*.md"],
            "url_style": "eleventy",
            "base_url": HANDBOOK_URL,
        },
    )


def configured_sources(settings: Settings) -> tuple[list[SourceConfig], Path]:
    """The configured sources and the folder their relative paths start from."""
    path = settings.sources_path
    if path.exists():
        return load_sources(path), path.parent
    return [handbook_config(settings)], Path.cwd()


def folder_config(path: Path, *, name: str | None, url_template: str | None) -> SourceConfig:
    """An ad-hoc source for `kb index PATH`."""
    settings: dict[str, object] = {"root": str(path.resolve())}
    if url_template:
        settings["url_template"] = url_template
    return SourceConfig(name=name or path.resolve().name, kind="directory", settings=settings)
