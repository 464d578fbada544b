"""Every third-party module the product imports is one its wheel declares.

An import that only works because some other package happened to pull its provider in
(lxml_html_clean through lxml's old extra, pydantic through pydantic-settings) breaks a
user's `pip install` the day that package stops doing so. deptry reads the imports of
bot/ agent/ store/ jobs/ and the dependencies in pyproject.toml ([tool.deptry] there).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def deptry(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    executable = shutil.which("deptry", path=str(Path(sys.executable).parent)) or "deptry"
    return subprocess.run(
        [executable, *args], cwd=cwd, capture_output=True, text=True, timeout=120,
        env={"PATH": str(Path(sys.executable).parent)},
    )  # fmt: skip


def test_every_import_of_the_product_is_a_declared_runtime_dependency() -> None:
    checked = deptry(".")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_an_undeclared_import_is_caught(tmp_path: Path) -> None:
    """The check itself can fail: a project whose store/ imports `yaml` while its
    pyproject.toml (ours, less the pyyaml line) does not declare it."""
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "reader.py").write_text("import yaml\n")
    pyproject = (REPO / "pyproject.toml").read_text()
    assert '    "pyyaml>=6,<7",\n' in pyproject
    (tmp_path / "pyproject.toml").write_text(pyproject.replace('    "pyyaml>=6,<7",\n', ""))
    checked = deptry(".", cwd=tmp_path)
    assert checked.returncode != 0
    said = re.sub(r"\x1b\[[0-9;]*m", "", checked.stdout + checked.stderr)
    # Installed here as another package's dependency: deptry calls it transitive (DEP003).
    assert "store/reader.py:1:8: DEP003 'yaml' imported but it is a transitive dependency" in said
