"""Real `kb serve` processes for the fault and scale-out tests, as bench/slack_load.py runs them.

Each process gets its own KB_HOME, port and log file, the given DATABASE_URL and the
fake Slack Web API (SLACK_API_URL); `kill` is a real SIGKILL, `stop` a SIGTERM.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from tests.bot.slack.rig import SIGNING_SECRET, SlackSender

REPO = Path(__file__).resolve().parents[3]
FIXTURE_KB = REPO / "tests" / "fixtures" / "kb"
BOT_TOKEN = "xoxb-fault-test-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def sources_file(path: Path, *, root: Path, every: str = "1h") -> Path:
    """A sources file with one directory source `kb` over `root`, run at start and `every`."""
    path.write_text(
        f'[[source]]\nname = "kb"\nkind = "directory"\nevery = "{every}"\n'
        f'[source.settings]\nroot = "{root}"\n'
    )
    return path


def serve_env(
    *, database_url: str, home: Path, slack_url: str, sources: Path | None, **extra: str
) -> dict[str, str]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "ANTHROPIC_"))},
        "DATABASE_URL": database_url,
        "KB_HOME": str(home),
        "KB_SOURCES": str(sources or home / "no-sources.toml"),
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": slack_url,
        "KB_EMBED_NICENESS": "0",
        # Embedding the whole handbook ahead would compete with every answer these tests
        # time out on; tests/bot/test_serve.py checks the warm-up itself.
        "KB_SENTENCE_WARMUP": "false",
    }
    return env | extra


@dataclass
class ServeProcess:
    process: asyncio.subprocess.Process
    port: int
    log: Path

    @classmethod
    async def start(cls, env: dict[str, str], *, log: Path) -> ServeProcess:
        port = free_port()
        with log.open("wb") as out:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot", "serve",
                env={**env, "KB_PORT": str(port)}, cwd=REPO, stdout=out, stderr=out,
            )  # fmt: skip
        return cls(process, port, log)

    @property
    def events_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/slack/events"

    def sender(self, http: aiohttp.ClientSession) -> SlackSender:
        return SlackSender(http, self.events_url)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    async def wait_healthy(self, http: aiohttp.ClientSession, *, timeout: float = 180) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            if self.process.returncode is not None:
                raise AssertionError(f"kb serve exited early:\n{self.output()[-3000:]}")
            try:
                async with http.get(f"http://127.0.0.1:{self.port}/healthz") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientConnectionError:
                pass
            await asyncio.sleep(0.1)  # polling another process's start-up, not a test event
        raise AssertionError(f"kb serve never became healthy:\n{self.output()[-3000:]}")

    async def kill(self) -> None:
        self.process.kill()  # SIGKILL: no clean-up of any kind
        await self.process.wait()

    async def stop(self, *, timeout: float = 60) -> int:
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), timeout)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        return self.process.returncode or 0
