"""Every Web API call in bot/ is in the scope table, and manifest.yml asks for its scopes."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from bot.slack.transport.scopes import SCOPES

ROOT = Path(__file__).resolve().parents[3]
# client.chat_postMessage(…) and api_call("conversations.members", …) / _listed("…", …)
_METHOD_CALL = re.compile(
    r"\.((?:assistant_threads|auth|chat|conversations|usergroups_users|users|views|reactions|"
    r"team|bots|files|pins|apps)_[A-Za-z]+)\("
)
_NAMED_CALL = re.compile(r"(?:api_call|_listed)\(\s*\"([a-zA-Z]+(?:\.[a-zA-Z]+)+)\"")


def methods_called() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "bot").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for name in _METHOD_CALL.findall(text):
            group, _, rest = name.partition("_")
            if group == "assistant":
                group, _, rest = "assistant.threads", "", rest.removeprefix("threads_")
            elif group == "usergroups":
                group, rest = "usergroups.users", rest.removeprefix("users_")
            found.add(f"{group}.{rest}")
        found.update(_NAMED_CALL.findall(text))
    return found


def test_every_web_api_call_is_in_the_scope_table() -> None:
    called = methods_called()
    assert {"chat.postMessage", "conversations.members", "usergroups.users.list"} <= called
    assert called - set(SCOPES) == set()


def test_the_manifest_asks_for_every_scope_the_calls_need() -> None:
    manifest = yaml.safe_load((ROOT / "manifest.yml").read_text())
    granted = set(manifest["oauth_config"]["scopes"]["bot"])
    needed = {scope for method in methods_called() for scope in SCOPES[method]}
    assert needed - granted == set()
