"""Settings, read from the environment (and an optional .env file) in one place."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.errors import SettingsError
from bot.sample_kb import handbook_root

# The environment variable behind each setting, for error messages.
_VARIABLES = {
    "KB_HOME", "DATABASE_URL", "KB_DATABASE_POOL_SIZE", "KB_EMBEDDING_MODEL", "KB_TORCH_THREADS",
    "KB_SAMPLE_KB",
    "KB_SOURCES", "KB_INDEX_BATCH_SIZE", "KB_RERANKER_MODEL", "KB_HOST", "KB_PORT",
    "KB_AGENT_MAX_STEPS", "ANTHROPIC_API_KEY", "KB_ANTHROPIC_MODEL", "ANTHROPIC_BASE_URL",
    "KB_ANTHROPIC_TIMEOUT", "KB_WORKER_LEASE_SECONDS", "KB_EMBED_NICENESS", "SLACK_BOT_TOKEN",
    "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "SLACK_API_URL", "KB_SLACK_CONFIG",
    "KB_SLACK_ESCALATION_CHANNEL",
    "KB_SLACK_ESCALATION_USERGROUP", "KB_SLACK_HELP_CHANNELS", "KB_SLACK_PRIVATE",
    "KB_SLACK_THREAD_NEEDS_MENTION", "KB_SLACK_IGNORE_BOTS", "KB_SLACK_ALWAYS_ESCALATE",
    "KB_SLACK_RUNS_PER_WORKSPACE", "KB_SLACK_HISTORY_TURNS", "KB_SLACK_MAX_BODY_BYTES",
    "KB_READY_MAX_REINDEX_AGE", "KB_LOG_FORMAT", "KB_RETENTION_DAYS", "KB_SLACK_MAX_QUESTION_CHARS",
    "KB_SLACK_LEASE", "KB_SLACK_SWEEP_EVERY",
    "KB_SLACK_STREAM",
}  # fmt: skip
_SECRETS = {
    "DATABASE_URL", "ANTHROPIC_API_KEY", "SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET",
    "SLACK_APP_TOKEN",
}  # fmt: skip


def _default_home() -> Path:
    return Path(platformdirs.user_data_dir("slack-kb", appauthor=False))


class Settings(BaseSettings):
    """Everything configurable. Environment variable names are given in the README."""

    # Empty counts as unset: docker compose passes `${VAR:-}` as an empty string.
    model_config = SettingsConfigDict(env_file=".env", extra="ignore", env_ignore_empty=True)

    kb_home: Path = Field(default_factory=_default_home, validation_alias="KB_HOME")
    database_url: SecretStr | None = Field(default=None, validation_alias="DATABASE_URL")
    # Connections one process keeps to Postgres. Every agent run takes one for each of its
    # ~20 statements, so with many runs at once (KB_SLACK_RUNS_PER_WORKSPACE) a small pool
    # is a queue: at 50 runs and 8 connections a run waited a median 132 ms per statement
    # (bench/results/slack_load.md). Postgres allows 100 connections by default, shared
    # by every replica and `kb jobs --worker`.
    database_pool_size: int = Field(
        default=20, ge=2, le=1000, validation_alias="KB_DATABASE_POOL_SIZE"
    )
    embedding_model: str | None = Field(
        default=None, validation_alias="KB_EMBEDDING_MODEL", min_length=1
    )
    torch_threads: int | None = Field(
        default=None, validation_alias="KB_TORCH_THREADS", ge=1, le=1024
    )
    # The embedding thread (and torch's) run this much nicer than the event loop, so a
    # question being answered never delays Slack's acks (bench/results/slack_load.md).
    embed_niceness: int = Field(default=10, ge=0, le=19, validation_alias="KB_EMBED_NICENESS")
    # Questions are embedded through an ONNX graph of the model (store/query_graph.py),
    # exported once into KB_HOME; "torch" embeds them with the model itself.
    query_embedding: Literal["onnx", "torch"] = Field(
        default="onnx", validation_alias="KB_QUERY_EMBEDDING"
    )
    query_graph_cache: Path | None = Field(default=None, validation_alias="KB_QUERY_GRAPH_DIR")
    sample_kb: Path = Field(default_factory=handbook_root, validation_alias="KB_SAMPLE_KB")
    sources_file: Path | None = Field(default=None, validation_alias="KB_SOURCES")
    index_batch_size: int = Field(
        default=256, validation_alias="KB_INDEX_BATCH_SIZE", ge=1, le=100_000
    )
    # How long a claim on queued documents lasts without renewal (renewed every third of
    # it): a killed worker's documents are taken over after this long.
    worker_lease_seconds: float = Field(
        default=60.0, validation_alias="KB_WORKER_LEASE_SECONDS", ge=1, le=3600
    )
    reranker_model: str | None = Field(
        default=None, validation_alias="KB_RERANKER_MODEL", min_length=1
    )
    # The agent: steps per question, and Claude when a key is set (else the extractive
    # reasoner). The key is a secret: never logged, never printed.
    agent_max_steps: int = Field(default=4, ge=1, le=12, validation_alias="KB_AGENT_MAX_STEPS")
    # kb serve embeds every stored sentence ahead of the questions, in the background.
    sentence_warmup: bool = Field(default=True, validation_alias="KB_SENTENCE_WARMUP")
    anthropic_api_key: SecretStr | None = Field(default=None, validation_alias="ANTHROPIC_API_KEY")
    anthropic_model: str = Field(
        default="claude-sonnet-4-5", min_length=1, validation_alias="KB_ANTHROPIC_MODEL"
    )
    anthropic_base_url: str | None = Field(default=None, validation_alias="ANTHROPIC_BASE_URL")
    anthropic_timeout: float = Field(
        default=20.0, gt=0, le=600, validation_alias="KB_ANTHROPIC_TIMEOUT"
    )
    host: str = Field(default="127.0.0.1", validation_alias="KB_HOST", min_length=1)
    port: int = Field(default=3000, validation_alias="KB_PORT", ge=1, le=65535)

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
    slack_escalation_elsewhere: str | None = Field(
        default=None, validation_alias="KB_SLACK_ESCALATION_ELSEWHERE"
    )
    slack_runs_per_workspace: int = Field(
        default=2, ge=1, validation_alias="KB_SLACK_RUNS_PER_WORKSPACE"
    )
    slack_history_turns: int = Field(default=10, ge=0, validation_alias="KB_SLACK_HISTORY_TURNS")
    # A question's lease (bot/slack/delivery/sweep.py): renewed by the process answering it while
    # it works; once it runs out, a sweep on any replica re-runs the question (once),
    # then tells the asker to ask again. Sweeps (and renewals) run every
    # KB_SLACK_SWEEP_EVERY seconds, and at least three times per lease.
    slack_lease: float = Field(default=90, gt=0, validation_alias="KB_SLACK_LEASE")
    slack_sweep_every: float = Field(default=15, gt=0, validation_alias="KB_SLACK_SWEEP_EVERY")
    slack_max_body_bytes: int = Field(
        default=1_048_576, ge=1024, validation_alias="KB_SLACK_MAX_BODY_BYTES"
    )
    # A question longer than this is not run: the asker is asked to shorten it.
    slack_max_question_chars: int = Field(
        default=4000, ge=100, le=1_000_000, validation_alias="KB_SLACK_MAX_QUESTION_CHARS"
    )
    # Answers streamed into their thread claim by claim where Slack supports it (else,
    # and with this off, a placeholder replaced by the answer).
    slack_stream: bool = Field(default=True, validation_alias="KB_SLACK_STREAM")

    # Operations (README "Operate"): readiness, logs, retention.
    # /readyz fails when no reindex has succeeded for this many hours; 0 turns it off.
    ready_max_reindex_age: float = Field(
        default=48.0, ge=0, le=24 * 365, validation_alias="KB_READY_MAX_REINDEX_AGE"
    )
    # json: one object per line on stderr; text: for people. Unset: json for `kb serve`
    # and `kb jobs`, text for the interactive commands.
    log_format: Literal["json", "text"] | None = Field(
        default=None, validation_alias="KB_LOG_FORMAT"
    )
    # Stored runs and question text older than this are purged on the schedule; 0 keeps all.
    retention_days: int = Field(default=90, ge=0, le=36_500, validation_alias="KB_RETENTION_DAYS")

    @property
    def max_reindex_age(self) -> timedelta | None:
        hours = self.ready_max_reindex_age
        return timedelta(hours=hours) if hours > 0 else None

    @property
    def retention(self) -> timedelta | None:
        return timedelta(days=self.retention_days) if self.retention_days > 0 else None

    @property
    def sources_path(self) -> Path:
        """The sources file: KB_SOURCES, else sources.toml in KB_HOME."""
        return self.sources_file or self.kb_home / "sources.toml"

    @property
    def query_graph_dir(self) -> Path | None:
        """Where the ONNX query graph is kept, or None to embed questions with torch."""
        if self.query_embedding == "torch":
            return None
        return self.query_graph_cache or self.kb_home / "query-graphs"

    @property
    def embedded_data_dir(self) -> Path:
        return self.kb_home / "postgres"

    @property
    def slack_journal_path(self) -> Path:
        """Where Slack requests acked during an outage wait (bot/slack/delivery/journal.py)."""
        return self.kb_home / "slack-journal"

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


def load_settings() -> Settings:
    """The settings from the environment; SettingsError (one line) names the bad variable."""
    try:
        return Settings()
    except ValidationError as error:
        first = error.errors()[0]
        variable = str(first["loc"][0]) if first["loc"] else "the environment"
        if variable not in _VARIABLES:
            variable = variable.upper()
        message = str(first["msg"]).removeprefix("Value error, ")
        # Never echo a secret back, even a malformed one.
        got = "" if variable in _SECRETS else f" (got {first.get('input')!r})"
        raise SettingsError(f"{variable}: {message}{got}") from None
