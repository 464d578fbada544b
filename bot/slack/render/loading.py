"""Loading messages for the assistant panel: the steps actually running, rotating.

`assistant.threads.setStatus` takes `loading_messages`, a list Slack rotates through under
the status (at most 10: https://docs.slack.dev/reference/methods/assistant.threads.setStatus).
The bot fills it with the loop's own steps ("Searching: annual leave", "Reading: Leave
types"), newest first, so what rotates is what is happening, never invented filler.
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_LOADING_MESSAGES = 10
# Long enough for "Reading: <a document title>"; a status line is not a paragraph.
MAX_LOADING_CHARS = 120


def loading_messages(steps: Sequence[str], *, limit: int = MAX_LOADING_MESSAGES) -> list[str]:
    """The distinct steps so far, newest first, at most `limit`, each cut to one short line."""
    shown: list[str] = []
    for step in reversed(steps):
        line = " ".join(step.split())
        if len(line) > MAX_LOADING_CHARS:
            line = line[: MAX_LOADING_CHARS - 1].rstrip() + "…"
        if line and line not in shown:
            shown.append(line)
        if len(shown) == limit:
            break
    return shown
