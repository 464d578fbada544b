"""The agent's errors: a small hierarchy, each message one a user or operator can act on."""

from __future__ import annotations


class AgentError(Exception):
    """Base of the agent's own errors."""


class ReasonerUnavailable(AgentError):
    """A reasoner could not decide (outage, timeout, malformed output after a retry)."""
