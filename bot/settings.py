"""Settings, read from the environment (and an optional .env file) in one place."""

from __future__ import annotations

from pathlib import Path

import platformdirs
from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parent.parent


def _default_home() -> Path:
    return Path(platformdirs.user_data_dir("slack-kb", appauthor=False))


class Settings(BaseSettings):
    """Everything configurable. Environment variable names are given in the README."""

    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    kb_home: Path = Field(default_factory=_default_home, validation_alias="KB_HOME")
    database_url: SecretStr | None = Field(default=None, validation_alias="DATABASE_URL")
    embedding_model: str | None = Field(default=None, validation_alias="KB_EMBEDDING_MODEL")
    torch_threads: int | None = Field(default=None, validation_alias="KB_TORCH_THREADS")
    # The embedding thread (and torch's) run this much nicer than the event loop, so a
    # question being answered never delays Slack's acks (bench/results/slack_load.md).
    embed_niceness: int = Field(default=10, ge=0, le=19, validation_alias="KB_EMBED_NICENESS")
    sample_kb: Path = Field(
        default=REPO_ROOT / "kb-data" / "handbook", validation_alias="KB_SAMPLE_KB"
    )
    sources_file: Path | None = Field(default=None, validation_alias="KB_SOURCES")
    index_batch_size: int = Field(default=256, validation_alias="KB_INDEX_BATCH_SIZE")
    reranker_model: str | None = Field(default=None, validation_alias="KB_RERANKER_MODEL")
    host: str = Field(default="127.0.0.1", validation_alias="KB_HOST")
    port: int = Field(default=3000, validation_alias="KB_PORT")

    # Slack (README "Create the Slack app"). Tokens are secrets: never logged or echoed.
    slack_bot_token: SecretStr | None = Field(default=None, validation_alias="SLACK_BOT_TOKEN")
    slack_signing_secret: SecretStr | None = Field(
        default=None, validation_alias="SLACK_SIGNING_SECRET"
    )
    slack_app_token: SecretStr | None = Field(default=None, validation_alias="SLACK_APP_TOKEN")
    slack_api_url: str = Field(default="https://slack.com/api/", validation_alias="SLACK_API_URL")
    slack_config_file: Path | None = Field(default=None, validation_alias="KB_SLACK_CONFIG")
    slack_escalation_channel: str | None = Field(
        default=None, validation_alias="KB_SLACK_ESCALATION_CHANNEL"
    )
    slack_escalation_usergroup: str | None = Field(
        default=None, validation_alias="KB_SLACK_ESCALATION_USERGROUP"
    )
    slack_help_channels: str = Field(default="", validation_alias="KB_SLACK_HELP_CHANNELS")
    slack_private_by_default: bool = Field(default=False, validation_alias="KB_SLACK_PRIVATE")
    slack_thread_needs_mention: bool = Field(
        default=False, validation_alias="KB_SLACK_THREAD_NEEDS_MENTION"
    )
    slack_ignore_bots: bool = Field(default=True, validation_alias="KB_SLACK_IGNORE_BOTS")
    slack_always_escalate: bool = Field(default=False, validation_alias="KB_SLACK_ALWAYS_ESCALATE")
    slack_runs_per_workspace: int = Field(
        default=2, ge=1, validation_alias="KB_SLACK_RUNS_PER_WORKSPACE"
    )
    slack_history_turns: int = Field(default=10, ge=0, validation_alias="KB_SLACK_HISTORY_TURNS")
    slack_max_body_bytes: int = Field(
        default=1_048_576, ge=1024, validation_alias="KB_SLACK_MAX_BODY_BYTES"
    )

    @property
    def sources_path(self) -> Path:
        """The sources file: KB_SOURCES, else sources.toml in KB_HOME."""
        return self.sources_file or self.kb_home / "sources.toml"

    @property
    def embedded_data_dir(self) -> Path:
        return self.kb_home / "postgres"

    @property
    def slack_config_path(self) -> Path:
        """The Slack access file: KB_SLACK_CONFIG, else slack.toml in KB_HOME."""
        return self.slack_config_file or self.kb_home / "slack.toml"

    @property
    def help_channels(self) -> tuple[str, ...]:
        return tuple(c.strip() for c in self.slack_help_channels.split(",") if c.strip())

    def slack_missing(self) -> list[str]:
        """The variables still to set before the Slack app can run (empty: it can)."""
        missing = [] if self.slack_bot_token else ["SLACK_BOT_TOKEN"]
        if not self.slack_signing_secret and not self.slack_app_token:
            missing.append("SLACK_SIGNING_SECRET (HTTP) or SLACK_APP_TOKEN (Socket Mode)")
        return missing
