"""A real `kb serve` for the Slack benchmarks: its own embedded Postgres, the test rig's
fake Slack Web API (tests/bot/slack/rig.py) and a process on a free port.

    async with bot_process(workdir, fake, extra_env, index=corpus) as bot:
        ... send signed requests to bot.events_url ...

`index` (a folder, or "" for the bundled handbook) is indexed with `kb index` before
the server starts; None indexes nothing. The server's output goes to serve.log in
`workdir`; on the way out it gets SIGINT, then the fake and the database stop.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from _env import REPO

from store.embedded import EmbeddedPostgres, start_embedded_postgres
from tests.bot.slack.rig import SIGNING_SECRET, FakeSlack


@dataclass(frozen=True, slots=True)
class BotProcess:
    database: EmbeddedPostgres
    port: int

    @property
    def events_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/slack/events"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def wait_healthy(http: aiohttp.ClientSession, port: int, process, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server on port {port} exited with {process.returncode}")
        try:
            async with http.get(f"http://127.0.0.1:{port}/healthz") as response:
                if response.status == 200:
                    return
        except aiohttp.ClientConnectionError:
            pass
        await asyncio.sleep(0.2)  # polling another process's start-up
    raise SystemExit(f"the server on port {port} never became healthy")


def bot_env(workdir: Path, dsn: str, fake: FakeSlack, extra: dict[str, str]) -> dict[str, str]:
    """The server's environment: this machine's, without its Slack or Anthropic keys."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "ANTHROPIC_"))},
        "DATABASE_URL": dsn,
        "KB_HOME": str(workdir / "home"),
        "KB_SOURCES": str(workdir / "no-sources.toml"),  # none: nothing scheduled
        "SLACK_BOT_TOKEN": "xoxb-bench-token",
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": fake.base_url,
        **extra,
    }


@asynccontextmanager
async def bot_process(
    workdir: Path,
    fake: FakeSlack,
    extra_env: dict[str, str] | None = None,
    *,
    index: str | None = None,
    label: str = "corpus",
) -> AsyncIterator[BotProcess]:
    """`kb serve` running and healthy (the fake must be started already; it is closed
    on the way out)."""
    database = await start_embedded_postgres(workdir / "pg")
    env = bot_env(workdir, database.dsn, fake, extra_env or {})
    server = None
    log = (workdir / "serve.log").open("w")
    try:
        if index is not None:
            print(f"indexing the {label}…", file=sys.stderr)
            indexing = {k: v for k, v in env.items() if not k.startswith("ANTHROPIC_")}
            command = [sys.executable, "-m", "bot", "index", *([index] if index else [])]
            subprocess.run(command, env=indexing, cwd=REPO, check=True, capture_output=True)
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "bot", "serve"],
            env={**env, "KB_PORT": str(port)},
            cwd=REPO,
            stdout=log,
            stderr=log,
        )
        async with aiohttp.ClientSession() as http:
            await wait_healthy(http, port, server, timeout=300)
        yield BotProcess(database, port)
    finally:
        if server is not None:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=120)
        log.close()
        await fake.close()
        database.stop()
