"""The `github` kind in sources.toml: what it takes and the one-line errors it gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.config import GitHubSourceConfig, load_sources
from jobs.errors import SourceConfigError

GOOD = """
[[source]]
name = "eng-docs"
kind = "github"
collection = "engineering"
every = "30m"
[source.settings]
base_url = "https://ghe.example.com/api/v3"
token_env = "GHE_TOKEN"
repositories = ["acme/handbook"]
org = "acme"
repository_filter = "docs-*"
issues = "answered"
"""


def test_a_github_source_names_its_repositories_and_its_token_variable(tmp_path: Path) -> None:
    path = tmp_path / "sources.toml"
    path.write_text(GOOD)
    (config,) = load_sources(path)
    assert isinstance(config, GitHubSourceConfig)
    settings = config.settings
    assert settings.token_env == "GHE_TOKEN" and settings.issues == "answered"
    assert settings.paths == ["**/*.md", "**/*.markdown", "**/*.rst", "**/*.txt", "**/*.ipynb"]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ('repositories = ["handbook"]', "settings.repositories: 'handbook' is not owner/name"),
        ('issues = "none"', "settings: give repositories (owner/name) or org"),
        (
            'repositories = ["a/b"]\napp_id = 12',
            "a GitHub App needs both app_id and installation_id",
        ),
        (
            'repositories = ["a/b"]\ntoken_env = "ghp_abc"',
            "settings: token_env must name an environment variable",
        ),
        ('repositories = ["a/b"]\nissues = "some"', "settings.issues: Input should be"),
    ],
)
def test_a_bad_github_table_is_one_line(tmp_path: Path, settings: str, message: str) -> None:
    path = tmp_path / "sources.toml"
    path.write_text(f'[[source]]\nname = "gh"\nkind = "github"\n[source.settings]\n{settings}\n')
    with pytest.raises(SourceConfigError) as caught:
        load_sources(path)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert "ghp_abc" not in str(caught.value)
