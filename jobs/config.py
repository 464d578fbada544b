"""The sources file: which sources to index, how, into which collection, and how often.

A TOML file with one `[[source]]` table per source:

    [[source]]
    name = "handbook"              # unique; documents are identified by (name, uri)
    kind = "directory"             # directory | web | notion
    collection = "handbook"        # what per-channel access control filters on
    every = "1h"                   # or: cron = "0 6 * * 1-5" (UTC)
    [source.settings]              # typed per kind: DirectorySettings, WebSettings
    root = "docs/handbook"         # relative to the sources file's folder

Everything is checked when the file is loaded, with pydantic models that forbid unknown
keys and take no string for a number or a list: a schedule that could never run, a
misspelt key or a zero concurrency is an error naming the file, the source and the key
(`SourceConfigError`), never a surprise at the first scheduled run.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass
from datetime import UTC, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from jobs.errors import SourceConfigError

KINDS = ("directory", "web", "notion", "github", "slack", "confluence", "google_drive")
DEFAULT_INCLUDE = (
    "**/*.md", "**/*.markdown", "**/*.txt", "**/*.rst", "**/*.html", "**/*.htm", "**/*.pdf",
    "**/*.docx",
)  # fmt: skip
# Hidden folders (.git, .venv) and vendored dependencies are never documentation.
DEFAULT_EXCLUDE = ("**/.*", "**/node_modules", "**/site-packages")

_DURATION = re.compile(r"^\s*(\d+)\s*([smhd])\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
_TOP_LEVEL_KEYS = ("source",)


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


class _Settings(BaseModel):
    # strict: TOML has types, so "4" for a number or "*.md" for a list is a mistake.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class DirectorySettings(_Settings):
    """A folder of files (see jobs/directory.py)."""

    root: str = Field(min_length=1)
    include: list[str] = Field(default_factory=lambda: list(DEFAULT_INCLUDE), min_length=1)
    exclude: list[str] = Field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    # Default: "template" when url_template is given, else "none".
    url_style: Literal["eleventy", "template", "none"] | None = None
    base_url: str | None = None
    url_template: str | None = None
    max_bytes: int = Field(default=10_000_000, ge=1, le=2_000_000_000)
    # `{% slack_channel %}` links and "ask in #channel" contacts point here, if given.
    slack_workspace_url: str | None = None
    # The budget of one file's conversion, in a worker process (jobs/isolation.py).
    convert_timeout_seconds: float = Field(default=60.0, gt=0, le=3600)
    convert_memory_mb: int = Field(default=1024, ge=256, le=65536)

    @model_validator(mode="after")
    def _url_settings_fit(self) -> DirectorySettings:
        style = self.resolved_url_style
        if style == "eleventy" and not self.base_url:
            raise ValueError("url_style 'eleventy' needs base_url (the site's root URL)")
        if style == "template":
            if not self.url_template:
                raise ValueError("url_style 'template' needs url_template")
            try:
                self.url_template.format(path="a.md", stem="a")
            except (KeyError, IndexError, ValueError) as error:
                raise ValueError(
                    f"url_template {self.url_template!r} is not valid: use only {{path}} and "
                    "{stem}"
                ) from error
        return self

    @property
    def resolved_url_style(self) -> Literal["eleventy", "template", "none"]:
        if self.url_style is not None:
            return self.url_style
        return "template" if self.url_template else "none"


class WebSettings(_Settings):
    """Pages and sitemaps over HTTP (see jobs/web.py)."""

    urls: list[str] = Field(default_factory=list)
    sitemaps: list[str] = Field(default_factory=list)
    same_host: bool = True
    respect_robots: bool = True
    user_agent: str | None = Field(default=None, min_length=1)
    timeout_seconds: float = Field(default=20.0, gt=0, le=600)
    max_bytes: int = Field(default=5_000_000, ge=1, le=1_000_000_000)
    concurrency: int = Field(default=4, ge=1, le=64)
    max_pages: int = Field(default=5000, ge=1, le=1_000_000)

    @model_validator(mode="after")
    def _something_to_fetch(self) -> WebSettings:
        if not self.urls and not self.sitemaps:
            raise ValueError("give urls or sitemaps (or both)")
        return self


# An environment variable's name, as shells write them. Upper case only: a pasted token
# (Notion's `ntn_...`, a Confluence API token) is then refused without being repeated.
_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")


class ConnectorSettings(_Settings):
    """What every connector's settings share (jobs/connectors/).

    A field whose name ends in `_env` names the environment variable holding a
    credential (`token_env = "NOTION_TOKEN"`): the secret itself never goes in the file,
    and only bot/ reads the environment (`credential_envs`).
    """

    # API calls of this source in flight at once.
    concurrency: int = Field(default=4, ge=1, le=32)
    # Tries per call on HTTP 429 / 5xx before the document (or the run) fails.
    max_attempts: int = Field(default=5, ge=1, le=20)
    timeout_seconds: float = Field(default=30.0, gt=0, le=600)

    @model_validator(mode="after")
    def _env_names_are_names(self) -> ConnectorSettings:
        for key, value in self:
            named = isinstance(value, str) and _ENV_NAME.match(value)
            if key.endswith("_env") and value is not None and not named:
                # The value is not repeated: it may be the secret pasted by mistake.
                raise ValueError(
                    f"{key} must name an environment variable (like NOTION_TOKEN: capital "
                    "letters, digits, _), not hold the secret itself"
                )
        return self

    def credential_envs(self) -> list[str]:
        """The environment variables this source reads its credentials from."""
        return [v for k, v in self if k.endswith("_env") and isinstance(v, str)]


class NotionSettings(ConnectorSettings):
    """The pages and databases shared with a Notion integration (jobs/connectors/notion.py)."""

    token_env: str = "NOTION_TOKEN"
    base_url: str = Field(default="https://api.notion.com", min_length=1)
    # Only pages below these pages (ids, with or without dashes); empty: everything shared.
    root_pages: list[str] = Field(default_factory=list)
    # Root page id → collection: the permission unit. Other roots: the source's collection.
    collections: dict[str, str] = Field(default_factory=dict)
    # Every this many runs, list every page's id to find deleted or unshared pages (the
    # search feed does not return them); the runs between read only what changed.
    full_check_every: int = Field(default=24, ge=1, le=10_000)
    # A page longer than this many blocks is indexed up to there, with a warning.
    max_blocks: int = Field(default=20_000, ge=1, le=1_000_000)
    # Each shared database is a document of its own (title, description, a table of its
    # rows' titles and properties, up to this many rows); false: rows only.
    databases: bool = True
    max_database_rows: int = Field(default=200, ge=1, le=10_000)
    # Results per call (search, a page's blocks, a database's rows; Notion's maximum is
    # 100): pages are read as each search answer arrives, so this bounds what a run holds.
    page_size: int = Field(default=100, ge=1, le=100)


GITHUB_DOC_PATHS = ("**/*.md", "**/*.markdown", "**/*.rst", "**/*.txt", "**/*.ipynb")
# Vendored and generated trees are never the team's documentation.
GITHUB_EXCLUDE = ("**/node_modules/**", "**/vendor/**", "**/third_party/**", ".github/**")
_REPOSITORY = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


class GitHubSettings(ConnectorSettings):
    """Repositories' docs (and optionally issues) over GitHub's REST API (jobs/github/)."""

    # GitHub.com, or a GitHub Enterprise Server's API root (https://HOST/api/v3).
    base_url: str = Field(default="https://api.github.com", min_length=1)
    # The environment variable holding the token (a fine-grained or classic PAT):
    # contents:read, issues:read.
    token_env: str = "GITHUB_TOKEN"
    # Or a GitHub App installation, which needs no person's token: the app's id, its
    # installation's id (in the installation's settings URL) and the environment variable
    # holding the app's private key (PEM). Each run mints an installation token (one
    # request); githubkit mints another before its hour is up.
    app_id: int | None = Field(default=None, ge=1)
    installation_id: int | None = Field(default=None, ge=1)
    private_key_env: str = "GITHUB_APP_PRIVATE_KEY"
    repositories: list[str] = Field(default_factory=list)
    # Or every repository of an organisation whose name matches `repository_filter`.
    org: str | None = Field(default=None, min_length=1)
    repository_filter: str = Field(default="*", min_length=1)
    include_archived: bool = False
    paths: list[str] = Field(default_factory=lambda: list(GITHUB_DOC_PATHS), min_length=1)
    exclude: list[str] = Field(default_factory=lambda: list(GITHUB_EXCLUDE))
    # none | answered (closed as completed) | closed | all: issues as documents.
    issues: Literal["none", "answered", "closed", "all"] = "none"
    # none | answered (an answer accepted) | all: discussions as documents (GraphQL).
    discussions: Literal["none", "answered", "all"] = "none"
    # The repository's wiki too (read with git: jobs/github/wiki.py).
    wiki: bool = False
    max_bytes: int = Field(default=1_000_000, ge=1, le=100_000_000)
    # A rate-limit wait longer than this ends the run (it resumes at the next one).
    max_wait_seconds: float = Field(default=120.0, ge=1, le=3600)

    @field_validator("repositories")
    @classmethod
    def _owner_slash_name(cls, repositories: list[str]) -> list[str]:
        for name in repositories:
            if not _REPOSITORY.match(name):
                raise ValueError(f"{name!r} is not owner/name")
        return repositories

    @property
    def app_auth(self) -> bool:
        return self.app_id is not None

    def credential_envs(self) -> list[str]:
        return [self.private_key_env if self.app_auth else self.token_env]

    @model_validator(mode="after")
    def _something_to_read(self) -> GitHubSettings:
        if (self.app_id is None) != (self.installation_id is None):
            raise ValueError(
                "a GitHub App needs both app_id and installation_id (the number at the end "
                "of the installation's settings URL); for a token, give neither"
            )
        if not self.repositories and not self.org:
            raise ValueError("give repositories (owner/name) or org")
        return self


_CHANNEL_ID = re.compile(r"^[CG][A-Z0-9]{6,}$")


class SlackSettings(ConnectorSettings):
    """Answered threads of chosen channels (jobs/slack_threads/)."""

    token_env: str = "SLACK_BOT_TOKEN"
    base_url: str = Field(default="https://slack.com/api/", min_length=1)
    # Channel ids (C0123ABCD) or names (help, #help). A private channel is read only when
    # it is listed here and the bot is a member.
    channels: list[str] = Field(min_length=1)
    # The first sync reads this far back; later ones from where the last one stopped.
    lookback_days: int = Field(default=90, ge=1, le=3650)
    # Each run re-reads the threads started this recently: late replies, edits, deletions.
    rescan_days: float = Field(default=7.0, ge=0, le=365)
    min_replies: int = Field(default=1, ge=1, le=100)
    # Only threads with this reaction (e.g. "white_check_mark"), if set.
    require_reaction: str | None = Field(default=None, min_length=1)
    # Only threads a reply from one of these user ids (U0123…) answered, if any.
    experts: list[str] = Field(default_factory=list)
    # Channel (id or name) → collection; a channel not listed: its own name.
    collections: dict[str, str] = Field(default_factory=dict)

    @field_validator("channels")
    @classmethod
    def _channel_names(cls, channels: list[str]) -> list[str]:
        cleaned = [c.strip().removeprefix("#") for c in channels]
        if any(not c for c in cleaned):
            raise ValueError("a channel is empty")
        return cleaned

    def is_id(self, channel: str) -> bool:
        return bool(_CHANNEL_ID.match(channel))


class ConfluenceSettings(ConnectorSettings):
    """Confluence Cloud or Data Center pages (see jobs/connectors/confluence.py)."""

    # Cloud: https://acme.atlassian.net/wiki ; Data Center: https://confluence.example.com
    url: str = Field(pattern=r"^https?://")
    # Cloud: user_env names the variable holding the account's e-mail, token_env its API
    # token. Data Center: token_env alone, a personal access token.
    token_env: str
    user_env: str | None = None
    cloud: bool | None = None  # None: decided from the URL (*.atlassian.net is Cloud)
    spaces: list[str] = Field(default_factory=list)
    exclude_spaces: list[str] = Field(default_factory=list)
    labels: list[str] = Field(default_factory=list)
    cql: str | None = Field(default=None, min_length=1)  # ANDed to the connector's own CQL
    # Space key -> collection; a space not listed goes to its key in lower case.
    collections: dict[str, str] = Field(default_factory=dict)
    # Pages with read restrictions of their own go here; None leaves them out.
    restricted_collection: str | None = Field(default=None, min_length=1)
    attachments: bool = True  # PDF attachments, through the PDF converter
    # Deletions and restriction changes are found by listing every page id in scope,
    # once every this many runs (1: every run).
    reconcile_every: int = Field(default=1, ge=1, le=1000)
    # CQL reads dates in the user's time zone, to the minute: re-list this much before
    # the cursor (pages found unchanged are not fetched).
    overlap_minutes: int = Field(default=14 * 60, ge=0, le=7 * 24 * 60)
    max_page_chars: int = Field(default=4_000_000, ge=1, le=100_000_000)
    page_size: int = Field(default=100, ge=1, le=200)  # results per search call
    max_attachment_bytes: int = Field(default=20_000_000, ge=1, le=2_000_000_000)


class GoogleDriveSettings(ConnectorSettings):
    """Files of Google shared drives and folders (see jobs/connectors/google_drive.py)."""

    # The variable holding a service account's JSON key (or an OAuth access token).
    credentials_env: str
    # Domain-wide delegation: the user the service account acts as (their My Drive).
    subject: str | None = Field(default=None, min_length=3)
    shared_drives: list[str] = Field(default_factory=list)
    folders: list[str] = Field(default_factory=list)
    # Shared drive or folder id -> collection; one not listed goes to its id in lower case.
    collections: dict[str, str] = Field(default_factory=dict)
    mime_types: list[str] = Field(default_factory=list)  # empty: every readable type
    # Files only specific people can open (limited access) are skipped unless this is set.
    include_limited_access: bool = False
    max_bytes: int = Field(default=20_000_000, ge=1, le=2_000_000_000)
    max_sheet_rows: int = Field(default=1000, ge=1, le=1_000_000)
    # Files or changes per call; also the most files read together before they are
    # handed on to be written.
    page_size: int = Field(default=100, ge=1, le=1000)
    # The Drive API's base URL; only for a proxy or a test double.
    api_endpoint: str | None = Field(default=None, pattern=r"^https?://")

    @model_validator(mode="after")
    def _something_to_read(self) -> GoogleDriveSettings:
        if not self.shared_drives and not self.folders:
            raise ValueError("give shared_drives or folders (or both)")
        return self


class _SourceBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    name: str = Field(min_length=1)
    collection: str = Field(default="default", min_length=1)
    every: str | None = None
    cron: str | None = None
    # Refuse to delete when the listing shrank below this share of the stored documents.
    min_listing_ratio: float = Field(default=0.5, ge=0, le=1)

    @field_validator("name")
    @classmethod
    def _name_has_text(cls, name: str) -> str:
        if not name.strip():
            raise ValueError("a source needs a name")
        return name

    @field_validator("every")
    @classmethod
    def _every_is_a_duration(cls, every: str | None) -> str | None:
        if every is None:
            return None
        try:
            duration = parse_duration(every)
        except SourceConfigError as error:
            raise ValueError(str(error)) from None
        if duration <= timedelta(0):
            raise ValueError("every must be longer than 0s")
        return every

    @field_validator("cron")
    @classmethod
    def _cron_is_valid(cls, cron: str | None) -> str | None:
        if cron is not None:
            from apscheduler.triggers.cron import CronTrigger

            try:
                CronTrigger.from_crontab(cron, timezone=UTC)
            except ValueError as error:
                raise ValueError(
                    f"{cron!r} is not a cron expression ({error}); five fields, like "
                    "'0 6 * * 1-5' (minute hour day month weekday, UTC)"
                ) from error
        return cron

    @model_validator(mode="after")
    def _one_schedule(self) -> _SourceBase:
        if self.every is not None and self.cron is not None:
            raise ValueError("give either every or cron, not both")
        return self

    @property
    def schedule(self) -> Schedule:
        if self.cron is not None:
            return Schedule(cron=self.cron)
        if self.every is not None:
            return Schedule(every=parse_duration(self.every))
        return Schedule()


class DirectorySourceConfig(_SourceBase):
    kind: Literal["directory"] = "directory"
    settings: DirectorySettings


class WebSourceConfig(_SourceBase):
    kind: Literal["web"] = "web"
    settings: WebSettings


class NotionSourceConfig(_SourceBase):
    kind: Literal["notion"] = "notion"
    settings: NotionSettings


class GitHubSourceConfig(_SourceBase):
    kind: Literal["github"] = "github"
    settings: GitHubSettings


class SlackSourceConfig(_SourceBase):
    kind: Literal["slack"] = "slack"
    settings: SlackSettings


class ConfluenceSourceConfig(_SourceBase):
    kind: Literal["confluence"] = "confluence"
    settings: ConfluenceSettings


class GoogleDriveSourceConfig(_SourceBase):
    kind: Literal["google_drive"] = "google_drive"
    settings: GoogleDriveSettings


SourceConfig = (
    DirectorySourceConfig
    | WebSourceConfig
    | NotionSourceConfig
    | GitHubSourceConfig
    | SlackSourceConfig
    | ConfluenceSourceConfig
    | GoogleDriveSourceConfig
)
_ENTRY = TypeAdapter[SourceConfig](
    Annotated[
        DirectorySourceConfig
        | WebSourceConfig
        | NotionSourceConfig
        | GitHubSourceConfig
        | SlackSourceConfig
        | ConfluenceSourceConfig
        | GoogleDriveSourceConfig,
        Field(discriminator="kind"),
    ]
)
_FIELDS: dict[str, type[BaseModel]] = {
    "directory": DirectorySourceConfig,
    "web": WebSourceConfig,
    "notion": NotionSourceConfig,
    "github": GitHubSourceConfig,
    "slack": SlackSourceConfig,
    "confluence": ConfluenceSourceConfig,
    "google_drive": GoogleDriveSourceConfig,
}
_SETTINGS: dict[str, type[BaseModel]] = {
    "directory": DirectorySettings,
    "web": WebSettings,
    "notion": NotionSettings,
    "github": GitHubSettings,
    "slack": SlackSettings,
    "confluence": ConfluenceSettings,
    "google_drive": GoogleDriveSettings,
}


def credential_envs(config: SourceConfig) -> list[str]:
    """The environment variables `config` names for its credentials (none for files, web)."""
    settings = config.settings
    return settings.credential_envs() if isinstance(settings, ConnectorSettings) else []


def parse_duration(text: str) -> timedelta:
    """'30s', '15m', '2h', '1d' → timedelta."""
    match = _DURATION.match(text)
    if not match:
        raise SourceConfigError(
            f"{text!r} is not a duration; write a number and a unit, like 30m, 6h or 1d"
        )
    return timedelta(**{_UNITS[match[2]]: int(match[1])})


def source_config(entry: dict[str, Any], *, where: str = "source") -> SourceConfig:
    """Validate one source's table; SourceConfigError (one line) says what to fix."""
    try:
        return _ENTRY.validate_python(entry)
    except ValidationError as error:
        raise SourceConfigError(f"{where}: {describe_error(entry, error)}") from None


