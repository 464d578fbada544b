"""The Claude reasoner: each decision one forced tool call to the Messages API.

- Structured output: every call forces one tool (`tool_choice`, agent/reasoners/
  claude_tools.py); its input is checked against that tool's schema.
- Determinism: the API version this SDK speaks (2026-10-21) no longer takes sampling
  parameters (`temperature` is refused with a 400), so decisions are made deterministic
  the way that API allows: one forced tool, a strict schema, a small token budget.
- A token budget per decision (`max_tokens`), and a timeout per request.
- Caching: a request is read as tools → system → messages, and a cache hit needs the
  same bytes up to a `cache_control` breakpoint. So every call sends all the tools, in
  one order, and the system prompt, with the breakpoint on the system prompt: that
  prefix is the same for every decision of a run (and across runs), and only
  `tool_choice` and the messages vary. The evidence block carries a second breakpoint.
- A reply cut off at its token budget (`stop_reason` "max_tokens") is asked again once
  with twice the budget, then the decision is unavailable.
- Retries: on 408/409/429/5xx/529, a timeout or a lost connection, one retry after the
  server's `retry-after` (capped) or an exponential backoff; malformed output is also
  retried once. After that the decision raises ReasonerUnavailable and the loop hands
  the run to the extractive reasoner (the trace says so). The SDK's own retries are
  off (`max_retries=0` on the client) so that this policy is the only one.
- The answer decision streams (`messages.stream`, server-sent events): each claim of the
  tool input is handed over as soon as the next one begins (or the input ends), so the
  loop can ground it and show it while the rest is still being written. A stream that
  breaks (an error event, an event that is not JSON, the connection cut) is asked again
  once without streaming, then the decision is unavailable as above.
- Document text is data: delimited, escaped, and named as such in the system prompt.
Claims Claude writes are verified by the loop like any other: each quote against the
store, each statement against its quote (agent/claim_grounding.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2
from anthropic.lib.streaming import AsyncMessageStream
from anthropic.types import Message

from agent.errors import ReasonerUnavailable
from agent.reasoners.base import DraftClaim, DraftsCallback, Judgement, Route
from agent.reasoners.claude_tools import (
    ALL_TOOLS,
    SYSTEM_PROMPT,
    TOOLS,
    documents_block,
    escape,
    schema_errors,
)
from agent.retrieval.reading import Passage
from agent.state import AgentState, Evidence, GapState, Goal, PendingQuery, PlannedQuestion

log = logging.getLogger(__name__)

_RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
# What a stream that opened may raise while it is read: the connection cut or stalled,
# an `error` event (raised as a status error), an event or tool input that is not JSON.
_STREAM_BROKEN = (httpx2.HTTPError, anthropic.APIError, ValueError)
_CLAIM_SCHEMA = TOOLS["answer"]["input_schema"]["properties"]["claims"]["items"]


def _default_budgets() -> dict[str, int]:
    return {
        "route": 300,
        "plan": 400,
        "rewrite": 150,
        "extract": 1200,
        "judge": 400,
        "answer": 1500,
    }


OnError = Callable[[str], None]
"""Told the kind of each failed call: timeout, connection, ratelimited, overloaded, 5xx,
4xx or malformed (for metrics; the reasoner itself never imports a metrics library)."""


@dataclass(frozen=True, slots=True)
class ClaudeOptions:
    model: str
    timeout: float = 20.0
    retries: int = 1
    # The longest `retry-after` waited; a server asking for more gets the fallback.
    max_retry_wait: float = 10.0
    backoff: float = 0.5
    budgets: Mapping[str, int] = field(default_factory=_default_budgets)
    # The answer decision streamed, each claim handed over as it is written.
    stream_answers: bool = True


class ClaudeReasoner:
    name = "claude"

    def __init__(
        self,
        *,
        client: anthropic.AsyncAnthropic,
        options: ClaudeOptions,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        on_error: OnError | None = None,
    ) -> None:
        self._client = client
        self._options = options
        self._sleep = sleep
        self._on_error = on_error

    # --- decisions ---------------------------------------------------------------------

    async def route(self, goal: Goal) -> Route:
        blocks = [_text(_thread(goal)), _text(f"Newest message: {escape(goal.question)}")]
        result = await self._call("route", blocks)
        action = result["action"]
        standalone = result.get("standalone_question") or goal.question
        return Route(action, standalone, reply=result.get("reply") if action == "reply" else None)

    async def decompose(self, question: str) -> list[PlannedQuestion]:
        result = await self._call("plan", [_text(f"Question: {escape(question)}")])
        return [PlannedQuestion(q["text"], bool(q["key"])) for q in result["sub_questions"]]

    async def rewrite(self, gap: GapState, state: AgentState) -> str | None:
        ran = "\n".join(f"- {escape(r.query.text)}" for r in state.queries)
        found = "\n".join(f"- {escape(e.quote)}" for e in state.evidence_for(gap.sub_question)[:4])
        prompt = (
            f"Sub-question: {escape(state.sub_questions[gap.sub_question].text)}\n"
            f"Gap: {gap.reason}; missing: {', '.join(gap.missing) or 'unknown'}\n"
            f"Queries already run:\n{ran}\n<evidence>\n{found}\n</evidence>"
        )
        query = str((await self._call("rewrite", [_text(prompt)]))["query"]).strip()
        return query if query and not state.ran(query) else None

    async def extract(
        self, sub_question: int, passages: Sequence[Passage], state: AgentState
    ) -> list[Evidence]:
        by_chunk = {span.chunk_id: p for p in passages for span in p.spans}
        documents = [_document(p) for p in passages]
        blocks = [
            _text(documents_block(documents), cached=True),
            _text(f"Sub-question: {escape(state.sub_questions[sub_question].text)}"),
        ]
        result = await self._call("extract", blocks)
        evidence = []
        for quote in result["quotes"]:
            passage = by_chunk.get(quote["chunk_id"])
            if passage is None:
                continue  # a chunk it was not shown cannot be cited
            if quote["support"] == "weak":
                # On the topic without answering: a page to point to if nothing answers
                # (Answer.closest_pages), in the order Claude gave them.
                order = -len(state.close_pages)
                state.note_close_page(passage, quote["chunk_id"], passage.heading, order)
                continue
            evidence.append(_evidence(sub_question, quote, passage, state.step))
        return evidence

    async def second_hop(self, state: AgentState) -> list[PendingQuery]:
        # Claude's judge asks for what is missing itself (its gaps); no extra hop.
        return []

    async def judge(self, state: AgentState, undecided: Sequence[int]) -> Judgement:
        listed = "\n".join(f"{i}: {escape(state.sub_questions[i].text)}" for i in undecided)
        blocks = [_text(_evidence_block(state), cached=True), _text(f"Sub-questions:\n{listed}")]
        result = await self._call("judge", blocks)
        wanted = set(undecided)
        answered = frozenset(i for i in result["answered"] if i in wanted)
        gaps = tuple(
            GapState(g["sub_question"], g["reason"], tuple(g.get("missing", ())))
            for g in result["gaps"]
            if g["sub_question"] in wanted and g["sub_question"] not in answered
        )
        return Judgement(not gaps and answered == wanted, gaps, answered, "claude")

    async def synthesize(self, state: AgentState) -> list[DraftClaim]:
        if not state.evidence:
            return []
        result = await self._call("answer", _answer_blocks(state))
        return _drafts(result["claims"], len(state.sub_questions))

    async def synthesize_streamed(
        self, state: AgentState, *, on_drafts: DraftsCallback
    ) -> list[DraftClaim]:
        if not state.evidence or not self._options.stream_answers:
            return await self.synthesize(state)
        count = len(state.sub_questions)
        told = 0

        async def written(partial: object) -> None:
            nonlocal told
            drafts = _drafts(_complete_claims(partial), count)
            if len(drafts) > told:
                told = len(drafts)
                await on_drafts(drafts)

        result = await self._call("answer", _answer_blocks(state), on_input=written)
        return _drafts(result["claims"], count)

    # --- the API call, with its retry policy ----------------------------------------------

    async def _call(
        self,
        tool: str,
        blocks: list[dict[str, Any]],
        *,
        on_input: Callable[[object], Awaitable[None]] | None = None,
    ) -> dict[str, Any]:
        """The tool's input, checked; with `on_input`, the first attempt streams and
        `on_input` is told the input parsed so far at each delta (a retry does not)."""
        attempts = self._options.retries + 1
        budget = self._options.budgets[tool]
        problem = ""
        for attempt in range(attempts):
            try:
                if on_input is not None and attempt == 0:
                    return await self._streamed(tool, blocks, budget, on_input)
                return await self._once(tool, blocks, budget)
            except _CutOff:
                self._report("malformed")
                problem = f"{tool} output cut off at {budget} tokens"
                budget *= 2  # the same question with room to finish the answer
                wait = 0.0
            except _Malformed as exc:
                self._report("malformed")
                problem = f"malformed {tool} output ({exc})"
                wait = 0.0
            except (anthropic.APITimeoutError, anthropic.APIConnectionError) as exc:
                timeout = isinstance(exc, anthropic.APITimeoutError)
                self._report("timeout" if timeout else "connection")
                problem = f"{type(exc).__name__} on {tool}"
                wait = self._options.backoff * 2**attempt
            except anthropic.APIStatusError as exc:
                self._report(_status_kind(exc.status_code))
                if exc.status_code not in _RETRYABLE_STATUS:
                    raise ReasonerUnavailable(f"HTTP {exc.status_code} on {tool}") from exc
                problem = f"HTTP {exc.status_code} on {tool}"
                wait = _retry_after(exc) or self._options.backoff * 2**attempt
            if attempt + 1 < attempts:
                if wait > self._options.max_retry_wait:
                    break  # the server wants longer than a question can wait
                log.info("claude: %s; retrying in %.1f s", problem, wait)
                await self._sleep(wait)
        raise ReasonerUnavailable(problem + f" after {attempts} attempt(s)")

    def _params(self, tool: str, blocks: list[dict[str, Any]], budget: int) -> dict[str, Any]:
        return {
            "model": self._options.model,
            "max_tokens": budget,
            "system": [
                {"type": "text", "text": SYSTEM_PROMPT, "cache_control": {"type": "ephemeral"}}
            ],
            # Every tool, always in this order: the cached prefix (tools, then the
            # system prompt) must not change from one decision to the next.
            "tools": ALL_TOOLS,
            "tool_choice": {"type": "tool", "name": tool},
            "messages": [{"role": "user", "content": blocks}],
            "timeout": self._options.timeout,
        }

    async def _once(self, tool: str, blocks: list[dict[str, Any]], budget: int) -> dict[str, Any]:
        response = await self._client.messages.create(**self._params(tool, blocks, budget))
        return _tool_input(tool, response, _input_block(tool, response))

    async def _streamed(
        self,
        tool: str,
        blocks: list[dict[str, Any]],
        budget: int,
        on_input: Callable[[object], Awaitable[None]],
    ) -> dict[str, Any]:
        # Opening the stream answers the status like `create` does (the usual policy);
        # what breaks once it is open is read by `_read_stream`.
        async with self._client.messages.stream(**self._params(tool, blocks, budget)) as stream:
            response, text = await _read_stream(stream, on_input)
        block = _input_block(tool, response)
        if block is not None and response.stop_reason != "max_tokens":
            # The accumulated input is parsed leniently (partial JSON); the whole text
            # must be JSON on its own.
            try:
                block.input = json.loads(text)
            except json.JSONDecodeError as exc:
                raise _Malformed("the streamed tool input is not JSON") from exc
        return _tool_input(tool, response, block)

    def _report(self, kind: str) -> None:
        if self._on_error is not None:
            self._on_error(kind)


def _input_block(tool: str, response: Message) -> Any:
    return next((b for b in response.content if b.type == "tool_use" and b.name == tool), None)


def _tool_input(tool: str, response: Message, block: Any) -> dict[str, Any]:
    """The input of the `tool` call `block` of `response`, checked against its schema."""
    usage = response.usage
    log.debug(
        "claude %s: %d in, %d out, %s cache read, %s cache written",
        tool,
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_input_tokens,
        usage.cache_creation_input_tokens,
    )
    if response.stop_reason == "max_tokens":
        raise _CutOff()
    if block is None:
        raise _Malformed(f"no {tool} tool call in the response")
    value = block.input
    if isinstance(value, str):  # some gateways hand the input back as JSON text
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise _Malformed("tool input is not JSON") from exc
    errors = schema_errors(value, TOOLS[tool]["input_schema"])
    if errors:
        raise _Malformed("; ".join(errors[:3]))
    return dict(value)


async def _read_stream(
    stream: AsyncMessageStream[Any], on_input: Callable[[object], Awaitable[None]]
) -> tuple[Message, str]:
    """The stream read to its `message_stop`: the message and its tool input's text,
    `on_input` told the input parsed so far at each delta. Anything else is malformed."""
    events = stream.__aiter__()
    text = ""
    while True:
        try:
            event = await events.__anext__()
        except StopAsyncIteration:
            raise _Malformed("the stream ended before message_stop") from None
        except _STREAM_BROKEN as exc:
            raise _Malformed(f"the stream broke ({type(exc).__name__})") from exc
        if event.type == "input_json":
            text += event.partial_json
            await on_input(event.snapshot)
        elif event.type == "message_stop":
            return event.message, text


def _complete_claims(partial: object) -> list[Any]:
    """The claims of a partly written answer input that are complete: all but the last,
    which may still be being written, and only while each fits the claim schema."""
    claims = partial.get("claims") if isinstance(partial, dict) else None
    if not isinstance(claims, list):
        return []
    complete = []
    for claim in claims[:-1]:
        if schema_errors(claim, _CLAIM_SCHEMA):
            break
        complete.append(claim)
    return complete


def _drafts(claims: Sequence[Mapping[str, Any]], count: int) -> list[DraftClaim]:
    return [
        DraftClaim(c["statement"], c["quote"], c["chunk_id"], c["sub_question"])
        for c in claims
        if 0 <= c["sub_question"] < count
    ]


def _answer_blocks(state: AgentState) -> list[dict[str, Any]]:
    listed = "\n".join(f"{i}: {escape(q.text)}" for i, q in enumerate(state.sub_questions))
    return [
        _text(_evidence_block(state), cached=True),
        _text(f"Question: {escape(state.goal.standalone)}\nSub-questions:\n{listed}"),
    ]


def _status_kind(status: int) -> str:
    if status == 429:
        return "ratelimited"
    if status == 529:
        return "overloaded"
    return "5xx" if status >= 500 else "4xx"


class _Malformed(Exception):
    """Claude's answer could not be used."""


