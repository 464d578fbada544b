"""`kb serve` as a real process with Slack configured: a signed mention gets its answer."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import aiohttp
import asyncpg

from tests.bot.slack.rig import SIGNING_SECRET, SlackSender, mention

REPO = Path(__file__).resolve().parents[3]
FIXTURE_KB = REPO / "tests" / "fixtures" / "kb"
BOT_TOKEN = "xoxb-serve-test-token-never-printed"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_kb_serve_answers_a_signed_mention_and_never_prints_a_token(
    database_url: str, tmp_path: Path, fake_slack
) -> None:
    sources = tmp_path / "sources.toml"
    sources.write_text(
        f'[[source]]\nname = "kb"\nkind = "directory"\nevery = "1h"\n'
        f'[source.settings]\nroot = "{FIXTURE_KB}"\n'
    )
    port = _free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SLACK_")},
        "DATABASE_URL": database_url,
        "KB_HOME": str(tmp_path / "home"),
        "KB_SOURCES": str(sources),
        "KB_PORT": str(port),
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": fake_slack.base_url,
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "--verbose", "serve", env=env, cwd=REPO,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        async with aiohttp.ClientSession() as http:
            # The schedule indexes the folder at start; ask once that run has succeeded.
            await _indexed_and_healthy(http, port, process, database_url)
            sender = SlackSender(http, f"http://127.0.0.1:{port}/slack/events")
            body = mention(
                "How do I request annual leave?", ts="1700000600.000001", event_id="EvServe"
            )
            sent = await sender.event(body)
            assert sent.status == 200
            (update,) = await fake_slack.wait_for("chat.update")
            assert "HRLinks" in json.dumps(update.params["blocks"])
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == 0, err.decode()
    printed = out.decode() + err.decode()
    assert "Slack app running: HTTP at" in printed
    # No slack.toml: start-up says it is the default, and where everything is seen.
    assert "slack.toml, so the default): members see every collection in: channels" in printed
    assert BOT_TOKEN not in printed and SIGNING_SECRET not in printed
    assert "HRLinks" not in printed  # no document or message text in the log


async def _indexed_and_healthy(http: aiohttp.ClientSession, port: int, process, dsn) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        for _ in range(1200):
            if process.returncode is not None:
                raise AssertionError("kb serve exited")
            if await _healthy(http, port) and await conn.fetchval(
                "SELECT count(*) FROM index_runs WHERE status = 'succeeded'"
            ):
                return
            await asyncio.sleep(0.1)  # polling another process's start-up, not a test event
    finally:
        await conn.close()
    raise AssertionError("kb serve never became healthy with an index")


async def _healthy(http: aiohttp.ClientSession, port: int) -> bool:
    try:
        async with http.get(f"http://127.0.0.1:{port}/healthz") as response:
            return response.status == 200
    except aiohttp.ClientConnectionError:
        return False
