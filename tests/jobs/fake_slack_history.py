"""A strict local fake of the Slack Web API methods the `slack` source calls, for slack_sdk.

Separate from the bot's rig (tests/bot/slack/rig.py), which fakes what the bot posts;
this one fakes what a workspace already holds: channels, threads, users. Wire format
from the method pages:
- https://api.slack.com/methods/auth.test
- https://api.slack.com/methods/conversations.list (types, exclude_archived, limit, cursor)
- https://api.slack.com/methods/conversations.info (a private channel the bot is not in
  answers channel_not_found)
- https://api.slack.com/methods/conversations.history (newest first; oldest/latest are
  exclusive unless inclusive; thread parents carry reply_count and latest_reply; replies
  are not listed unless broadcast; not_in_channel when the bot is not a member)
- https://api.slack.com/methods/conversations.replies (the parent first, then replies
  oldest first; thread_not_found)
- https://api.slack.com/methods/users.info, https://api.slack.com/methods/chat.getPermalink
- pagination: https://api.slack.com/docs/pagination (`response_metadata.next_cursor`,
  empty at the end; a cursor the server did not give is invalid_cursor)
- rate limits: https://api.slack.com/docs/rate-limits (HTTP 429 with Retry-After)

Errors are HTTP 200 with `{"ok": false, "error": ...}`, as Slack answers them; a request
without the bot token is not_authed, a wrong one invalid_auth. Every call is recorded.
"""

from __future__ import annotations

import base64
import itertools
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web
from aiohttp.test_utils import TestServer

TOKEN = "xoxb-history-test-token"
BOT_USER = "UBOT0001"
BOT_ID = "BBOT0001"
TEAM = "T0TEAM01"
WORKSPACE = "https://acme.slack.test"


@dataclass(slots=True)
class Channel:
    id: str
    name: str
    is_private: bool = False
    is_member: bool = True
    is_archived: bool = False
    messages: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Call:
    method: str
    params: dict[str, str]