def load_sources(path: Path) -> list[SourceConfig]:
    """Read and check the sources file; SourceConfigError names the file, source and key."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceConfigError(f"cannot read the sources file {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise SourceConfigError(f"the sources file {path} is not valid TOML: {exc}") from exc
    for key in data:
        if key not in _TOP_LEVEL_KEYS:
            raise SourceConfigError(
                f"{path}: unknown table {key!r}{_suggest(key, _TOP_LEVEL_KEYS)}"
            )
    entries = data.get("source", [])
    if not isinstance(entries, list) or not entries:
        raise SourceConfigError(f"{path} declares no [[source]] tables; see README 'Sources'")
    configs = [
        source_config(entry, where=f"{path}: {_describe_entry(entry, index)}")
        for index, entry in enumerate(entries, start=1)
    ]
    names = [c.name for c in configs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise SourceConfigError(f"{path}: source names must be unique; repeated: {duplicates}")
    return configs


def describe_error(entry: object, error: ValidationError) -> str:
    """The first problem as `key: what is wrong`, with the closest valid key for a typo."""
    first = error.errors()[0]
    kind = entry.get("kind") if isinstance(entry, dict) else None
    loc = [str(part) for part in first["loc"]]
    if loc and loc[0] == kind:  # the discriminated union's tag, not a key of the file
        loc = loc[1:]
    key = ".".join(loc)
    kind_name = kind if isinstance(kind, str) else ""
    if first["type"] in ("union_tag_invalid", "union_tag_not_found"):
        return f"kind: must be one of {', '.join(KINDS)} (got {kind!r})"
    if first["type"] == "extra_forbidden":
        model = _SETTINGS[kind_name] if loc[:1] == ["settings"] else _FIELDS[kind_name]
        return f"{key}: unknown key{_suggest(loc[-1], tuple(model.model_fields))}"
    if first["type"] == "missing":
        return f"{key}: required"
    message = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "value_error" or not loc:
        return f"{key}: {message}" if key else message
    return f"{key}: {message} (got {_short(first.get('input'))})"


def _describe_entry(entry: object, index: int) -> str:
    name = entry.get("name") if isinstance(entry, dict) else None
    return f"source {name!r}" if isinstance(name, str) and name else f"[[source]] #{index}"


def _suggest(key: str, valid: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
    if close:
        return f"; did you mean {close[0]!r}?"
    return f"; valid keys: {', '.join(valid)}"


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
