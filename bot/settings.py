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
    sample_kb: Path = Field(
        default=REPO_ROOT / "kb-data" / "handbook", validation_alias="KB_SAMPLE_KB"
    )
    sources_file: Path | None = Field(default=None, validation_alias="KB_SOURCES")
    index_batch_size: int = Field(default=256, validation_alias="KB_INDEX_BATCH_SIZE")
    reranker_model: str | None = Field(default=None, validation_alias="KB_RERANKER_MODEL")
    # The agent: steps per question, and Claude when a key is set (else the extractive
    # reasoner). The key is a secret: never logged, never printed.
    agent_max_steps: int = Field(default=4, ge=1, le=12, validation_alias="KB_AGENT_MAX_STEPS")
    anthropic_api_key: SecretStr | None = Field(default=None, validation_alias="ANTHROPIC_API_KEY")
    anthropic_model: str = Field(default="claude-sonnet-4-5", validation_alias="KB_ANTHROPIC_MODEL")
    anthropic_base_url: str | None = Field(default=None, validation_alias="ANTHROPIC_BASE_URL")
    anthropic_timeout: float = Field(default=20.0, gt=0, validation_alias="KB_ANTHROPIC_TIMEOUT")
    host: str = Field(default="127.0.0.1", validation_alias="KB_HOST")
    port: int = Field(default=3000, validation_alias="KB_PORT")

    @property
    def sources_path(self) -> Path:
        """The sources file: KB_SOURCES, else sources.toml in KB_HOME."""
        return self.sources_file or self.kb_home / "sources.toml"

    @property
    def embedded_data_dir(self) -> Path:
        return self.kb_home / "postgres"