class FakeSlackHistory:
    def __init__(self) -> None:
        self.channels: dict[str, Channel] = {}
        self.users: dict[str, dict[str, Any]] = {}
        self.calls: list[Call] = []
        self.rate_limited: dict[str, int] = defaultdict(int)  # method → 429s to answer
        self.page_cap = 1000
        self._cursors: dict[str, int] = {}
        self._ts = itertools.count(1)
        # The source reads the real clock (its look-back window is "now - N days").
        self._clock = int(time.time())
        self.server: TestServer | None = None
        self.add_user(BOT_USER, "kb", is_bot=True)

    # -- what a test sets up ------------------------------------------------------------

    def add_channel(self, id: str, name: str, **kwargs: Any) -> Channel:
        channel = Channel(id=id, name=name, **kwargs)
        self.channels[id] = channel
        return channel

    def add_user(self, id: str, display_name: str, *, is_bot: bool = False) -> None:
        self.users[id] = {
            "id": id,
            "team_id": TEAM,
            "name": display_name.lower().replace(" ", "."),
            "real_name": display_name,
            "is_bot": is_bot,
            "deleted": False,
            "profile": {"display_name": display_name, "real_name": display_name},
        }

    def now(self) -> float:
        return float(self._clock)

    def advance(self, seconds: float) -> None:
        self._clock += int(seconds)

    def post(
        self,
        channel: str,
        user: str,
        text: str,
        *,
        thread_ts: str | None = None,
        at: float | None = None,
        **extra: Any,
    ) -> str:
        """A message as Slack stores it; `at` (epoch seconds) defaults to the fake's clock."""
        moment = at if at is not None else self.now()
        ts = f"{int(moment)}.{next(self._ts):06d}"
        message: dict[str, Any] = {"type": "message", "user": user, "text": text, "ts": ts}
        if thread_ts:
            message["thread_ts"] = thread_ts
            message["parent_user_id"] = self._message(channel, thread_ts)["user"]
        message.update(extra)
        self.channels[channel].messages.append(message)
        return ts

    def edit(self, channel: str, ts: str, text: str) -> None:
        message = self._message(channel, ts)
        message["text"] = text
        message["edited"] = {"user": message.get("user"), "ts": f"{int(self.now())}.000000"}

    def delete_thread(self, channel: str, ts: str) -> None:
        self.channels[channel].messages = [
            m for m in self.channels[channel].messages if ts not in (m["ts"], m.get("thread_ts"))
        ]

    def react(self, channel: str, ts: str, name: str, user: str) -> None:
        message = self._message(channel, ts)
        reactions = message.setdefault("reactions", [])
        reactions.append({"name": name, "users": [user], "count": 1})

    def _message(self, channel: str, ts: str) -> dict[str, Any]:
        for message in self.channels[channel].messages:
            if message["ts"] == ts:
                return message
        raise KeyError(f"no message {ts} in {channel}")

    def calls_to(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return str(self.server.make_url("/api/"))

    # -- the app ------------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._api)
        return app

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params = dict(request.query)
        raw = await request.read()
        if raw and request.content_type == "application/x-www-form-urlencoded":
            params.update(parse_qsl(raw.decode()))
        self.calls.append(Call(method, params))
        if self.rate_limited[method] > 0:
            self.rate_limited[method] -= 1
            return web.json_response(
                {"ok": False, "error": "ratelimited"}, status=429, headers={"Retry-After": "1"}
            )
        auth = request.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else params.get("token")
        if not token:
            return _fail("not_authed")
        if token != TOKEN:
            return _fail("invalid_auth")
        handler = {
            "auth.test": self._auth_test,
            "conversations.list": self._list,
            "conversations.info": self._info,
            "conversations.history": self._history,
            "conversations.replies": self._replies,
            "users.info": self._user,
            "chat.getPermalink": self._permalink,
        }.get(method)
        if handler is None:
            return _fail("unknown_method")
        try:
            return web.json_response({"ok": True, **handler(params)})
        except _SlackError as error:
            return _fail(error.code)

    def _auth_test(self, params: dict[str, str]) -> dict[str, Any]:
        return {
            "url": WORKSPACE + "/",
            "team": "Acme",
            "user": "kb",
            "team_id": TEAM,
            "user_id": BOT_USER,
            "bot_id": BOT_ID,
        }

    def _channel_json(self, channel: Channel) -> dict[str, Any]:
        return {
            "id": channel.id,
            "name": channel.name,
            "is_channel": not channel.is_private,
            "is_group": channel.is_private,
            "is_private": channel.is_private,
            "is_member": channel.is_member,
            "is_archived": channel.is_archived,
        }

    def _visible(self, channel: Channel) -> bool:
        # A private channel exists for the bot only if it is a member.
        return not channel.is_private or channel.is_member

    def _list(self, params: dict[str, str]) -> dict[str, Any]:
        types = set(params.get("types", "public_channel").split(","))
        chosen = [
            self._channel_json(c)
            for c in self.channels.values()
            if self._visible(c)
            and ("private_channel" if c.is_private else "public_channel") in types
            and not (params.get("exclude_archived") in ("true", "1") and c.is_archived)
        ]
        page, next_cursor = self._page(params, chosen, default_limit=100)
        return {"channels": page, "response_metadata": {"next_cursor": next_cursor}}

    def _find(self, params: dict[str, str], *, member: bool) -> Channel:
        channel = self.channels.get(params.get("channel", ""))
        if channel is None or not self._visible(channel):
            raise _SlackError("channel_not_found")
        if member and not channel.is_member:
            raise _SlackError("not_in_channel")
        return channel

    def _info(self, params: dict[str, str]) -> dict[str, Any]:
        return {"channel": self._channel_json(self._find(params, member=False))}

    def _history(self, params: dict[str, str]) -> dict[str, Any]:
        channel = self._find(params, member=True)
        inclusive = params.get("inclusive") in ("true", "1")
        oldest = float(params.get("oldest", "0"))
        latest = float(params["latest"]) if "latest" in params else None
        top = []
        for message in channel.messages:
            is_reply = message.get("thread_ts") not in (None, message["ts"])
            if is_reply and message.get("subtype") != "thread_broadcast":
                continue  # replies are read with conversations.replies
            ts = float(message["ts"])
            if ts < oldest or (ts == oldest and not inclusive):
                continue
            if latest is not None and (ts > latest or (ts == latest and not inclusive)):
                continue
            top.append(self._with_thread_fields(channel, message))
        top.sort(key=lambda m: float(m["ts"]), reverse=True)
        page, next_cursor = self._page(params, top, default_limit=100)
        return {
            "messages": page,
            "has_more": bool(next_cursor),
            "pin_count": 0,
            "response_metadata": {"next_cursor": next_cursor},
        }

    def _with_thread_fields(self, channel: Channel, message: dict[str, Any]) -> dict[str, Any]:
        replies = [
            m
            for m in channel.messages
            if m.get("thread_ts") == message["ts"] and m["ts"] != message["ts"]
        ]
        if not replies:
            return dict(message)
        return {
            **message,
            "thread_ts": message["ts"],
            "reply_count": len(replies),
            "reply_users": sorted({r["user"] for r in replies}),
            "reply_users_count": len({r["user"] for r in replies}),
            "latest_reply": max(r["ts"] for r in replies),
        }

    def _replies(self, params: dict[str, str]) -> dict[str, Any]:
        channel = self._find(params, member=True)
        ts = params.get("ts")
        if not ts:
            raise _SlackError("invalid_arguments")
        thread = [m for m in channel.messages if ts in (m["ts"], m.get("thread_ts"))]
        if not any(m["ts"] == ts for m in thread):
            raise _SlackError("thread_not_found")
        thread.sort(key=lambda m: float(m["ts"]))
        parent = self._with_thread_fields(channel, next(m for m in thread if m["ts"] == ts))
        ordered = [parent] + [dict(m) for m in thread if m["ts"] != ts]
        page, next_cursor = self._page(params, ordered, default_limit=1000)
        return {
            "messages": page,
            "has_more": bool(next_cursor),
            "response_metadata": {"next_cursor": next_cursor},
        }

    def _user(self, params: dict[str, str]) -> dict[str, Any]:
        user = self.users.get(params.get("user", ""))
        if user is None:
            raise _SlackError("user_not_found")
        return {"user": user}

    def _permalink(self, params: dict[str, str]) -> dict[str, Any]:
        channel = self._find(params, member=False)
        ts = params.get("message_ts", "")
        if not any(m["ts"] == ts for m in channel.messages):
            raise _SlackError("message_not_found")
        return {
            "channel": channel.id,
            "permalink": f"{WORKSPACE}/archives/{channel.id}/p{ts.replace('.', '')}",
        }

    def _page(
        self, params: dict[str, str], items: list[dict[str, Any]], *, default_limit: int
    ) -> tuple[list[dict[str, Any]], str]:
        limit = min(int(params.get("limit") or default_limit), self.page_cap)
        start = 0
        if params.get("cursor"):
            if params["cursor"] not in self._cursors:
                raise _SlackError("invalid_cursor")
            start = self._cursors[params["cursor"]]
        page = items[start : start + limit]
        if start + limit >= len(items):
            return page, ""
        cursor = base64.b64encode(f"next_ts:{len(self._cursors)}:{start + limit}".encode()).decode()
        self._cursors[cursor] = start + limit
        return page, cursor


class _SlackError(Exception):
    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def _fail(code: str) -> web.Response:
    return web.json_response({"ok": False, "error": code})


async def running_fake_slack_history() -> AsyncIterator[FakeSlackHistory]:
    fake = FakeSlackHistory()
    server = TestServer(fake.app(), port=0)
    await server.start_server()
    fake.server = server
    try:
        yield fake
    finally:
        await server.close()
