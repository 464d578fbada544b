"""What a connector raises on purpose: one line a user can act on, never a secret."""

from __future__ import annotations

from jobs.errors import JobsError


class ConnectorError(JobsError):
    """The source's system cannot be read this run; the previous index stays as it is."""


class MissingCredentialError(ConnectorError):
    """The environment variable a source names for its credential is not set."""

    def __init__(self, *, source: str, env: str) -> None:
        super().__init__(
            f"source {source!r}: the environment variable {env} is not set; set it to the "
            "credential (sources.toml names the variable, never the secret)"
        )
        self.env = env


class CredentialRejectedError(ConnectorError):
    """The system refused the credential (HTTP 401: expired, revoked or mistyped)."""

    def __init__(self, *, source: str, env: str, system: str) -> None:
        super().__init__(
            f"source {source!r}: {system} refused the credential in {env} (expired or revoked?); "
            f"renew it and set {env} again"
        )
        self.env = env


class TransientError(ConnectorError):
    """A call failed in a way worth retrying (HTTP 429 or 5xx, a dropped connection).

    Connectors translate their client's exceptions into this so retry.py needs to know
    no client library. `retry_after` is the server's Retry-After, in seconds, if it sent one.
    """

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RefreshUnsupported(ConnectorError):
    """A refresh of single documents asked of a source that can only read its whole feed."""
