"""Settings, read from the environment (and an optional .env file) in one place."""

from __future__ import annotations

from pathlib import Path

import platformdirs
from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.errors import SettingsError
from bot.sample_kb import handbook_root

# The environment variable behind each setting, for error messages.
_VARIABLES = {
    "KB_HOME", "DATABASE_URL", "KB_EMBEDDING_MODEL", "KB_TORCH_THREADS", "KB_SAMPLE_KB",
    "KB_SOURCES", "KB_INDEX_BATCH_SIZE", "KB_RERANKER_MODEL", "KB_HOST", "KB_PORT",
    "KB_AGENT_MAX_STEPS", "ANTHROPIC_API_KEY", "KB_ANTHROPIC_MODEL", "ANTHROPIC_BASE_URL",
    "KB_ANTHROPIC_TIMEOUT", "KB_WORKER_LEASE_SECONDS",
}  # fmt: skip
_SECRETS = {"DATABASE_URL", "ANTHROPIC_API_KEY"}


def _default_home() -> Path:
    return Path(platformdirs.user_data_dir("slack-kb", appauthor=False))


class Settings(BaseSettings):
    """Everything configurable. Environment variable names are given in the README."""

    # Empty counts as unset: docker compose passes `${VAR:-}` as an empty string.
    model_config = SettingsConfigDict(env_file=".env", extra="ignore", env_ignore_empty=True)

    kb_home: Path = Field(default_factory=_default_home, validation_alias="KB_HOME")
    database_url: SecretStr | None = Field(default=None, validation_alias="DATABASE_URL")
    embedding_model: str | None = Field(
        default=None, validation_alias="KB_EMBEDDING_MODEL", min_length=1
    )
    torch_threads: int | None = Field(
        default=None, validation_alias="KB_TORCH_THREADS", ge=1, le=1024
    )
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

    @property
    def sources_path(self) -> Path:
        """The sources file: KB_SOURCES, else sources.toml in KB_HOME."""
        return self.sources_file or self.kb_home / "sources.toml"

    @property
    def embedded_data_dir(self) -> Path:
        return self.kb_home / "postgres"


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
