"""The sources file: which sources to index, how, into which collection, and how often.

A TOML file with one `[[source]]` table per source:

    [[source]]
    name = "handbook"              # unique; documents are identified by (name, uri)
    kind = "directory"             # directory | web
    collection = "handbook"        # what per-channel access control filters on
    every = "1h"                   # or: cron = "0 6 * * 1-5" (UTC)
    [source.settings]              # passed to the source (see jobs/sources.py)
    root = "docs/handbook"         # relative to the sources file's folder
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from jobs.errors import SourceConfigError

KINDS = ("directory", "web")
_DURATION = re.compile(r"^\s*(\d+)\s*([smhd])\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


@dataclass(frozen=True, slots=True)
class Schedule:
    """When a source is reindexed: every fixed interval, or on a cron expression (UTC)."""

    every: timedelta | None = None
    cron: str | None = None

    def describe(self) -> str:
        if self.cron:
            return f"cron {self.cron}"
        if self.every:
            return f"every {self.every}"
        return "manual"


@dataclass(frozen=True, slots=True)
class SourceConfig:
    name: str
    kind: str
    collection: str = "default"
    schedule: Schedule = field(default_factory=Schedule)
    settings: dict[str, Any] = field(default_factory=dict)


def parse_duration(text: str) -> timedelta:
    """'30s', '15m', '2h', '1d' → timedelta."""
    match = _DURATION.match(text)
    if not match:
        raise SourceConfigError(
            f"{text!r} is not a duration; write a number and a unit, like 30m, 6h or 1d"
        )
    return timedelta(**{_UNITS[match[2]]: int(match[1])})


def load_sources(path: Path) -> list[SourceConfig]:
    """Read and check the sources file; SourceConfigError says which source is wrong."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceConfigError(f"cannot read the sources file {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise SourceConfigError(f"the sources file {path} is not valid TOML: {exc}") from exc
    entries = data.get("source", [])
    if not isinstance(entries, list) or not entries:
        raise SourceConfigError(f"{path} declares no [[source]] tables; see README 'Sources'")
    configs = [_source(entry, index) for index, entry in enumerate(entries, start=1)]
    names = [c.name for c in configs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise SourceConfigError(f"{path}: source names must be unique; repeated: {duplicates}")
    return configs


def _source(entry: Any, index: int) -> SourceConfig:
    where = f"[[source]] #{index}"
    if not isinstance(entry, dict):
        raise SourceConfigError(f"{where} must be a table")
    name, kind = entry.get("name"), entry.get("kind")
    if not isinstance(name, str) or not name.strip():
        raise SourceConfigError(f"{where} needs a name")
    if kind not in KINDS:
        raise SourceConfigError(f"source {name!r}: kind must be one of {', '.join(KINDS)}")
    settings = entry.get("settings", {})
    if not isinstance(settings, dict):
        raise SourceConfigError(f"source {name!r}: settings must be a table")
    return SourceConfig(
        name=name,
        kind=kind,
        collection=str(entry.get("collection", "default")),
        schedule=_schedule(name, entry),
        settings=settings,
    )


def _schedule(name: str, entry: dict[str, Any]) -> Schedule:
    every, cron = entry.get("every"), entry.get("cron")
    if every is not None and cron is not None:
        raise SourceConfigError(f"source {name!r}: give either every or cron, not both")
    if cron is not None:
        if not isinstance(cron, str) or len(cron.split()) != 5:
            raise SourceConfigError(
                f"source {name!r}: cron must have five fields, like '0 6 * * 1-5'"
            )
        return Schedule(cron=cron)
    if every is not None:
        return Schedule(every=parse_duration(str(every)))
    return Schedule()
