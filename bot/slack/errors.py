"""Errors of the Slack app, in one small hierarchy; each message says what to do."""

from __future__ import annotations


class SlackBotError(Exception):
    """Base class for everything the Slack app raises on purpose."""


class SlackConfigError(SlackBotError):
    """The Slack configuration (access file, settings) cannot work as written."""
