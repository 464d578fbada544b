"""The agent's errors: a small hierarchy, each message one a user or operator can act on."""

from __future__ import annotations


class AgentError(Exception):
    """Base of the agent's own errors."""


class ReasonerUnavailable(AgentError):
    """A reasoner could not decide (outage, timeout, malformed output after a retry)."""


# A stored run that raised keeps its type (callers map errors to messages by type) and
# gains this note, so the run can be named to the asker even when the store is what
# failed and the run cannot be looked up.
_RUN_NOTE = "agent run "


def note_run(exc: BaseException, run_id: int) -> None:
    exc.add_note(f"{_RUN_NOTE}{run_id} failed")


def run_id_of(exc: BaseException) -> int | None:
    """The run `exc` was raised from, if the agent loop noted one."""
    for note in getattr(exc, "__notes__", ()):
        if note.startswith(_RUN_NOTE):
            return int(note.split()[2])
    return None
