"""Bad configuration as a user meets it: one line, a non-zero exit, at once, and nothing runs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# Generous: the point is that nothing waits for a model, a database or a schedule.
PROMPT = 20.0

SOURCE = "[[source]]\nname = 'docs'\nkind = 'directory'\n"
WEB = "[[source]]\nname = 'site'\nkind = 'web'\n"


def kb(*args: str, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "bot", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    return result, time.perf_counter() - started


@pytest.mark.parametrize(
    ("sources", "expected"),
    [
        (
            SOURCE + "[source.settings]\nroot = '.'\ninclude = '**/*.md'\n",
            "source 'docs': settings.include: Input should be a valid list",
        ),
        (
            WEB + "[source.settings]\nurls = ['https://a.example/']\nconcurrency = 0\n",
            "source 'site': settings.concurrency: Input should be greater than or equal to 1",
        ),
        (
            WEB + "cron = '99 * * * *'\n[source.settings]\nurls = ['https://a.example/']\n",
            "source 'site': cron: '99 * * * *' is not a cron expression",
        ),
        (
            SOURCE + "evry = '1h'\n[source.settings]\nroot = '.'\n",
            "source 'docs': evry: unknown key; did you mean 'every'?",
        ),
    ],
)
def test_a_malformed_sources_file_is_one_line_and_a_failure(
    tmp_path: Path, sources: str, expected: str
) -> None:
    path = tmp_path / "sources.toml"
    path.write_text(sources)
    env = {"KB_HOME": str(tmp_path / "home"), "KB_SOURCES": str(path)}

    result, seconds = kb("sources", "--check", env=env)

    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert str(path) in lines[0] and expected in lines[0]
    assert seconds < PROMPT
    assert not (tmp_path / "home" / "postgres").exists()  # no database was started


def test_kb_index_refuses_a_malformed_sources_file_before_starting_anything(
    tmp_path: Path,
) -> None:
    path = tmp_path / "sources.toml"
    path.write_text(SOURCE + "[source.settings]\nroot = '.'\ninclude = '**/*.md'\n")
    env = {"KB_HOME": str(tmp_path / "home"), "KB_SOURCES": str(path)}
    result, seconds = kb("index", env=env)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "settings.include" in result.stderr
    assert seconds < PROMPT
    assert not (tmp_path / "home" / "postgres").exists()


def test_a_valid_sources_file_passes_the_check(tmp_path: Path) -> None:
    path = tmp_path / "sources.toml"
    path.write_text(SOURCE + "every = '1h'\n[source.settings]\nroot = '.'\n")
    result, _ = kb("sources", "--check", env={"KB_SOURCES": str(path)})
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"ok: 1 source(s) in {path}\n"


def test_max_words_zero_is_refused_at_once_in_one_line(tmp_path: Path) -> None:
    result, seconds = kb(
        "eval", "retrieval", str(REPO / "tests" / "fixtures" / "beir-mini"), "--split", "test",
        "--max-words", "0", env={"KB_HOME": str(tmp_path)},
    )  # fmt: skip
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "--max-words" in lines[0] and "0 is not in the range" in lines[0]
    assert seconds < PROMPT


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("KB_PORT", "http", "KB_PORT: Input should be a valid integer"),
        ("KB_PORT", "70000", "KB_PORT: Input should be less than or equal to 65535"),
        ("KB_INDEX_BATCH_SIZE", "0", "KB_INDEX_BATCH_SIZE: Input should be greater than"),
        ("KB_QUERY_EMBEDDING", "gpu", "KB_QUERY_EMBEDDING: Input should be 'onnx' or 'torch'"),
        ("KB_DATABASE_POOL_SIZE", "1", "KB_DATABASE_POOL_SIZE: Input should be greater than"),
        ("KB_DATABASE_POOL_SIZE", "lots", "KB_DATABASE_POOL_SIZE: Input should be a valid integer"),
    ],
)
def test_a_bad_environment_variable_is_one_line_and_exit_status_2(
    tmp_path: Path, variable: str, value: str, expected: str
) -> None:
    result, _ = kb("status", env={"KB_HOME": str(tmp_path), variable: value})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], result.stderr


def test_a_path_with_source_is_refused_rather_than_ignored(tmp_path: Path) -> None:
    result, _ = kb("index", str(tmp_path), "--source", "docs", env={"KB_HOME": str(tmp_path)})
    assert result.returncode == 2
    assert "give PATH or --source, not both" in result.stderr


@pytest.mark.parametrize("question", ["", "   \n"])
def test_an_empty_question_is_a_usage_error_not_a_run(tmp_path: Path, question: str) -> None:
    result, seconds = kb("ask", question, env={"KB_HOME": str(tmp_path)})
    assert result.returncode == 2
    assert result.stderr == 'error: give a question: kb ask "How much annual leave do I earn?"\n'
    assert result.stdout == ""
    # Refused before a database is started or a model loaded.
    assert not (tmp_path / "postgres").exists()
    assert seconds < PROMPT
