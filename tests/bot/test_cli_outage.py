"""`kb ask` when its embedded Postgres dies mid-answer: one plain line, then answers again.

The command is a real process on its own embedded server (KB_HOME, no DATABASE_URL), so
the session's database is untouched. Its first Claude call is held by the local fake of
the Messages API until the test has killed the postmaster (SIGKILL: a crash, no
shutdown), then released with an error, so the extractive reasoner goes on and meets the
outage. The next `kb ask` starts the server again on the same folder and answers.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from tests.agent.fake_anthropic import FakeAnthropic, Reply, running_fake
from tests.bot.test_cli import FIXTURES, kb

REPO = Path(__file__).resolve().parents[2]
QUESTION = "How do I request annual leave?"


@pytest.fixture
async def anthropic_api() -> AsyncIterator[FakeAnthropic]:
    async for fake in running_fake():
        yield fake


def _env(home: Path, **extra: str) -> dict[str, str]:
    kept = {
        k: v
        for k, v in os.environ.items()
        if k != "DATABASE_URL" and not k.startswith(("SLACK_", "ANTHROPIC_"))
    }
    return kept | {"KB_HOME": str(home), "KB_SENTENCE_WARMUP": "false"} | extra


async def _until(condition: Callable[[], object], timeout: float = 120) -> None:
    """Polled: the work is another process's."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def test_kb_ask_whose_database_dies_mid_answer_says_one_line_and_the_next_answers(
    anthropic_api: FakeAnthropic, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    corpus = tmp_path / "kb"
    shutil.copytree(FIXTURES / "kb", corpus)
    indexed = kb("index", str(corpus), env=_env(home))
    assert indexed.returncode == 0, indexed.stderr
    for tool in ("route", "plan"):  # whichever comes first is held, then fails
        anthropic_api.always(tool, Reply(hang=True, status=500))
    env = _env(
        home,
        ANTHROPIC_API_KEY="test-key",
        ANTHROPIC_BASE_URL=anthropic_api.base_url,
        KB_ANTHROPIC_TIMEOUT="5",
    )
    asking = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "ask", QUESTION, env=env, cwd=REPO,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        await _until(lambda: anthropic_api.requests)  # mid-answer, the server running
        postmaster = int((home / "postgres" / "postmaster.pid").read_text().split()[0])
        os.kill(postmaster, signal.SIGKILL)
        anthropic_api.release()
        stdout, stderr = await asyncio.wait_for(asking.communicate(), 180)
    finally:
        if asking.returncode is None:
            asking.kill()
    err = stderr.decode()
    assert asking.returncode == 1, err
    *warnings, last = err.splitlines()
    assert "Traceback" not in err, err
    # Above the error, only one-line warnings (Claude gave up; the run could not be
    # marked failed): no driver's traceback, no shutdown chatter of the dead server.
    assert all(" WARNING agent." in line for line in warnings), err
    assert last.startswith("error: lost the connection to the embedded Postgres in "), err
    assert last.endswith("check that the database is running, then run the command again")
    assert "Sources:" not in stdout.decode()

    again = kb("ask", QUESTION, env=_env(home))
    assert again.returncode == 0, again.stderr
    assert "HRLinks" in again.stdout
    assert again.stderr.startswith("run ") and again.stderr.count("\n") == 1, again.stderr
