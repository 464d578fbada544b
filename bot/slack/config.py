"""What the bot may do where: per-channel access to collections, and its behaviour options.

Access is a TOML file (`KB_SLACK_CONFIG`, else `slack.toml` in KB_HOME), validated with
pydantic; a mistake is reported in one line naming the file and the key:

    [access]
    default = ["handbook"]            # channels not listed below; ["*"] = every collection
    dm = ["handbook", "engineering"]  # direct messages (default: as `default`)
    assistant = ["handbook"]          # Slack's assistant panel (default: as `dm`)
    home = ["handbook"]               # what App Home lists (default: as `dm`)

    [access.channels]
    C0123ENG = ["engineering", "handbook"]

Without the file every channel may see everything. An escalation is indexed into the
first collection its channel lists (`escalations` for a channel that sees everything).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from bot.slack.errors import SlackConfigError
from store.filters import NO_FILTER, ChunkFilter

EVERYTHING = "*"
ESCALATIONS_COLLECTION = "escalations"


@dataclass(frozen=True, slots=True)
class Access:
    """The collections one place may draw on; `collections` None means every collection."""

    collections: tuple[str, ...] | None = None

    def allows(self, collection: str) -> bool:
        return self.collections is None or collection in self.collections

    @property
    def scope(self) -> ChunkFilter:
        return NO_FILTER if self.collections is None else ChunkFilter(collections=self.collections)

    @property
    def home_collection(self) -> str:
        """Where an expert's answer to a question asked here is indexed."""
        return self.collections[0] if self.collections else ESCALATIONS_COLLECTION


def _access(names: list[str] | None, fallback: Access) -> Access:
    if names is None:
        return fallback
    return Access(None if EVERYTHING in names else tuple(names))


class _AccessSection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    default: list[str] = [EVERYTHING]
    dm: list[str] | None = None
    assistant: list[str] | None = None
    home: list[str] | None = None
    channels: dict[str, list[str]] = {}

    @field_validator("default", "dm", "assistant", "home")
    @classmethod
    def _names(cls, names: list[str] | None) -> list[str] | None:
        if names is not None:
            _check_names(names)
        return names

    @field_validator("channels")
    @classmethod
    def _channel_names(cls, channels: dict[str, list[str]]) -> dict[str, list[str]]:
        for names in channels.values():
            _check_names(names)
        return channels


def _check_names(names: list[str]) -> None:
    if not names:
        raise ValueError('list at least one collection, or "*" for every collection')
    if any(not n.strip() for n in names):
        raise ValueError("a collection name is empty")


class _SlackFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    access: _AccessSection = _AccessSection()


@dataclass(frozen=True, slots=True)
class AccessPolicy:
    """Which collections each channel, DMs, the assistant panel and App Home may see."""

    default: Access = Access()
    dm: Access = Access()
    assistant: Access = Access()
    home: Access = Access()
    channels: Mapping[str, Access] = field(default_factory=dict)

    def for_channel(self, channel_id: str, *, channel_type: str | None = None) -> Access:
        if channel_type == "im" or (channel_type is None and channel_id.startswith("D")):
            return self.channels.get(channel_id, self.dm)
        return self.channels.get(channel_id, self.default)

    @classmethod
    def from_toml(cls, text: str, *, where: str) -> AccessPolicy:
        try:
            data = tomllib.loads(text)
            section = _SlackFile.model_validate(data).access
        except tomllib.TOMLDecodeError as exc:
            raise SlackConfigError(f"{where} is not valid TOML: {exc}") from exc
        except ValidationError as exc:
            raise SlackConfigError(f"{where}: {_first_error(exc)}") from exc
        default = _access(section.default, Access())
        dm = _access(section.dm, default)
        return cls(
            default=default,
            dm=dm,
            assistant=_access(section.assistant, dm),
            home=_access(section.home, dm),
            channels={c: _access(n, default) for c, n in section.channels.items()},
        )


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    key = ".".join(str(part) for part in error["loc"])
    return f"{key}: {error['msg']}"


def load_access(path: Path) -> AccessPolicy:
    """The access policy in `path`; without the file, every channel sees everything."""
    if not path.exists():
        return AccessPolicy()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SlackConfigError(f"cannot read {path}: {exc}") from exc
    return AccessPolicy.from_toml(text, where=str(path))


@dataclass(frozen=True, slots=True)
class BotOptions:
    """How the bot behaves (from settings; README "Configuration")."""

    escalation_channel: str | None = None
    escalation_usergroup: str | None = None
    help_channels: frozenset[str] = frozenset()
    private_by_default: bool = False
    thread_needs_mention: bool = False
    ignore_bots: bool = True
    always_escalate: bool = False
    # Without an escalation channel: what a DM or private asker is told on "Escalate".
    escalation_elsewhere: str | None = None
    runs_per_workspace: int = 2
    history_turns: int = 10
    # Longer questions get a polite "please shorten it" instead of a run (bounded work).
    max_question_chars: int = 4000
    # Stream answers into threads (chat.startStream) where Slack allows it; a refusal
    # falls back to the placeholder and chat.update.
    stream_answers: bool = True