class _CutOff(Exception):
    """Claude's answer stopped at the token budget, unfinished."""


def _retry_after(exc: anthropic.APIStatusError) -> float | None:
    headers = exc.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return max(float(value) * scale, 0.0)
            except ValueError:
                return None
    return None


def _text(text: str, *, cached: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if cached:
        block["cache_control"] = {"type": "ephemeral"}
    return block


def _thread(goal: Goal) -> str:
    turns = "\n".join(
        f"{turn.role}: {escape(turn.text)}"
        + "".join(f"\n  claim: {escape(c.quote)}" for c in turn.claims)
        for turn in goal.history
    )
    return f"<thread>\n{turns}\n</thread>"


def _document(passage: Passage) -> dict[str, Any]:
    """A passage as one document per chunk it spans, so each quote has one chunk id."""
    parts = []
    for span in passage.spans:
        start = max(span.char_start - passage.char_start, 0)
        end = max(span.char_end - passage.char_start, start)
        parts.append(f"[chunk {span.chunk_id}]\n{passage.text[start:end]}")
    return {
        "chunk_id": ",".join(str(s.chunk_id) for s in passage.spans),
        "title": passage.title,
        "section": passage.heading,
        "updated": passage.updated_at.date().isoformat() if passage.updated_at else None,
        "text": "\n\n".join(parts) or passage.text,
    }


def _evidence_block(state: AgentState) -> str:
    lines = ["<evidence>"]
    for e in state.evidence:
        when = f' updated="{e.updated_at.date().isoformat()}"' if e.updated_at else ""
        lines.append(
            f'<quote chunk_id="{e.chunk_id}" sub_question="{e.sub_question}" '
            f'title="{escape(e.title)}"{when}>{escape(e.quote)}</quote>'
        )
    lines.append("</evidence>")
    return "\n".join(lines)


def _evidence(sub_question: int, quote: Mapping[str, Any], passage: Passage, step: int) -> Evidence:
    span = next(s for s in passage.spans if s.chunk_id == quote["chunk_id"])
    return Evidence(
        sub_question=sub_question,
        claim=quote["quote"],
        quote=quote["quote"],
        chunk_id=quote["chunk_id"],
        document_id=passage.document_id,
        title=passage.title,
        url=passage.url,
        uri=passage.uri,
        source=passage.source,
        collection=passage.collection,
        section=" > ".join(span.heading_path),
        updated_at=passage.updated_at,
        score=1.0 if quote["support"] == "strong" else 0.5,
        support=quote["support"],
        step=step,
    )
