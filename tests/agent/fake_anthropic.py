"""A local fake of the Anthropic Messages API, on an ephemeral port, for the real SDK.

It speaks the wire format the SDK expects: `POST /v1/messages` answered with a message
whose content is a `tool_use` block, a stop reason and usage with the cache fields; or
an error status (429/529 with `retry-after`, 5xx, 400) with the API's error body; or no
answer at all until released (a timeout). Replies are scripted per tool name (the tool
a request forces), so a test says what each decision gets back. Every request is
recorded whole: headers and JSON body. Like the API version the SDK sends
(2026-10-21), it refuses sampling parameters such as `temperature` with a 400.

Usage reports prompt caching as the API does (Anthropic's "Prompt caching" guide,
docs.anthropic.com/en/docs/build-with-claude/prompt-caching): the request is read in
the order tools → system → messages; each block carrying `cache_control` is a
breakpoint, and what is cached is the whole prefix up to and including it, so a hit
needs that prefix to be byte-for-byte the same as in an earlier request. A changed
`tool_choice` invalidates the cached message blocks but not tools and system. A prefix
shorter than the model's minimum (1024 tokens for Sonnet and Opus) is not cached. The
first request with a prefix reports it as `cache_creation_input_tokens`, a later one as
`cache_read_input_tokens`, and `input_tokens` counts only what follows the last
breakpoint. Tokens are estimated as characters / 4.

A request with `"stream": true` is answered with server-sent events as the API sends
them (Anthropic's "Streaming Messages" guide): `message_start`, `content_block_start`
of the tool_use block, a `ping`, `content_block_delta`s whose `input_json_delta` carry
the tool input's JSON a few characters at a time, `content_block_stop`,
`message_delta` with the stop reason and usage, `message_stop`. A reply's `seconds`
is how long it takes to write: spread evenly over the deltas when streamed, waited
before the whole message otherwise. A streamed reply can break (`broken`): "error"
sends an `error` event (overloaded) halfway, "malformed" an event whose data is not
JSON, "cut" closes the connection halfway. When each event went out is recorded
(`Recorded.sent`), so a test can order what its client saw against what was sent.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

from aiohttp import web
from aiohttp.test_utils import TestServer

_SAMPLING = ("temperature", "top_p", "top_k")
# The smallest cacheable prompt of Sonnet and Opus models, in tokens (the guide's
# "Cache limitations").
MIN_CACHEABLE_TOKENS = 1024
# Characters of tool input JSON per input_json_delta (a few tokens, as the API sends).
DELTA_CHARS = 12


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted reply: a tool call (`tool_input`, or a function of the request body
    giving it), an error `status`, or a hang until the fake is released."""

    tool_input: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    stop_reason: str = "tool_use"
    hang: bool = False
    seconds: float = 0.0
    broken: Literal["", "error", "malformed", "cut"] = ""


@dataclass(frozen=True, slots=True)
class Sent:
    """One server-sent event as it went out: when (time.monotonic), its name, its data."""

    at: float
    event: str
    data: str


@dataclass(slots=True)
class Recorded:
    headers: dict[str, str]
    body: dict[str, Any]
    sent: list[Sent] = field(default_factory=list)

    @property
    def tool(self) -> str:
        return str(self.body.get("tool_choice", {}).get("name", ""))


