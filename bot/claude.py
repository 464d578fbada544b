"""The Claude reasoner, built from settings (the only place that reads the key)."""

from __future__ import annotations

import anthropic

from agent.reasoners.claude import ClaudeOptions, ClaudeReasoner, OnError
from bot.settings import Settings


def claude_reasoner(settings: Settings, *, on_error: OnError | None = None) -> ClaudeReasoner:
    """Claude with the configured key, model, base URL and timeout; the SDK's own retries
    are off, since the reasoner retries once itself and then falls back."""
    assert settings.anthropic_api_key is not None
    client = anthropic.AsyncAnthropic(
        api_key=settings.anthropic_api_key.get_secret_value(),
        base_url=settings.anthropic_base_url,
        max_retries=0,
        timeout=settings.anthropic_timeout,
    )
    return ClaudeReasoner(
        client=client,
        options=ClaudeOptions(model=settings.anthropic_model, timeout=settings.anthropic_timeout),
        on_error=on_error,
    )
