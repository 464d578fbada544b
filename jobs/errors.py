"""Errors of the write flow (sources, cleaning, indexing), in one small hierarchy."""

from __future__ import annotations


class JobsError(Exception):
    """Base class for every error the jobs layer raises on purpose."""


class SourceConfigError(JobsError):
    """A source is configured in a way that cannot work (missing root, bad URL template)."""


class DocumentError(JobsError):
    """One document could not be loaded; `reason` says why, in words a user can act on."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class DocumentGone(DocumentError):
    """The document no longer exists at its source (HTTP 404 or 410)."""
