from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from jobs.config import load_sources, parse_duration
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
[source.settings]
root = "docs"
include = ["pages/**/*.md"]
url_style = "eleventy"
base_url = "https://handbook.example.gov"

[[source]]
name = "blog"
kind = "web"
cron = "0 6 * * 1-5"
[source.settings]
sitemaps = ["https://blog.example.com/sitemap.xml"]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sources.toml"
    path.write_text(text)
    return path


def test_a_sources_file_declares_kind_collection_schedule_and_settings(tmp_path: Path) -> None:
    handbook, blog = load_sources(write(tmp_path, GOOD))
    assert (handbook.name, handbook.kind, handbook.collection) == (
        "handbook",
        "directory",
        "handbook",
    )
    assert handbook.schedule.every == timedelta(hours=6)
    assert handbook.settings["include"] == ["pages/**/*.md"]
    assert (blog.kind, blog.collection, blog.schedule.cron) == ("web", "default", "0 6 * * 1-5")


def test_a_directory_source_is_built_with_its_root_relative_to_the_file(tmp_path: Path) -> None:
    handbook, _ = load_sources(write(tmp_path, GOOD))
    source = build_source(handbook, base_dir=tmp_path)
    assert isinstance(source, DirectorySource)
    assert source.root == tmp_path / "docs"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[source]]\nkind = 'directory'", "needs a name"),
        ("[[source]]\nname = 'a'\nkind = 'ftp'", "kind must be one of"),
        ("[[source]]\nname = 'a'\nkind = 'web'\nevery = 'often'", "not a duration"),
        ("[[source]]\nname = 'a'\nkind = 'web'\ncron = '* *'", "five fields"),
        ("[[source]]\nname = 'a'\nkind = 'web'\nevery='1h'\ncron='0 * * * *'", "not both"),
        ("[[source]]\nname='a'\nkind='web'\n[[source]]\nname='a'\nkind='web'", "unique"),
        ("name = ", "not valid TOML"),
        ("", r"declares no \[\[source\]\]"),
    ],
)
def test_a_bad_sources_file_says_what_to_fix(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(SourceConfigError, match=message):
        load_sources(write(tmp_path, text))


def test_unknown_settings_are_refused_by_name(tmp_path: Path) -> None:
    (config,) = load_sources(
        write(
            tmp_path,
            "[[source]]\nname='a'\nkind='directory'\n[source.settings]\nroot='x'\nroots='y'",
        )
    )
    with pytest.raises(SourceConfigError, match="roots"):
        build_source(config, base_dir=tmp_path)


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
