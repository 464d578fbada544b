"""The Slack bot's test rig: a fake Slack Web API, signed requests, payload helpers.

Used by the scenario tests (through tests/bot/slack/conftest.py) and bench/slack_load.py.

- `FakeSlack` is an aiohttp server on an ephemeral port speaking the Web API's wire
  format (the client's `base_url` points at it). It records every request whole, keeps
  the messages posted so `conversations.replies` and `conversations.history` return
  real threads and channels (metadata only with `include_all_metadata`), can be told
  to answer a method with a 429 + Retry-After or a 5xx (or to carry the call out and
  then answer a 5xx, as Slack sometimes does; `rate_limit` for 429 + Retry-After),
  serves response_url hooks, and a Socket Mode WebSocket (the URL its
  `apps.connections.open` returns). It refuses what Slack refuses: Block Kit beyond its
  limits, a post where the bot is not a member (`joined`: not_in_channel), a modal on a
  trigger_id no signed payload carried (`triggers`: expired_trigger_id), a call without
  a required argument (invalid_arguments), a history read without its scope. With
  `streaming` on it speaks Slack's message streams (chat.startStream, chat.appendStream,
  chat.stopStream) with their arguments and errors; off (the default, as in a workspace
  whose Slack has no such methods) it answers them `unknown_method`. Tests await
  requests on a condition, never sleep.
- `SlackSender` signs requests as Slack does (v0 HMAC-SHA256 over `v0:timestamp:body`).
- `start_bot` runs the real composition (bot/wiring.py → bot/slack/transport/app.py →
  bot/server.py) on the test's database, the session's embedding model and a fixture
  corpus in two collections (`hr`: leave; `ops`: equipment, travel).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import time
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

import aiohttp
import yaml
from aiohttp import web
from slack_sdk.signature import SignatureVerifier

from bot.slack.render.blocks import placeholder_message
from tests.bot.slack.fake_block_kit import MESSAGE_TEXT, message_problems, view_problems

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PAYLOADS = FIXTURES / "slack"
FIXTURE_KB = FIXTURES / "kb"
SIGNING_SECRET = "test-signing-secret"  # not a real secret: the tests' own
BOT_TOKEN = "xoxb-test-token"
BOT_USER = "W111"  # the bot user the payload files mention (<@W111>)
BOT_ID = "BZYBOTHED"
TEAM = "T111"
# The conversations the bot is a member of unless a test says otherwise: every channel,
# DM and group DM the scenario tests ask in (FakeSlack.joined).
MEMBER_CHANNELS = frozenset(
    {
        *("C111", "C222", "C333", "C999", "CHR", "CHELP", "C0HELP", "CBIKE", "CGENERAL"),
        *("CESC", "CESCALATE", "CENG", "CALL", "CRANDOM", "CSHARED", "CGUEST"),
        *("C1H9RESGL", "C04T3ACM40K", "G0MPIM4KB", "D111", "D222", "D123"),
    }
)
# A method's required arguments, from its page at https://docs.slack.dev/reference/methods/
# ("Required arguments"); chat.postMessage's channel has its own error (channel_not_found).
REQUIRED = {
    "chat.postEphemeral": ("channel", "user"),
    "chat.update": ("channel", "ts"),
    "chat.getPermalink": ("channel", "message_ts"),
    "conversations.replies": ("channel", "ts"),
    "conversations.history": ("channel",),
    "conversations.members": ("channel",),
    "conversations.info": ("channel",),
    "users.info": ("user",),
    "usergroups.users.list": ("usergroup",),
    "views.open": ("trigger_id", "view"),
    "views.publish": ("user_id", "view"),
    "assistant.threads.setStatus": ("channel_id", "thread_ts", "status"),
    "assistant.threads.setSuggestedPrompts": ("channel_id", "thread_ts", "prompts"),
    "assistant.threads.setTitle": ("channel_id", "thread_ts", "title"),
}


def payload(name: str) -> Any:
    """A payload file: JSON parsed, or the raw text of a .txt file."""
    path = PAYLOADS / name
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else text


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    headers: dict[str, str]
    body: bytes
    at: float = field(default_factory=time.monotonic)
    path: str = ""  # a response_url hook's: which hook it was


@dataclass
class Scripted:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    performed: bool = False  # carry the call out, then answer `status` anyway


def _decode(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


class FakeSlack:
    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.hooks: list[Call] = []
        self.messages: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.scripted: dict[str, deque[Scripted]] = defaultdict(deque)
        # Awaited as a call to the method arrives, before it is answered (to look at the
        # bot's database at that moment, say).
        self.on_call: dict[str, Callable[[Call], Awaitable[None]]] = {}
        self.socket_frames: list[dict[str, Any]] = []
        # Who is in which channel and user group (the escalation channels' experts: W333).
        self.members: dict[str, list[str]] = {
            "CESC": [BOT_USER, "W333"],
            "CESCALATE": [BOT_USER, "W333"],
        }
        self.usergroups: dict[str, list[str]] = {"S0EXPERTS": ["W444"]}
        # What users.info says of a user, over the payload file's user made a member of
        # TEAM (a guest: {"is_restricted": True}; another organisation's: {"team_id": …}).
        self.users: dict[str, dict[str, Any]] = {}
        # What kind of conversation each channel is, when its id does not say (a group DM's
        # id starts with G or C, like a private or public channel's): see _kind.
        self.kinds: dict[str, str] = {}
        # response_url hooks Slack no longer honours (used up, or older than 30 minutes).
        self.expired_hooks: set[str] = set()
        # The bot token's scopes: what manifest.yml asks for, as installing it grants.
        self.granted: frozenset[str] = manifest_scopes()
        # Where the bot is a member: chat.postEphemeral anywhere else is not_in_channel, so
        # is chat.postMessage outside a public channel (chat:write.public covers those).
        self.joined: set[str] = set(MEMBER_CHANNELS)
        # The trigger_ids of the payloads SlackSender signed; views.open with any other is
        # expired_trigger_id (a trigger lasts 3 seconds and is Slack's own).
        self.triggers: set[str] = set()
        # Channels shared with another organisation (Slack Connect): conversations.info.
        self.shared: set[str] = set()
        # Whether this workspace's Slack has the chat.*Stream methods.
        self.streaming = False
        self._changed = asyncio.Condition()
        self._last = 1700000000.0
        self._sockets: list[web.WebSocketResponse] = []
        self._runner: web.AppRunner | None = None
        self.port = 0

    # --- server ---
    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_post("/hooks/{path:.*}", self._hook)
        app.router.add_get("/link", self._socket)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def close(self) -> None:
        for ws in list(self._sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    def hook_url(self, name: str = "response") -> str:
        return f"http://127.0.0.1:{self.port}/hooks/{name}"

    # --- what tests use ---
    def script(self, method: str, *, status: int, body: dict[str, Any], **headers: str) -> None:
        """Answer the next call to `method` with this response (then back to normal)."""
        self.scripted[method].append(Scripted(status, body, headers))

    def rate_limit(self, method: str, *, times: int = 1, retry_after: int = 1) -> None:
        """Answer the next `times` calls to `method` as Slack does past its rate limit:
        HTTP 429, `Retry-After` seconds, the `ratelimited` body
        (https://docs.slack.dev/apis/web-api/rate-limits)."""
        for _ in range(times):
            self.script(
                method,
                status=429,
                body=payload("web_error_ratelimited.body.json"),
                **{"Retry-After": str(retry_after)},
            )

    def script_after(self, method: str, *, status: int, body: dict[str, Any]) -> None:
        """Carry out the next call to `method` (post the message), then answer `status`."""
        self.scripted[method].append(Scripted(status, body, performed=True))

    def calls_to(self, method: str, *, progress: bool = False) -> list[Call]:
        """The calls to `method`; for chat.update, the replies, or with `progress` the
        placeholder's progress updates (its step, its turn after the queue)."""
        return [c for c in self.calls if c.method == method and _progress(c) == progress]

    async def wait_for(
        self,
        method: str,
        *,
        count: int = 1,
        where: Callable[[Call], bool] | None = None,
        timeout: float = 60,
        progress: bool = False,
    ) -> list[Call]:
        """Wait until `count` calls to `method` (matching `where`) have arrived; for
        chat.update, replies only, or with `progress` only the placeholder's updates."""

        def found() -> list[Call]:
            source = self.hooks if method == "hook" else self.calls
            return [
                c
                for c in source
                if c.method == method and _progress(c) == progress and (where is None or where(c))
            ]

        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: len(found()) >= count), timeout)
        return found()

    def add_message(self, channel: str, message: dict[str, Any]) -> None:
        """A message someone else posted (so conversations.replies returns it)."""
        self.messages[channel].append(copy.deepcopy(message))

    async def send_socket(self, frame: dict[str, Any]) -> None:
        await self.wait_socket()
        await self._sockets[-1].send_json(frame)

    async def wait_socket(self, timeout: float = 30) -> None:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: bool(self._sockets)), timeout)

    async def wait_socket_ack(self, envelope_id: str, timeout: float = 30) -> dict[str, Any]:
        def ack() -> dict[str, Any] | None:
            return next(
                (f for f in self.socket_frames if f.get("envelope_id") == envelope_id), None
            )

        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: ack() is not None), timeout)
        found = ack()
        assert found is not None
        return found

    # --- handlers ---
    async def _record(self, call: Call, *, hook: bool = False) -> None:
        async with self._changed:
            (self.hooks if hook else self.calls).append(call)
            self._changed.notify_all()

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        raw = await request.read()
        params: dict[str, Any] = dict(request.query)
        if raw and request.content_type == "application/json":
            params.update(json.loads(raw))
        elif raw:
            params.update({k: _decode(v) for k, v in parse_qsl(raw.decode())})
        call = Call(method, params, dict(request.headers), raw)
        if method in self.on_call:
            await self.on_call[method](call)
        await self._record(call)
        if self.scripted[method]:
            scripted = self.scripted[method].popleft()
            if scripted.performed:
                self._answer(method, params)
            return web.json_response(
                scripted.body, status=scripted.status, headers=scripted.headers
            )
        return web.json_response(self._answer(method, params))

    async def _hook(self, request: web.Request) -> web.Response:
        raw = await request.read()
        if request.match_info["path"] in self.expired_hooks:
            # A response_url past its 30 minutes or 5 uses: refused, nothing shown.
            return web.Response(status=404, text="expired_url")
        await self._record(
            Call("hook", json.loads(raw or b"{}"), dict(request.headers), raw, path=request.path),
            hook=True,
        )
        return web.Response(text="ok")

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_json(payload("socket_mode_hello.json"))
        async with self._changed:
            self._sockets.append(ws)
            self._changed.notify_all()
        async for frame in ws:
            if frame.type == aiohttp.WSMsgType.TEXT:
                async with self._changed:
                    self.socket_frames.append(json.loads(frame.data))
                    self._changed.notify_all()
        self._sockets.remove(ws)
        return ws

    def _next_ts(self) -> str:
        """Later than every message so far, as Slack's clock would be."""
        known = [float(m["ts"]) for ms in self.messages.values() for m in ms]
        self._last = max([self._last, *known]) + 0.0001
        return f"{self._last:.6f}"

    def _answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        answers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "auth.test": lambda p: {
                **payload("web_auth.test_bot_token.json"),
                "user_id": BOT_USER,
                "team_id": TEAM,
            },
            "chat.postMessage": self._post,
            "chat.update": self._update,
            "chat.postEphemeral": lambda p: {"ok": True, "message_ts": self._next_ts()},
            **(
                {
                    "chat.startStream": self._start_stream,
                    "chat.appendStream": self._append_stream,
                    "chat.stopStream": self._stop_stream,
                }
                if self.streaming
                else {}
            ),
            "chat.getPermalink": lambda p: {
                "ok": True,
                "channel": p["channel"],
                "permalink": f"https://fake.slack.test/archives/{p['channel']}/"
                f"p{str(p['message_ts']).replace('.', '')}",
            },
            "conversations.replies": self._replies,
            "conversations.history": self._history,
            "conversations.open": lambda p: {
                "ok": True,
                "channel": {"id": dm_of(str(p.get("users", "")))},
            },
            "users.info": self._user,
            "conversations.members": self._members,
            "conversations.info": self._info,
            "usergroups.users.list": self._usergroup,
            "views.open": lambda p: {"ok": True, "view": {"id": "V1", **p.get("view", {})}},
            "views.publish": lambda p: {"ok": True, "view": {"id": "V2", **p.get("view", {})}},
            "assistant.threads.setStatus": lambda p: {"ok": True},
            "assistant.threads.setSuggestedPrompts": lambda p: {"ok": True},
            "assistant.threads.setTitle": lambda p: {"ok": True},
            "reactions.add": self._react,
            "apps.connections.open": lambda p: {
                "ok": True,
                "url": f"ws://127.0.0.1:{self.port}/link",
            },
        }
        refused = (
            _missing(method, params)
            or _refusal(method, params)
            or self._unscoped(method, params)
            or self._outside(method, params)
            or self._expired_trigger(method, params)
        )
        if refused:
            return refused
        answer = answers.get(method)
        return answer(params) if answer else {"ok": False, "error": "unknown_method"}

    def _kind(self, channel: str) -> str:
        """public_channel, private_channel, im or mpim: registered, else read off the id."""
        if channel in self.kinds:
            return self.kinds[channel]
        return {"D": "im", "G": "private_channel"}.get(channel[:1], "public_channel")

    def _unscoped(self, method: str, p: dict[str, Any]) -> dict[str, Any] | None:
        """missing_scope, as Slack answers a history read in a kind of conversation the
        token has no history scope for (https://docs.slack.dev/reference/methods/
        conversations.replies: channels:history, groups:history, im:history, mpim:history)."""
        if method == "conversations.open":
            needed = "im:write"  # https://docs.slack.dev/reference/methods/conversations.open
        elif method in ("conversations.replies", "conversations.history"):
            needed = _HISTORY_SCOPE[self._kind(str(p.get("channel", "")))]
        else:
            return None
        if needed in self.granted:
            return None
        return {
            "ok": False,
            "error": "missing_scope",
            "needed": needed,
            "provided": ",".join(sorted(self.granted)),
        }

    def _outside(self, method: str, p: dict[str, Any]) -> dict[str, Any] | None:
        """not_in_channel, as Slack answers a post where the bot is not a member
        (https://docs.slack.dev/reference/methods/chat.postEphemeral and chat.postMessage:
        "not_in_channel"). chat.postMessage to a user id opens the app's DM with them, and
        to a public channel needs only chat:write.public."""
        if method not in ("chat.postMessage", "chat.postEphemeral"):
            return None
        channel = str(p.get("channel", ""))
        if channel in self.joined:
            return None
        if method == "chat.postMessage" and (
            channel[:1] in ("U", "W")
            or (self._kind(channel) == "public_channel" and "chat:write.public" in self.granted)
        ):
            return None
        return {"ok": False, "error": "not_in_channel"}

    def _expired_trigger(self, method: str, p: dict[str, Any]) -> dict[str, Any] | None:
        """expired_trigger_id for a trigger Slack never issued (or issued too long ago):
        https://docs.slack.dev/reference/methods/views.open."""
        if method not in ("views.open", "views.push") or p.get("trigger_id") in self.triggers:
            return None
        return {"ok": False, "error": "expired_trigger_id"}

    def _post(self, p: dict[str, Any]) -> dict[str, Any]:
        p = {**p, "channel": dm_of(str(p["channel"]))}
        ts = self._next_ts()
        message = {
            "type": "message",
            "ts": ts,
            "user": BOT_USER,
            "bot_id": BOT_ID,
            "text": p.get("text", ""),
            "blocks": p.get("blocks") or [],
        }
        if p.get("thread_ts"):
            message["thread_ts"] = p["thread_ts"]
        if p.get("metadata"):
            message["metadata"] = p["metadata"]
        self.messages[p["channel"]].append(message)
        return {"ok": True, "channel": p["channel"], "ts": ts, "message": message}

    def _update(self, p: dict[str, Any]) -> dict[str, Any]:
        """https://docs.slack.dev/reference/methods/chat.update: an unknown ts is an error."""
        found = [m for m in self.messages[p["channel"]] if m["ts"] == p["ts"]]
        if not found:
            return {"ok": False, "error": "message_not_found"}
        if found[0].get("streaming_state") == "in_progress":
            # Slack refuses to edit a message that is still streaming until the stream is
            # stopped (chat.stopStream, or Slack's own undocumented timeout): reported as
            # `streaming_state_conflict` by python-slack-sdk#1859 and other bots' notes.
            return {"ok": False, "error": "streaming_state_conflict"}
        for message in found:
            message.update(text=p.get("text", ""), blocks=p.get("blocks") or [])
            if p.get("metadata"):
                message["metadata"] = p["metadata"]
        return {"ok": True, "channel": p["channel"], "ts": p["ts"], "text": p.get("text", "")}

    # --- message streams (https://docs.slack.dev/reference/methods/chat.startStream,
    # chat.appendStream, chat.stopStream) ---
    def expire_streams(self) -> None:
        """Close every open stream as Slack does on its own after a while (undocumented:
        about 30 s idle or 5 min in all): appends and stops are refused from then on,
        and chat.update is allowed again."""
        for messages in self.messages.values():
            for message in messages:
                if message.get("streaming_state") == "in_progress":
                    message["streaming_state"] = "expired"

    def _start_stream(self, p: dict[str, Any]) -> dict[str, Any]:
        """A streamed reply in a thread: channel and thread_ts required; outside a DM the
        recipient's user and team too (missing_recipient_*)."""
        if not p.get("channel"):
            return {"ok": False, "error": "channel_not_found"}
        if not p.get("thread_ts"):
            return {"ok": False, "error": "invalid_arguments"}
        if self._kind(str(p["channel"])) != "im":
            for needed in ("recipient_team_id", "recipient_user_id"):
                if not p.get(needed):
                    return {"ok": False, "error": f"missing_{needed}"}
        text = _streamed_text(p)
        if isinstance(text, dict):
            return text
        ts = self._next_ts()
        message = {
            "type": "message",
            "ts": ts,
            "thread_ts": p["thread_ts"],
            "user": BOT_USER,
            "bot_id": BOT_ID,
            "text": text,
            "blocks": [],
            "streaming_state": "in_progress",
        }
        self.messages[p["channel"]].append(message)
        return {"ok": True, "channel": p["channel"], "ts": ts}

    def _streaming(self, p: dict[str, Any]) -> dict[str, Any]:
        """The stream `p` names, or Slack's error: the message unknown, or stopped."""
        if not p.get("channel") or not p.get("ts"):
            return {"ok": False, "error": "invalid_arguments"}
        found = [m for m in self.messages[p["channel"]] if m["ts"] == p["ts"]]
        if not found or "streaming_state" not in found[0]:
            return {"ok": False, "error": "message_not_found"}
        if found[0]["streaming_state"] != "in_progress":
            return {"ok": False, "error": "message_not_in_streaming_state"}
        return found[0]

    def _append_stream(self, p: dict[str, Any]) -> dict[str, Any]:
        message = self._streaming(p)
        if message.get("ok") is False:
            return message
        if not p.get("markdown_text") and not p.get("chunks"):
            return {"ok": False, "error": "invalid_arguments"}
        text = _streamed_text(p)
        if isinstance(text, dict):
            return text
        message["text"] += text
        return {"ok": True, "channel": p["channel"], "ts": p["ts"]}

    def _stop_stream(self, p: dict[str, Any]) -> dict[str, Any]:
        """The stream ends: its text shown as a markdown block, `blocks` below it."""
        message = self._streaming(p)
        if message.get("ok") is False:
            return message
        text = _streamed_text(p)
        if isinstance(text, dict):
            return text
        problems = message_problems(p["blocks"]) if p.get("blocks") else []
        if problems:
            return {
                "ok": False,
                "error": "invalid_blocks",
                "response_metadata": {"messages": problems},
            }
        message["text"] += text
        streamed = [{"type": "markdown", "text": message["text"]}] if message["text"] else []
        message["blocks"] = streamed + list(p.get("blocks") or [])
        message["streaming_state"] = "completed"
        if p.get("metadata"):
            message["metadata"] = p["metadata"]
        return {"ok": True, "channel": p["channel"], "ts": p["ts"], "message": dict(message)}

    def _react(self, p: dict[str, Any]) -> dict[str, Any]:
        """reactions.add (https://docs.slack.dev/reference/methods/reactions.add): channel,
        timestamp and name required; one reaction of a name per user and message."""
        if not p.get("channel") or not p.get("timestamp"):
            return {"ok": False, "error": "no_item_specified"}
        if not p.get("name"):
            return {"ok": False, "error": "invalid_name"}
        for message in self.messages[p["channel"]]:
            if message["ts"] == p["timestamp"]:
                reaction = next(
                    (r for r in message.setdefault("reactions", []) if r["name"] == p["name"]),
                    None,
                )
                if reaction is not None and BOT_USER in reaction["users"]:
                    return {"ok": False, "error": "already_reacted"}
                if reaction is None:
                    reaction = {"name": p["name"], "users": [], "count": 0}
                    message["reactions"].append(reaction)
                reaction["users"].append(BOT_USER)
                reaction["count"] += 1
                return {"ok": True}
        return {"ok": False, "error": "message_not_found"}

    def _replies(self, p: dict[str, Any]) -> dict[str, Any]:
        if _is_user_id(p["channel"]):
            return {"ok": False, "error": "channel_not_found"}
        thread, latest = str(p["ts"]), p.get("latest")
        with_metadata = str(p.get("include_all_metadata")) in ("1", "true", "True")
        found = []
        for message in sorted(self.messages[p["channel"]], key=lambda m: float(m["ts"])):
            if thread not in (message["ts"], message.get("thread_ts")):
                continue
            if latest and float(message["ts"]) >= float(latest):
                continue
            shown = dict(message)
            if not with_metadata:
                shown.pop("metadata", None)
            found.append(shown)
        # Oldest first, `limit` at a time (default 1,000); the cursor is the next offset.
        # https://docs.slack.dev/reference/methods/conversations.replies
        start, limit = int(p.get("cursor") or 0), int(p.get("limit") or 1000)
        more = start + limit < len(found)
        return {
            "ok": True,
            "messages": found[start : start + limit],
            "has_more": more,
            "response_metadata": {"next_cursor": str(start + limit) if more else ""},
        }

    def _info(self, p: dict[str, Any]) -> dict[str, Any]:
        """https://docs.slack.dev/reference/methods/conversations.info: the channel object's
        kind and sharing flags (is_shared, is_ext_shared, is_org_shared)."""
        channel, kind = str(p["channel"]), self._kind(str(p["channel"]))
        shared = channel in self.shared
        return {
            "ok": True,
            "channel": {
                "id": channel,
                "is_channel": kind == "public_channel",
                "is_group": kind == "private_channel",
                "is_im": kind == "im",
                "is_mpim": kind == "mpim",
                "is_private": kind != "public_channel",
                "is_member": channel in self.joined,
                "is_shared": shared,
                "is_ext_shared": shared,
                "is_org_shared": False,
                "is_pending_ext_shared": False,
            },
        }

    def _user(self, p: dict[str, Any]) -> dict[str, Any]:
        """https://docs.slack.dev/reference/methods/users.info: `user` is required."""
        if not p.get("user"):
            return {"ok": False, "error": "user_not_found"}
        body = payload("web_users.info.json")
        body["user"] |= {"id": p["user"], "team_id": TEAM}
        body["user"]["profile"]["team"] = TEAM
        body["user"] |= self.users.get(p["user"], {})
        return body

    def _members(self, p: dict[str, Any]) -> dict[str, Any]:
        """A channel's members, a page of `limit` at a time; the cursor is the next offset.
        https://docs.slack.dev/reference/methods/conversations.members"""
        if p.get("channel") not in self.members:
            return {"ok": False, "error": "channel_not_found"}
        start = int(p.get("cursor") or 0)
        limit = int(p.get("limit") or 100)
        members = self.members[p["channel"]]
        more = start + limit < len(members)
        return {
            "ok": True,
            "members": members[start : start + limit],
            "response_metadata": {"next_cursor": str(start + limit) if more else ""},
        }

    def _usergroup(self, p: dict[str, Any]) -> dict[str, Any]:
        """https://docs.slack.dev/reference/methods/usergroups.users.list"""
        if p.get("usergroup") not in self.usergroups:
            return {"ok": False, "error": "no_such_subteam"}
        return {"ok": True, "users": self.usergroups[p["usergroup"]]}

    def _history(self, p: dict[str, Any]) -> dict[str, Any]:
        """The channel's top-level messages, newest first, as Slack lists them."""
        if _is_user_id(p["channel"]):
            return {"ok": False, "error": "channel_not_found"}
        with_metadata = str(p.get("include_all_metadata")) in ("1", "true", "True")
        limit = int(p.get("limit") or 100)
        top = [m for m in self.messages[p["channel"]] if m.get("thread_ts") in (None, m["ts"])]
        found = []
        for message in sorted(top, key=lambda m: float(m["ts"]), reverse=True)[:limit]:
            shown = dict(message)
            if not with_metadata:
                shown.pop("metadata", None)
            found.append(shown)
        return {"ok": True, "messages": found, "has_more": False}


