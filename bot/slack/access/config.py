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

    [access.guests]                   # single- and multi-channel guests
    default = []                      # everywhere not listed: nothing (the default)
    C0123ENG = ["handbook"]

    [access.external]                 # people of another organisation (Slack Connect)
    default = []                      # nothing (the default)
    C0456SHARED = ["handbook"]

Without the file every channel may see everything (`kb serve` says so at start-up);
guests and people from other organisations see nothing unless a place lists what they
may see, and then never more than the place itself may. An escalation is indexed into
the first collection its channel lists (`escalations` for a channel that sees
everything).
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from bot.slack.errors import SlackConfigError
from store.filters import NO_FILTER, ChunkFilter

EVERYTHING = "*"
ESCALATIONS_COLLECTION = "escalations"


@dataclass(frozen=True, slots=True)
class Access:
    """The collections one place may draw on; `collections` None means every collection,
    but never one of `hidden` (a private Slack channel's threads outside that channel:
    store/private_collections.py)."""

    collections: tuple[str, ...] | None = None
    hidden: frozenset[str] = frozenset()

    def allows(self, collection: str) -> bool:
        if collection in self.hidden:
            return False
        return self.collections is None or collection in self.collections

    @property
    def scope(self) -> ChunkFilter:
        if self.collections is None and not self.hidden:
            return NO_FILTER
        return ChunkFilter(
            collections=self.collections,
            excluded_collections=tuple(sorted(self.hidden)) or None,
        )

    def hiding(self, collections: frozenset[str]) -> Access:
        """This access without `collections`, whatever it lists."""
        return dataclasses.replace(self, hidden=self.hidden | collections)

    @property
    def home_collection(self) -> str:
        """Where an expert's answer to a question asked here is indexed."""
        return self.collections[0] if self.collections else ESCALATIONS_COLLECTION

    @property
    def shows_nothing(self) -> bool:
        return self.collections == ()

    def narrowed_to(self, other: Access) -> Access:
        """What both this access and `other` allow."""
        hidden = self.hidden | other.hidden
        if other.collections is None:
            return self.hiding(hidden)
        if self.collections is None:
            return other.hiding(hidden)
        kept = tuple(c for c in self.collections if c in other.collections)
        return Access(kept, hidden)


NOTHING = Access(collections=())


def _names(access: Access) -> str:
    return "every collection" if access.collections is None else ", ".join(access.collections)


def _access(names: list[str] | None, fallback: Access) -> Access:
    if names is None:
        return fallback
    return Access(None if EVERYTHING in names else tuple(names))


class Standing(Enum):
    """Who is asking, as far as what they may see goes (bot/slack/access/people.py decides)."""

    MEMBER = "member"
    GUEST = "guest"  # a single- or multi-channel guest of this workspace
    EXTERNAL = "external"  # someone of another organisation (Slack Connect)


@dataclass(frozen=True, slots=True)
class OutsiderAccess:
    """What guests (or people of other organisations) may see: per channel, else `default`."""

    default: Access = NOTHING
    channels: Mapping[str, Access] = field(default_factory=dict)

    def at(self, channel_id: str | None) -> Access:
        return self.channels.get(channel_id or "", self.default)

    def describe(self) -> str:
        """Where what is seen ("nothing" if nowhere), for `kb serve`'s start-up lines."""
        places = [("elsewhere", self.default), *self.channels.items()]
        shown = [f"{at} {_names(access)}" for at, access in places if not access.shows_nothing]
        return "; ".join(shown) or "nothing"


class _OutsidersSection(BaseModel):
    """`[access.guests]` / `[access.external]`: `default` and channel ids; [] = nothing."""

    model_config = ConfigDict(extra="allow")

    default: list[str] = []

    @model_validator(mode="after")
    def _lists(self) -> _OutsidersSection:
        for name, names in self.listed().items():
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise ValueError(f'{name}: list collection names, [] for nothing, or ["*"]')
            if any(not n.strip() for n in names):
                raise ValueError(f"{name}: a collection name is empty")
        return self

    def listed(self) -> dict[str, object]:
        return {"default": self.default, **(self.model_extra or {})}

    def policy(self) -> OutsiderAccess:
        def access(names: object) -> Access:
            assert isinstance(names, list)
            return NOTHING if not names else _access(names, NOTHING)

        extra = self.model_extra or {}
        return OutsiderAccess(
            default=access(self.default), channels={c: access(n) for c, n in extra.items()}
        )


class _AccessSection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    default: list[str] = [EVERYTHING]
    dm: list[str] | None = None
    assistant: list[str] | None = None
    home: list[str] | None = None
    channels: dict[str, list[str]] = {}
    guests: _OutsidersSection = _OutsidersSection()
    external: _OutsidersSection = _OutsidersSection()

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
    guests: OutsiderAccess = OutsiderAccess()
    external: OutsiderAccess = OutsiderAccess()

    def for_person(self, place: Access, *, channel_id: str | None, standing: Standing) -> Access:
        """`place`'s access as `standing` may use it at `channel_id`: a guest or an
        outsider never sees more than the place, and by default nothing."""
        if standing is Standing.MEMBER:
            return place
        outsiders = self.guests if standing is Standing.GUEST else self.external
        return place.narrowed_to(outsiders.at(channel_id))

    def sees_everything(self) -> list[str]:
        """The places where members may draw on every collection, for `kb serve` to say."""
        places = [
            ("channels not listed", self.default),
            ("direct messages", self.dm),
            ("the assistant panel", self.assistant),
            ("App Home", self.home),
            *self.channels.items(),
        ]
        return [name for name, access in places if access.collections is None]

    def summary(self) -> list[str]:
        """What `kb serve` says at start-up: where members see everything, and what
        guests and people of other organisations may see."""
        everywhere = self.sees_everything()
        lines = [
            "members see every collection in: " + ", ".join(everywhere)
            if everywhere
            else "no place shows members every collection"
        ]
        for who, outsiders in (("guests", self.guests), ("other organisations", self.external)):
            lines.append(f"{who} see: {outsiders.describe()}")
        return lines

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
            guests=section.guests.policy(),
            external=section.external.policy(),
        )


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    key = ".".join(str(part) for part in error["loc"])
    return f"{key}: {error['msg']}"


def access_report(policy: AccessPolicy, *, path: Path) -> list[str]:
    """`kb serve`'s start-up lines: which file (or the default) and what it lets see."""
    where = str(path) if path.exists() else f"no {path}, so the default"
    return [f"Slack access ({where}): {line}" for line in policy.summary()]


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
    # How long a question's lease lasts unrenewed (bot/slack/delivery/sweep.py).
    lease_seconds: float = 90
    # Stream answers into threads (chat.startStream) where Slack allows it; a refusal
    # falls back to the placeholder and chat.update.
    stream_answers: bool = True
