"""The wheel that deploy/install.sh builds (and the image installs) carries the bot's data.

The tests run from a checkout with an editable install, where the handbook is found in
the source tree whatever the packaging says; so these look inside the built wheel, and
import from it unpacked, as a non-editable install sees it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HANDBOOK = REPO / "bot" / "sample_kb" / "handbook"
MIGRATIONS = REPO / "store" / "migrations"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        ["bash", str(REPO / "deploy" / "install.sh"), "--wheel-only", str(out)],
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (found,) = out.glob("slack_kb-*.whl")
    return found


def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_the_wheel_carries_every_handbook_page_and_its_source_note(wheel: Path) -> None:
    in_tree = {f"bot/sample_kb/handbook/{p.relative_to(HANDBOOK)}" for p in HANDBOOK.rglob("*.md")}
    assert "bot/sample_kb/handbook/SOURCE.md" in in_tree and len(in_tree) > 100
    shipped = {n for n in wheel_names(wheel) if n.startswith("bot/sample_kb/handbook/")}
    assert shipped == in_tree


def test_the_wheel_carries_every_migration(wheel: Path) -> None:
    in_tree = {f"store/migrations/{p.name}" for p in MIGRATIONS.glob("*.sql")}
    assert in_tree
    assert {n for n in wheel_names(wheel) if n.endswith(".sql")} == in_tree


def test_the_wheel_carries_no_tests_benchmarks_or_local_files(wheel: Path) -> None:
    tops = {name.split("/")[0] for name in wheel_names(wheel)}
    assert tops == {"agent", "bot", "jobs", "store", "slack_kb-0.1.0.dist-info"}


def test_unpacked_the_package_finds_its_handbook_and_migrations(
    wheel: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    probe = (
        "import json, sys; sys.path.insert(0, sys.argv[1]);"
        "import bot; from bot.sample_kb import handbook_root;"
        "from store.migrate import bundled_migrations;"
        "root = handbook_root();"
        "print(json.dumps({'bot': bot.__file__, 'root': str(root),"
        " 'pages': len(list((root / 'pages').rglob('*.md'))),"
        " 'migrations': len(bundled_migrations())}))"
    )
    ran = subprocess.run(
        [sys.executable, "-c", probe, str(site)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    found = json.loads(ran.stdout)
    assert Path(found["bot"]).is_relative_to(site)  # not the checkout's copy
    assert Path(found["root"]) == site / "bot" / "sample_kb" / "handbook"
    assert found["pages"] == len(list((HANDBOOK / "pages").rglob("*.md")))
    assert found["migrations"] == len(list(MIGRATIONS.glob("*.sql")))