@dataclass
class Sent:
    status: int
    text: str
    seconds: float


class SlackSender:
    """Posts to /slack/events as Slack does: signed, with Slack's headers."""

    def __init__(
        self,
        http: aiohttp.ClientSession,
        url: str,
        secret: str = SIGNING_SECRET,
        *,
        triggers: set[str] | None = None,
    ):
        self.http = http
        self.url = url
        self.verifier = SignatureVerifier(secret)
        # Where the trigger_ids of what it signs are recorded (FakeSlack.triggers), so the
        # fake knows them as Slack knows the triggers it issued.
        self.triggers = triggers

    async def raw(
        self,
        body: str,
        *,
        content_type: str,
        timestamp: int | None = None,
        signature: str | None = None,
        retry_num: int | None = None,
    ) -> Sent:
        ts = str(timestamp if timestamp is not None else int(time.time()))
        headers = {
            "Content-Type": content_type,
            "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": signature
            or self.verifier.generate_signature(timestamp=ts, body=body),
        }
        if retry_num is not None:
            headers |= {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"}
        started = time.monotonic()
        async with self.http.post(self.url, data=body.encode(), headers=headers) as response:
            return Sent(response.status, await response.text(), time.monotonic() - started)

    def _issued(self, trigger_id: str | None) -> None:
        if self.triggers is not None and trigger_id:
            self.triggers.add(trigger_id)

    async def event(self, body: dict[str, Any], **kwargs: Any) -> Sent:
        return await self.raw(json.dumps(body), content_type="application/json", **kwargs)

    async def command(self, form: dict[str, str], **kwargs: Any) -> Sent:
        self._issued(form.get("trigger_id"))
        return await self.raw(
            urlencode(form), content_type="application/x-www-form-urlencoded", **kwargs
        )

    async def interaction(self, body: dict[str, Any], **kwargs: Any) -> Sent:
        self._issued(body.get("trigger_id"))
        return await self.raw(
            urlencode({"payload": json.dumps(body)}),
            content_type="application/x-www-form-urlencoded",
            **kwargs,
        )


PLACEHOLDER_TEXT = placeholder_message().text


_HISTORY_SCOPE = {
    "public_channel": "channels:history",
    "private_channel": "groups:history",
    "im": "im:history",
    "mpim": "mpim:history",
}


def manifest_scopes() -> frozenset[str]:
    """The bot scopes manifest.yml asks for."""
    manifest = yaml.safe_load((FIXTURES.parent.parent / "manifest.yml").read_text())
    return frozenset(manifest["oauth_config"]["scopes"]["bot"])


def _missing(method: str, p: dict[str, Any]) -> dict[str, Any] | None:
    """invalid_arguments naming the first required argument missing, as Slack answers."""
    missing = [name for name in REQUIRED.get(method, ()) if p.get(name) is None]
    if not missing:
        return None
    return {
        "ok": False,
        "error": "invalid_arguments",
        "response_metadata": {"messages": [f"[ERROR] missing required field: {missing[0]}"]},
    }


def _is_user_id(channel: str) -> bool:
    return channel[:1] in ("U", "W")


def dm_of(channel: str) -> str:
    """The conversation a chat.postMessage to `channel` lands in: for a user id (U…, W…)
    the app's DM with them, a D… channel (Slack answers with its id; conversations.*
    take only conversation ids: https://docs.slack.dev/reference/methods/chat.postMessage,
    "Post to a user's App Home Messages tab")."""
    return "D" + channel[1:] if _is_user_id(channel) else channel


def _refusal(method: str, p: dict[str, Any]) -> dict[str, Any] | None:
    """Slack's answer to a chat.* or views.* call it would not carry out, else None: a
    missing channel or text, text over 40,000 characters, blocks or a view breaking Block
    Kit's limits (tests/bot/slack/fake_block_kit.py)."""
    if method in ("chat.postMessage", "chat.update", "chat.postEphemeral"):
        if not p.get("channel"):
            return {"ok": False, "error": "channel_not_found"}
        if not p.get("text") and not p.get("blocks") and not p.get("attachments"):
            return {"ok": False, "error": "no_text"}
        if len(str(p.get("text") or "")) > MESSAGE_TEXT:
            return {"ok": False, "error": "msg_too_long"}
        problems = message_problems(p["blocks"]) if "blocks" in p else []
        if problems:
            return {
                "ok": False,
                "error": "invalid_blocks",
                "response_metadata": {"messages": problems},
            }
    if method in ("views.open", "views.publish", "views.update", "views.push"):
        problems = view_problems(p.get("view"))
        if problems:
            return {
                "ok": False,
                "error": "invalid_arguments",
                "response_metadata": {"messages": problems},
            }
    return None


STREAM_TEXT = 12_000  # markdown_text's limit on each stream call


def _streamed_text(p: dict[str, Any]) -> str | dict[str, Any]:
    """The text a stream call adds (its markdown_text and markdown_text chunks), or
    Slack's error for chunks it cannot read or text over the limit."""
    pieces = [str(p["markdown_text"])] if p.get("markdown_text") else []
    chunks = p.get("chunks") or []
    if not isinstance(chunks, list):
        return {"ok": False, "error": "invalid_chunks"}
    for chunk in chunks:
        if not isinstance(chunk, dict) or not chunk.get("type"):
            return {"ok": False, "error": "invalid_chunks"}
        if chunk["type"] == "markdown_text":
            pieces.append(str(chunk.get("text", "")))
    if any(len(piece) > STREAM_TEXT for piece in pieces):
        return {"ok": False, "error": "msg_too_long"}
    return "".join(pieces)


def _progress(call: Call) -> bool:
    """A chat.update that only changes the placeholder: a step, or its turn in the queue."""
    if call.method != "chat.update":
        return False
    text = str(call.params.get("text", ""))
    return text == PLACEHOLDER_TEXT or "in the queue" in text


def mention(text: str, *, ts: str, event_id: str, channel: str = "C111", **extra: Any) -> dict:
    """The app_mention payload file with this text, ts, event id and channel."""
    body = payload("event_app_mention.json")
    body["event_id"] = event_id
    body["event"] |= {"text": f"<@{BOT_USER}> {text}", "ts": ts, "event_ts": ts, "channel": channel}
    body["event"] |= extra
    return body


def channel_message(text: str, *, ts: str, event_id: str, channel: str = "C111", **extra: Any):
    """The channel message payload file, as a top-level message unless `thread_ts` is given."""
    body = payload("event_message_channel_in_thread.json")
    body["event_id"] = event_id
    event = body["event"]
    event.pop("thread_ts")
    event.pop("parent_user_id")
    event |= {"text": text, "ts": ts, "event_ts": ts, "channel": channel, **extra}
    return body


class GatedAnswerer:
    """A deliberately slow agent: the real answerer, held until the test opens the gate."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.started = asyncio.Event()
        self.gate = asyncio.Event()

    async def answer(self, question: str, **kwargs: Any) -> Any:
        self.started.set()
        await self.gate.wait()
        return await self.inner.answer(question, **kwargs)


class RecordingAnswerer:
    """The real answerer, keeping what each call was given (history, scope, origin)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[dict[str, Any]] = []

    async def answer(self, question: str, **kwargs: Any) -> Any:
        self.calls.append({"question": question, **kwargs})
        return await self.inner.answer(question, **kwargs)


class FailingAnswerer:
    """An agent that stores its run, then breaks (as a crash mid-run would)."""

    def __init__(self, pool: Any) -> None:
        from store.runs import RunRepository

        self.runs = RunRepository(pool)
        self.run_ids: list[int] = []

    async def answer(self, question: str, *, origin: Any = None, **kwargs: Any) -> Any:
        from store.runs import RunStart

        self.run_ids.append(await self.runs.start(RunStart(question=question, origin=origin or {})))
        raise RuntimeError("the reasoner fell over (a test's deliberate failure)")


def slash_command(text: str, *, response_url: str, trigger_id: str = "111.111.xxx") -> dict:
    """The slash command payload file as a form, as `/kb <text>`."""
    from urllib.parse import parse_qsl as _parse

    form = dict(_parse(payload("slash_command.form-urlencoded.txt")))
    form |= {"command": "/kb", "text": text, "response_url": response_url, "trigger_id": trigger_id}
    form["user_id"] = "W222"  # the file's user is W111, which the rig makes the bot
    return form


def user_message(event_body: dict) -> dict:
    """The message of an event body as conversations.replies would list it."""
    event = event_body["event"]
    keys = ("type", "user", "text", "ts", "thread_ts")
    return {k: event[k] for k in keys if k in event}


def buttons(blocks: list[dict]) -> dict[str, dict]:
    """Every button in `blocks`, by action id."""
    return {
        element["action_id"]: element
        for block in blocks
        if block.get("type") == "actions"
        for element in block.get("elements", [])
        if element.get("type") == "button"
    }


_triggers = iter(range(1, 1_000_000))


def button_click(
    *,
    button: dict,
    user: str,
    channel: str,
    message: dict | None,
    response_url: str,
    is_ephemeral: bool = False,
) -> dict:
    """The block_actions payload file, as `user` pressing `button` on `message`.

    `message` None is a click on an ephemeral message: Slack sends no copy of it back.
    """
    body = payload("interactive_block_actions_button.json")
    body["user"] |= {"id": user}
    body["container"] = {
        "type": "message",
        "message_ts": (message or {}).get("ts", "1700009999.000001"),
        "channel_id": channel,
        "is_ephemeral": is_ephemeral,
    }
    body["channel"]["id"] = channel
    if message is not None:
        body["message"] = message
    body["response_url"] = response_url
    body["trigger_id"] = f"111.222.{next(_triggers)}"
    body["actions"][0] |= {"action_id": button["action_id"], "value": button.get("value")}
    return body


def feedback_buttons(blocks: list[dict]) -> dict:
    """The feedback_buttons element of `blocks` (in its context_actions block)."""
    (element,) = [
        element
        for block in blocks
        if block.get("type") == "context_actions"
        for element in block.get("elements", [])
        if element.get("type") == "feedback_buttons"
    ]
    return element


def feedback_click(*, message: dict, user: str, positive: bool, response_url: str) -> dict:
    """The block_actions payload file, as `user` pressing 👍 (or 👎) on `message`'s
    feedback_buttons. The action has the shape Slack documents for this element
    (https://docs.slack.dev/tools/bolt-js/reference/interfaces/FeedbackButtonsAction):
    type feedback_buttons, action_id, block_id, the pressed button's value and text."""
    element = feedback_buttons(message["blocks"])
    pressed = element["positive_button" if positive else "negative_button"]
    body = button_click(
        button={"action_id": element["action_id"], "value": pressed["value"]},
        user=user,
        channel="C111",
        message=message,
        response_url=response_url,
    )
    body["actions"] = [
        {
            "type": "feedback_buttons",
            "action_id": element["action_id"],
            "block_id": "fb1",
            "value": pressed["value"],
            "text": pressed["text"],
            "action_ts": "1700009999.123456",
        }
    ]
    return body


def view_submission(*, callback_id: str, private_metadata: str, user: str, values: dict) -> dict:
    """The view_submission payload file, with this modal's id, metadata and input values."""
    body = payload("interactive_view_submission.json")
    body["user"] |= {"id": user}
    body["trigger_id"] = f"111.222.{next(_triggers)}"
    view = body["view"]
    view |= {"callback_id": callback_id, "private_metadata": private_metadata}
    view["state"] = {
        "values": {
            block_id: {action_id: {"type": "plain_text_input", "value": value}}
            for block_id, (action_id, value) in values.items()
        }
    }
    return body


class SteppingAnswerer:
    """The real answerer, behind a long first step it reports (as the agent loop does)."""

    def __init__(self, inner: Any, step: str) -> None:
        self.inner = inner
        self.step = step
        self.gate = asyncio.Event()

    async def answer(self, question: str, *, on_step: Any = None, **kwargs: Any) -> Any:
        while on_step is not None and not self.gate.is_set():
            await on_step(self.step)  # a long step reports itself now and then
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.gate.wait(), 0.2)
        await self.gate.wait()
        return await self.inner.answer(question, on_step=on_step, **kwargs)
