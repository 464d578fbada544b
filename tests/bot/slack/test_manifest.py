"""manifest.yml asks for what the bot uses: its command, its events, one request URL."""

from __future__ import annotations

from pathlib import Path

import yaml

from bot.slack.surfaces.command_listener import COMMAND
from bot.slack.transport.http import EVENTS_PATH

MANIFEST = Path(__file__).resolve().parents[3] / "manifest.yml"


def test_the_manifest_declares_the_command_events_and_urls_the_bot_serves() -> None:
    manifest = yaml.safe_load(MANIFEST.read_text())
    settings, features = manifest["settings"], manifest["features"]
    assert [c["command"] for c in features["slash_commands"]] == [COMMAND]
    assert set(settings["event_subscriptions"]["bot_events"]) == {
        "app_mention",
        "app_home_opened",
        "assistant_thread_started",
        "assistant_thread_context_changed",
        "message.channels",
        "message.groups",
        "message.im",
        "message.mpim",
    }
    urls = {
        settings["event_subscriptions"]["request_url"],
        settings["interactivity"]["request_url"],
        *(c["url"] for c in features["slash_commands"]),
    }
    assert len(urls) == 1 and urls.pop().endswith(EVENTS_PATH)
    assert settings["interactivity"]["is_enabled"] is True
    assert "shortcuts" not in features  # the bot defines none
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    assert {"app_mentions:read", "chat:write", "commands", "assistant:write"} <= scopes
    # The `slack` source (jobs/slack_threads/) reads channels and display names; history
    # scopes the bot already has for its own threads.
    assert {"channels:history", "groups:history", "channels:read", "groups:read"} <= scopes
    assert "users:read" in scopes
    assert "users:read.email" not in scopes and "channels:manage" not in scopes
