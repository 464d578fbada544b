"""The sources file: typed, checked at load time, every error one line naming file, source, key."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from jobs.config import DirectorySourceConfig, load_sources, parse_duration
from jobs.directory import DirectorySource
from jobs.errors import SourceConfigError
from jobs.sources import build_source, web_validators
from jobs.web import HttpValidators

GOOD = """
[[source]]
name = "handbook"
kind = "directory"
collection = "handbook"
every = "6h"
min_listing_ratio = 0.2
[source.settings]
root = "docs"
include = ["pages/**/*.md"]
url_style = "eleventy"
base_url = "https://handbook.example.gov"
slack_workspace_url = "https://example.slack.com"

[[source]]
name = "blog"
kind = "web"
cron = "0 6 * * 1-5"
[source.settings]
sitemaps = ["https://blog.example.com/sitemap.xml"]
concurrency = 2
"""

DOCS = "[[source]]\nname = 'docs'\nkind = 'directory'\n"
WEB = "[[source]]\nname = 'site'\nkind = 'web'\n"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sources.toml"
    path.write_text(text)
    return path


def test_a_sources_file_declares_kind_collection_schedule_and_settings(tmp_path: Path) -> None:
    handbook, blog = load_sources(write(tmp_path, GOOD))
    assert isinstance(handbook, DirectorySourceConfig)
    assert (handbook.name, handbook.kind, handbook.collection) == (
        "handbook",
        "directory",
        "handbook",
    )
    assert handbook.schedule.every == timedelta(hours=6)
    assert handbook.min_listing_ratio == 0.2
    assert handbook.settings.include == ["pages/**/*.md"]
    assert handbook.settings.slack_workspace_url == "https://example.slack.com"
    assert (blog.kind, blog.collection, blog.schedule.cron) == ("web", "default", "0 6 * * 1-5")
    assert blog.settings.concurrency == 2


def test_a_directory_source_is_built_with_its_root_relative_to_the_file(tmp_path: Path) -> None:
    handbook, _ = load_sources(write(tmp_path, GOOD))
    source = build_source(handbook, base_dir=tmp_path)
    assert isinstance(source, DirectorySource)
    assert source.root == tmp_path / "docs"
    assert source.slack_workspace_url == "https://example.slack.com"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # The cases from the issue: each was silently accepted or crashed later.
        (
            DOCS + "[source.settings]\nroot = 'd'\ninclude = '**/*.md'",
            "source 'docs': settings.include: Input should be a valid list (got '**/*.md')",
        ),
        (
            WEB + "[source.settings]\nurls = ['https://a.example/']\nconcurrency = 0",
            "source 'site': settings.concurrency: Input should be greater than or equal to 1",
        ),
        (
            WEB + "cron = '99 * * * *'\n[source.settings]\nurls = ['https://a.example/']",
            "source 'site': cron: '99 * * * *' is not a cron expression",
        ),
        (
            WEB + "evry = '1h'\n[source.settings]\nurls = ['https://a.example/']",
            "source 'site': evry: unknown key; did you mean 'every'?",
        ),
        (
            DOCS + "[source.settings]\nroot = 'd'\nincludes = ['*.md']",
            "source 'docs': settings.includes: unknown key; did you mean 'include'?",
        ),
        (DOCS + "[source.settings]\nroot = 'd'\nmax_bytes = '10'", "settings.max_bytes: Input"),
        (DOCS + "min_listing_ratio = 2\n[source.settings]\nroot = 'd'", "min_listing_ratio:"),
        ("[[source]]\nkind = 'directory'\n[source.settings]\nroot = 'd'", "#1: name: required"),
        ("[[source]]\nname = 'a'\nkind = 'ftp'", "kind: must be one of directory, web"),
        (DOCS + "every = 'often'\n[source.settings]\nroot = 'd'", "not a duration"),
        (DOCS + "every = '0s'\n[source.settings]\nroot = 'd'", "longer than 0s"),
        (WEB + "cron = '* *'\n[source.settings]\nurls = ['https://a/']", "not a cron expression"),
        (WEB + "every='1h'\ncron='0 * * * *'\n[source.settings]\nurls=['https://a/']", "not both"),
        (WEB + "[source.settings]\nsame_host = true", "give urls or sitemaps"),
        (DOCS + "[source.settings]\nroot = 'd'\nurl_style = 'eleventy'", "needs base_url"),
        (DOCS, "settings: required"),
        (
            "[[source]]\nname='a'\nkind='web'\n[source.settings]\nurls=['https://a/']\n" * 2,
            "unique",
        ),
        ("[[sources]]\nname = 'a'", "unknown table 'sources'; did you mean 'source'?"),
        ("name = ", "not valid TOML"),
        ("", r"declares no \[\[source\]\]"),
    ],
)
def test_a_bad_sources_file_is_one_line_naming_file_source_and_key(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(SourceConfigError) as raised:
        load_sources(write(tmp_path, text))
    error = str(raised.value)
    assert "\n" not in error
    assert str(tmp_path / "sources.toml") in error
    if message.startswith("source ") or message.startswith("#"):
        assert message in error
    else:
        assert raised.match(message)


def test_durations_read_seconds_to_days() -> None:
    assert parse_duration("30s") == timedelta(seconds=30)
    assert parse_duration("15m") == timedelta(minutes=15)
    assert parse_duration("1d") == timedelta(days=1)


def test_stored_http_validators_feed_conditional_gets() -> None:
    found = web_validators(
        {
            "https://a/1": {"http": {"etag": '"x"', "last_modified": None}},
            "https://a/2": {"http": {}},
            "https://a/3": {},
        }
    )
    assert found == {"https://a/1": HttpValidators('"x"', None)}
