"""Errors of the composition root: configuration a user must fix before anything runs."""

from __future__ import annotations


class BotError(Exception):
    """Base class for what the bot layer raises on purpose."""


class SettingsError(BotError):
    """A setting from the environment is invalid; the message names the variable."""