class FakeAnthropic:
    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._script: dict[str, list[Reply]] = {}
        self._standing: dict[str, Reply] = {}
        self._release = asyncio.Event()
        self._ids = itertools.count(1)
        self.server: TestServer | None = None
        # Cached prefixes: the hash of a prefix → its length in tokens.
        self._cache: dict[str, int] = {}
        # The usage reported for each answered request, in order.
        self.usages: list[dict[str, int]] = []

    def script(self, tool: str, *replies: Reply) -> None:
        self._script.setdefault(tool, []).extend(replies)

    def always(self, tool: str, reply: Reply) -> None:
        """`reply` to every request for `tool` once its script is used up."""
        self._standing[tool] = reply

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return str(self.server.make_url(""))

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/messages", self._messages)
        return app

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        recorded = Recorded(dict(request.headers), body)
        self.requests.append(recorded)
        sampling = [k for k in _SAMPLING if k in body]
        if sampling:
            return _error(
                400, "invalid_request_error", f"{sampling[0]}: Extra inputs are not permitted"
            )
        queue = self._script.get(recorded.tool, [])
        reply = queue.pop(0) if queue else self._standing.get(recorded.tool)
        if reply is None:
            return _error(500, "api_error", f"nothing scripted for {recorded.tool!r}")
        if reply.hang:
            await self._release.wait()
        if reply.status != 200:
            kind = "overloaded_error" if reply.status == 529 else "rate_limit_error"
            return _error(reply.status, kind, "try again", reply.headers)
        if body.get("stream"):
            return await self._stream(request, recorded, reply)
        await asyncio.sleep(reply.seconds)  # the time the reply takes to write
        return web.json_response(self._message(body, reply))

    async def _stream(
        self, request: web.Request, recorded: Recorded, reply: Reply
    ) -> web.StreamResponse:
        message = self._message(recorded.body, reply)
        (block,) = message["content"]
        text = json.dumps(block["input"])
        deltas = [text[i : i + DELTA_CHARS] for i in range(0, len(text), DELTA_CHARS)]
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)

        async def send(event: str, data: Any) -> None:
            line = data if isinstance(data, str) else json.dumps(data)
            await response.write(f"event: {event}\ndata: {line}\n\n".encode())
            recorded.sent.append(Sent(time.monotonic(), event, line))

        usage = message["usage"]
        start = {
            **message,
            "content": [],
            "stop_reason": None,
            "usage": {**usage, "output_tokens": 1},
        }
        await send("message_start", {"type": "message_start", "message": start})
        await send(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {**block, "input": {}}},
        )
        await send("ping", {"type": "ping"})
        for number, piece in enumerate(deltas):
            if number == len(deltas) // 2 and reply.broken:
                return await self._break(request, response, reply, send)
            await asyncio.sleep(reply.seconds / len(deltas))
            delta = {"type": "input_json_delta", "partial_json": piece}
            await send(
                "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
            )
        await send("content_block_stop", {"type": "content_block_stop", "index": 0})
        stop = {"stop_reason": reply.stop_reason, "stop_sequence": None}
        await send(
            "message_delta",
            {
                "type": "message_delta",
                "delta": stop,
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
        await send("message_stop", {"type": "message_stop"})
        await response.write_eof()
        return response

    async def _break(
        self, request: web.Request, response: web.StreamResponse, reply: Reply, send: Any
    ) -> web.StreamResponse:
        if reply.broken == "error":
            error = {"type": "overloaded_error", "message": "Overloaded"}
            await send("error", {"type": "error", "error": error})
        elif reply.broken == "malformed":
            await send(
                "content_block_delta", '{"type": "content_block_delta", "index": 0, "delta":'
            )
        else:  # cut: the connection closes with the chunked body unfinished
            assert request.transport is not None
            request.transport.close()
            return response
        await response.write_eof()
        return response

    def _message(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        return {
            "id": f"msg_{next(self._ids):04d}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [
                {
                    "type": "tool_use",
                    "id": f"toolu_{next(self._ids):04d}",
                    "name": body["tool_choice"]["name"],
                    "input": reply.tool_input(body)
                    if callable(reply.tool_input)
                    else reply.tool_input,
                }
            ],
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": {"output_tokens": 64, **self._usage(body)},
        }

    def _usage(self, body: dict[str, Any]) -> dict[str, int]:
        usage = self._cache_usage(body)
        self.usages.append(usage)
        return usage

    def _cache_usage(self, body: dict[str, Any]) -> dict[str, int]:
        """Input, cache-read and cache-written tokens of a request, from the prefixes
        earlier requests cached (the module's docstring says how)."""
        digest = hashlib.sha256()
        tokens = 0
        breakpoints: list[tuple[str, int]] = []  # (prefix hash, prefix tokens)
        for block, marked in _blocks(body):
            digest.update(block.encode())
            tokens += len(block) // 4
            if marked:
                breakpoints.append((digest.copy().hexdigest(), tokens))
        read = max((n for h, n in breakpoints if h in self._cache), default=0)
        written = 0
        for prefix, length in breakpoints:
            if length > read and length >= MIN_CACHEABLE_TOKENS:
                self._cache[prefix] = length
                written = length - read
        cached = read + written
        return {
            "input_tokens": tokens - cached,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written,
        }

    def release(self) -> None:
        self._release.set()


def _blocks(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """The request's blocks in cache order (tools, system, then messages), each as its
    exact JSON without the `cache_control` mark, and whether it carries one."""

    def unmarked(block: Any) -> tuple[str, bool]:
        if isinstance(block, str):
            return json.dumps(block), False
        rest = {k: v for k, v in block.items() if k != "cache_control"}
        return json.dumps(rest, sort_keys=True), "cache_control" in block

    blocks = [unmarked(tool) for tool in body.get("tools", [])]
    system = body.get("system", [])
    blocks += [unmarked(b) for b in ([system] if isinstance(system, str) else system)]
    # Not a block, but part of what the message blocks' cache depends on.
    blocks.append((json.dumps(body.get("tool_choice"), sort_keys=True), False))
    for message in body.get("messages", []):
        content = message["content"]
        blocks.append((message["role"], False))
        blocks += [unmarked(b) for b in ([content] if isinstance(content, str) else content)]
    return blocks


def _error(
    status: int, kind: str, message: str, headers: dict[str, str] | None = None
) -> web.Response:
    return web.json_response(
        {"type": "error", "error": {"type": kind, "message": message}},
        status=status,
        headers=headers or {},
    )


async def running_fake() -> AsyncIterator[FakeAnthropic]:
    fake = FakeAnthropic()
    server = TestServer(fake.app(), port=0)
    await server.start_server()
    fake.server = server
    try:
        yield fake
    finally:
        fake.release()
        await server.close()
