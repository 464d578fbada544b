"""Requests acked while Postgres is down, kept on this machine's disk until they are claimed.

A delivery's claim waits for the database when it is down (claims.py): Slack had its 200,
so it will not send the question again. Should this process die meanwhile (a crash, an
OOM kill, a deploy), the question would be lost with it. So the moment a claim first
finds the database unreachable, the request as Slack sent it is written here, one file
per delivery under KB_HOME/slack-journal; the file is removed once the claim reaches the
database (claimed, or found taken by another delivery of the same question).

At start-up `replay` dispatches each kept request again through the app, exactly as it
arrived (an HTTP request is re-signed with the app's own signing secret, since its
timestamp is stale by then); the delivery key still makes the answer happen once, so a
request another replica already answered is dropped as a duplicate. Nothing is written
while the database answers: the journal costs a file only during an outage.

The files hold the question's text, like the delivery rows do; they are readable by this
user only. A file that cannot be read back is set aside with a `.bad` suffix and named in
one log line, and the other requests are replayed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from slack_bolt.app.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier

log = logging.getLogger(__name__)

# Set in the context of a replayed request, so its delivery's file is dropped once claimed.
REPLAYED = "kb_replayed"


@dataclass(frozen=True, slots=True)
class KeptRequest:
    """A Slack request as the app received it: enough to dispatch it again."""

    mode: str  # "http" or "socket_mode"
    body: str
    content_type: str | None

    @classmethod
    def of(cls, request: AsyncBoltRequest) -> KeptRequest:
        content_types = request.headers.get("content-type") or []
        content_type = content_types[0] if content_types else None
        return cls(mode=request.mode, body=request.raw_body, content_type=content_type)

    def to_request(self, signing_secret: str | None) -> AsyncBoltRequest:
        """The request again, marked as replayed."""
        context = {REPLAYED: True}
        if self.mode != "http":
            return AsyncBoltRequest(body=self.body, mode=self.mode, context=context)
        headers: dict[str, str | Sequence[str]] = {
            "content-type": self.content_type or "application/json"
        }
        if signing_secret is not None:
            timestamp = str(int(time.time()))
            verifier = SignatureVerifier(signing_secret)
            signature = verifier.generate_signature(timestamp=timestamp, body=self.body) or ""
            headers |= {"x-slack-request-timestamp": timestamp, "x-slack-signature": signature}
        return AsyncBoltRequest(body=self.body, headers=headers, mode="http", context=context)


class Journal:
    """One file per kept delivery in `folder`, named by a hash of its delivery key."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder

    def _path(self, key: str) -> Path:
        return self._folder / f"{hashlib.sha256(key.encode()).hexdigest()[:40]}.json"

    def keep(self, key: str, request: KeptRequest) -> None:
        """Write the request durably (fsync, then an atomic rename)."""
        self._folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        final = self._path(key)
        partial = final.with_suffix(".partial")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"key": key, **asdict(request)}, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, final)
        log.info("a delivery acked during the outage is kept on disk until it is claimed")

    def drop(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def kept(self) -> list[tuple[str, KeptRequest]]:
        """Every kept request, oldest first; unreadable files are set aside."""
        if not self._folder.is_dir():
            return []
        found = []
        for path in sorted(self._folder.glob("*.json"), key=lambda p: p.stat().st_mtime):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                key = data.pop("key")
                found.append((key, KeptRequest(**data)))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.warning("set aside an unreadable journal file %s: %s", path.name, exc)
                path.replace(path.with_suffix(".bad"))
        return found


async def replay(journal: Journal, app: AsyncApp, signing_secret: str | None) -> int:
    """Dispatch each kept request again; returns how many were. Each file stays until
    its delivery's claim reaches the database (surfaces/services.py drops it)."""
    kept = journal.kept()
    for key, request in kept:
        response = await app.async_dispatch(request.to_request(signing_secret))
        if response.status >= 400:
            # The app refused it (its listener is gone, the payload is no longer valid):
            # it would be refused forever, so it is not kept.
            log.warning("a kept delivery was refused on replay (HTTP %s)", response.status)
            journal.drop(key)
    if kept:
        log.info("replayed %d deliveries kept during a database outage", len(kept))
    return len(kept)
