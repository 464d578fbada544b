"""Settings read from the environment, as a container receives them."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.sample_kb import handbook_root
from bot.settings import Settings


def test_a_variable_set_to_the_empty_string_counts_as_unset(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # What docker compose passes for `DATABASE_URL: ${DATABASE_URL:-}` left empty in .env.
    monkeypatch.chdir(tmp_path)  # no .env file here
    for name in ("DATABASE_URL", "KB_SAMPLE_KB", "KB_PORT", "KB_SOURCES"):
        monkeypatch.setenv(name, "")
    settings = Settings()
    assert settings.database_url is None  # the embedded Postgres, not a server at ""
    assert settings.sample_kb == handbook_root()
    assert settings.port == 3000
    assert settings.sources_file is None


def test_the_default_sample_kb_is_the_handbook_inside_the_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KB_SAMPLE_KB", raising=False)
    root = Settings().sample_kb
    assert root == Path(__file__).resolve().parents[2] / "bot" / "sample_kb" / "handbook"
    assert (root / "SOURCE.md").is_file() and any((root / "pages").rglob("*.md"))
