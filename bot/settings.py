"""Settings, read from the environment (and an optional .env file) in one place."""

from __future__ import annotations

from pathlib import Path

import platformdirs
from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.sample_kb import handbook_root


def _default_home() -> Path:
    return Path(platformdirs.user_data_dir("slack-kb", appauthor=False))


class Settings(BaseSettings):
    """Everything configurable. Environment variable names are given in the README."""

    # Empty counts as unset: docker compose passes `${VAR:-}` as an empty string.
    model_config = SettingsConfigDict(env_file=".env", extra="ignore", env_ignore_empty=True)

    kb_home: Path = Field(default_factory=_default_home, validation_alias="KB_HOME")
    database_url: SecretStr | None = Field(default=None, validation_alias="DATABASE_URL")
    embedding_model: str | None = Field(default=None, validation_alias="KB_EMBEDDING_MODEL")
    torch_threads: int | None = Field(default=None, validation_alias="KB_TORCH_THREADS")
    sample_kb: Path = Field(default_factory=handbook_root, validation_alias="KB_SAMPLE_KB")
    sources_file: Path | None = Field(default=None, validation_alias="KB_SOURCES")
    index_batch_size: int = Field(default=256, validation_alias="KB_INDEX_BATCH_SIZE")
    reranker_model: str | None = Field(default=None, validation_alias="KB_RERANKER_MODEL")
    host: str = Field(default="127.0.0.1", validation_alias="KB_HOST")
    port: int = Field(default=3000, validation_alias="KB_PORT")

    @property
    def sources_path(self) -> Path:
        """The sources file: KB_SOURCES, else sources.toml in KB_HOME."""
        return self.sources_file or self.kb_home / "sources.toml"

    @property
    def embedded_data_dir(self) -> Path:
        return self.kb_home / "postgres"
