"""The `kb` command end to end, as a user runs it, against a server started apart from the bot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
pytestmark = pytest.mark.asyncio


def kb(*args: str, env: dict[str, str], timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=Path(__file__).resolve().parents[2],
    )


async def test_index_then_ask_over_database_url_prints_verified_quotes(
    database_url: str, tmp_path: Path
) -> None:
    env = {"DATABASE_URL": database_url, "KB_HOME": str(tmp_path / "home")}
    # Indexing embeds documents only: it never exports the question graph (seconds).
    graphs = tmp_path / "graphs"
    indexed = kb(
        "index",
        str(FIXTURES / "kb"),
        "--name",
        "fixture",
        "--json",
        env={**env, "KB_QUERY_GRAPH_DIR": str(graphs)},
    )
    assert indexed.returncode == 0, indexed.stderr
    assert not graphs.exists() or not any(graphs.iterdir())
    record = json.loads(indexed.stdout)
    assert record["documents_added"] == 3 and record["documents_failed"] == 0

    asked = kb("ask", "How do I request annual leave?", "--json", env=env)
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["covered"] is True
    assert answer["claims"], answer
    assert answer["claims"][0]["citation"]["title"] == "Leave"
    assert any("HRLinks" in claim["quote"] for claim in answer["claims"])
    # The embedded server was not used: KB_HOME holds no database.
    assert not (tmp_path / "home" / "postgres").exists()

    traced = kb("trace", str(answer["run_id"]), env=env)
    assert traced.returncode == 0, traced.stderr
    assert f"Run {answer['run_id']} · finished · extractive reasoner" in traced.stdout
    assert "Queries run:\n  - How do I request annual leave?" in traced.stdout
    assert "Stopped: " + answer["stop_reason"] in traced.stdout
    missing = kb("trace", "999999", env=env)
    assert missing.returncode == 1 and "no run 999999" in missing.stderr
    assert "Traceback" not in missing.stderr


async def test_demo_writes_its_replies_as_a_slack_preview_page(
    database_url: str, tmp_path: Path
) -> None:
    handbook = tmp_path / "handbook" / "pages"
    handbook.mkdir(parents=True)
    for page in (FIXTURES / "kb").glob("*.md"):
        (handbook / page.name).write_text(page.read_text())
    home = tmp_path / "home"
    env = {"DATABASE_URL": database_url, "KB_HOME": str(home), "KB_SAMPLE_KB": str(handbook.parent)}
    result = kb("demo", "--no-prompt", env=env)
    assert result.returncode == 0, result.stderr
    preview = home / "demo-replies.html"
    assert result.stdout.rstrip().endswith(f"The replies as Slack would show them: {preview}")
    page = preview.read_text()
    assert page.count('class="message user"') == 3
    assert "How do I request leave?" in page and "HRLinks" in page
    assert "Why this answer?" in page


async def test_an_unreachable_database_url_fails_with_one_clear_line(tmp_path: Path) -> None:
    env = {"DATABASE_URL": "postgresql://kb:s3cret-pass@127.0.0.1:9/kb", "KB_HOME": str(tmp_path)}
    result = kb("status", env=env, timeout=60)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: cannot connect to the database")
    assert "check DATABASE_URL" in lines[0]
    assert "s3cret-pass" not in result.stderr + result.stdout


async def test_help_answers_without_loading_the_model() -> None:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "bot", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0
    assert "index" in result.stdout and "ask" in result.stdout
    assert "sentence_transformers" not in result.stderr
    assert "torch" not in result.stderr.split()


async def test_demo_with_a_missing_sample_kb_fails_with_one_line_before_starting_anything(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "no-such-handbook"
    env = {"KB_SAMPLE_KB": str(missing), "KB_HOME": str(tmp_path / "home")}
    result = kb("demo", "--no-prompt", env=env, timeout=60)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: KB_SAMPLE_KB is") and str(missing) in lines[0]
    assert "unset it to use the bundled handbook" in lines[0]
    assert result.stdout == ""  # no sample question was answered from an empty index
    assert not (tmp_path / "home" / "postgres").exists()  # no database was started


async def test_a_damaged_embedded_database_folder_fails_with_one_clear_line(
    tmp_path: Path,
) -> None:
    """A data folder Postgres can't start from (here: no postgresql.conf beside its
    PG_VERSION) gives the server's own reason and what to do, not pgserver's traceback."""
    home = tmp_path / "home"
    (home / "postgres").mkdir(parents=True)
    (home / "postgres" / "PG_VERSION").write_text("16\n")
    env = {"KB_HOME": str(home), "DATABASE_URL": ""}
    result = kb("status", env=env, timeout=60)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: could not start the embedded Postgres"), lines[0]
    assert "postgresql.conf" in lines[0]  # Postgres's reason, read from its log
    assert "move that folder aside" in lines[0]


async def test_an_unreadable_embedded_database_says_why_not_what_the_last_run_logged(
    tmp_path: Path,
) -> None:
    """A folder whose files the server may not read (copied by another user, a restore
    with the wrong owner) fails before Postgres writes a word to its log: the reason is
    pg_ctl's own, not the last line an earlier run left there ("database system is shut
    down")."""
    env = {"KB_HOME": str(tmp_path / "home"), "DATABASE_URL": ""}
    made = kb("status", env=env, timeout=120)  # a real folder, its server stopped on exit
    assert made.returncode == 0, made.stderr
    folder = tmp_path / "home" / "postgres"
    # The server may read neither its control file nor write its log.
    (folder / "global" / "pg_control").chmod(0)
    (folder / "log").chmod(0o400)
    try:
        result = kb("status", env=env, timeout=60)
    finally:
        (folder / "global" / "pg_control").chmod(0o600)
        (folder / "log").chmod(0o600)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: could not start the embedded Postgres"), lines[0]
    assert "pg_control" in lines[0] and "Permission denied" in lines[0], lines[0]
    assert "shut down" not in lines[0]
