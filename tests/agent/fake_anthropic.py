"""A local fake of the Anthropic Messages API, on an ephemeral port, for the real SDK.

It speaks the wire format the SDK expects: `POST /v1/messages` answered with a message
whose content is a `tool_use` block, a stop reason and usage with the cache fields; or
an error status (429/529 with `retry-after`, 5xx, 400) with the API's error body; or no
answer at all until released (a timeout). Replies are scripted per tool name (the tool
a request forces), so a test says what each decision gets back. Every request is
recorded whole: headers and JSON body. Like the API version the SDK sends
(2026-10-21), it refuses sampling parameters such as `temperature` with a 400.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer

_SAMPLING = ("temperature", "top_p", "top_k")


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted reply: a tool call (`tool_input`, or a function of the request body
    giving it), an error `status`, or a hang until the fake is released."""

    tool_input: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    stop_reason: str = "tool_use"
    hang: bool = False


@dataclass(slots=True)
class Recorded:
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def tool(self) -> str:
        return str(self.body.get("tool_choice", {}).get("name", ""))


class FakeAnthropic:
    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._script: dict[str, list[Reply]] = {}
        self._release = asyncio.Event()
        self._ids = itertools.count(1)
        self.server: TestServer | None = None

    def script(self, tool: str, *replies: Reply) -> None:
        self._script.setdefault(tool, []).extend(replies)

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
        if not queue:
            return _error(500, "api_error", f"nothing scripted for {recorded.tool!r}")
        reply = queue.pop(0)
        if reply.hang:
            await self._release.wait()
        if reply.status != 200:
            kind = "overloaded_error" if reply.status == 529 else "rate_limit_error"
            return _error(reply.status, kind, "try again", reply.headers)
        return web.json_response(self._message(body, reply))

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
            "usage": {
                "input_tokens": 812,
                "output_tokens": 64,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 640,
            },
        }

    def release(self) -> None:
        self._release.set()


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
