"""Claude's answer streamed (issue 20, "Measured"): each claim is grounded and handed to
`on_claim` as soon as Claude has written it, through the real SDK and the local fake of
the Messages API speaking server-sent events, over the handbook pages.

An invented quote in the stream is never handed over; the answer is the one the same
reply gives without streaming; a stream that breaks is asked again once without
streaming, and a second failure hands the run to the extractive reasoner.
"""

from __future__ import annotations

import dataclasses
import html
import re
import time
from collections.abc import AsyncIterator
from typing import Any, Literal

import anthropic
import pytest

from agent.answer import Answer, Citation, Claim
from agent.reasoners.claude import ClaudeOptions, ClaudeReasoner
from tests.agent.conftest import Built, all_quotes_stored
from tests.agent.fake_anthropic import FakeAnthropic, Reply, running_fake

QUESTION = "How much annual leave do I earn?"
PLAN = {"sub_questions": [{"text": "annual leave", "key": True}]}
INVENTED = "Every employee gets unlimited paid leave."
_CHUNK = re.compile(r"\[chunk (\d+)\]\n([^\n]+)")
_QUOTE = re.compile(r'<quote chunk_id="(\d+)"[^>]*>([^<]*)</quote>')


@pytest.fixture
async def fake() -> AsyncIterator[FakeAnthropic]:
    async for running in running_fake():
        yield running


async def _no_wait(seconds: float) -> None:
    return None


def _reasoner(fake: FakeAnthropic, *, stream: bool = True) -> ClaudeReasoner:
    client = anthropic.AsyncAnthropic(api_key="test-key", base_url=fake.base_url, max_retries=0)
    options = ClaudeOptions(model="claude-test", timeout=5.0, stream_answers=stream)
    return ClaudeReasoner(client=client, options=options, sleep=_no_wait)


def _first_sentences(body: dict[str, Any]) -> dict[str, Any]:
    """An extract reply quoting the first sentence of each of the first two chunks shown."""
    documents = body["messages"][0]["content"][0]["text"]
    quotes = []
    for chunk_id, line in _CHUNK.findall(documents)[:2]:
        sentence = html.unescape(line).split(". ")[0].rstrip(".") + "."
        quotes.append({"chunk_id": int(chunk_id), "quote": sentence, "support": "strong"})
    return {"quotes": quotes}


def _true_invented_true(body: dict[str, Any]) -> dict[str, Any]:
    """An answer: the first evidence quote, an invented one, then the last evidence quote."""
    evidence = body["messages"][0]["content"][0]["text"]
    found = [(int(c), html.unescape(q)) for c, q in _QUOTE.findall(evidence)]
    (first_chunk, first), (last_chunk, last) = found[0], found[-1]

    def claim(quote: str, chunk_id: int) -> dict[str, Any]:
        return {"statement": quote, "quote": quote, "chunk_id": chunk_id, "sub_question": 0}

    return {
        "claims": [claim(first, first_chunk), claim(INVENTED, first_chunk), claim(last, last_chunk)]
    }


def _script_search(fake: FakeAnthropic) -> None:
    fake.script("route", Reply({"action": "search", "standalone_question": "annual leave"}))
    fake.script("plan", Reply(PLAN))
    fake.always("extract", Reply(_first_sentences))
    fake.always("judge", Reply({"answered": [0], "gaps": []}))


class Handed:
    """`on_claim`, recording each claim with when it was handed over."""

    def __init__(self) -> None:
        self.claims: list[tuple[float, Claim, Citation]] = []

    async def __call__(self, claim: Claim, citation: Citation) -> None:
        self.claims.append((time.monotonic(), claim, citation))

    def pairs(self) -> list[tuple[Claim, Citation]]:
        return [(claim, citation) for _, claim, citation in self.claims]


def _sent_at(fake: FakeAnthropic, event: str) -> float:
    (answer,) = [r for r in fake.requests if r.tool == "answer"]
    return next(s.at for s in answer.sent if s.event == event)


def _same(answer: Answer) -> Answer:
    """The answer without what differs from one run to the next (its id, its timings)."""
    return dataclasses.replace(answer, run_id=None, timings_ms={})


def _as_shown(answer: Answer) -> list[tuple[Claim, Citation]]:
    return [(c, answer.citation(c.citation)) for c in answer.claims]


async def test_each_claim_is_handed_over_grounded_while_the_answer_is_still_streaming(
    fake: FakeAnthropic, handbook: Built
) -> None:
    _script_search(fake)
    fake.script("answer", Reply(_true_invented_true, seconds=0.6))
    handed = Handed()
    answer = await handbook.loop(reasoner=_reasoner(fake)).answer(QUESTION, on_claim=handed)
    assert len(answer.claims) == 2 and answer.rejected_claims == 1
    assert await all_quotes_stored(handbook.pool, answer)
    # Handed over: the answer's claims, numbered as the answer numbers them, each once;
    # never the invented quote.
    assert handed.pairs() == _as_shown(answer)
    assert all(INVENTED not in claim.quote for _, claim, _ in handed.claims)
    # The first claim was handed over before Claude had finished writing the answer.
    first_at = handed.claims[0][0]
    assert first_at < _sent_at(fake, "content_block_stop") < _sent_at(fake, "message_stop")
    (request,) = [r for r in fake.requests if r.tool == "answer"]
    assert request.body["stream"] is True


async def test_a_streamed_answer_is_the_answer_the_same_reply_gives_unstreamed(
    fake: FakeAnthropic, handbook: Built
) -> None:
    answers = []
    for stream in (True, False):
        _script_search(fake)
        fake.script("answer", Reply(_true_invented_true, seconds=0.2))
        handed = Handed()
        loop = handbook.loop(reasoner=_reasoner(fake, stream=stream))
        answer = await loop.answer(QUESTION, on_claim=handed)
        assert handed.pairs() == _as_shown(answer)
        answers.append(answer)
    streamed, unstreamed = answers
    assert streamed.claims and _same(streamed) == _same(unstreamed)
    bodies = [r.body for r in fake.requests if r.tool == "answer"]
    assert [b.get("stream", False) for b in bodies] == [True, False]
    runs = [await handbook.runs.get(a.run_id or 0) for a in answers]
    assert runs[0] is not None and runs[1] is not None
    assert runs[0].verification == runs[1].verification


@pytest.mark.parametrize("broken", ["error", "malformed", "cut"])
async def test_a_stream_that_breaks_is_asked_again_once_without_streaming(
    fake: FakeAnthropic, handbook: Built, broken: Literal["error", "malformed", "cut"]
) -> None:
    _script_search(fake)
    fake.script(
        "answer",
        Reply(_true_invented_true, broken=broken),
        Reply(_true_invented_true),
    )
    handed = Handed()
    answer = await handbook.loop(reasoner=_reasoner(fake)).answer(QUESTION, on_claim=handed)
    assert len(answer.claims) == 2 and answer.rejected_claims == 1
    assert handed.pairs() == _as_shown(answer)  # a claim streamed before the break: once
    bodies = [r.body for r in fake.requests if r.tool == "answer"]
    assert [b.get("stream", False) for b in bodies] == [True, False]
    stored = await handbook.runs.get(answer.run_id or 0)
    assert stored is not None and not any("took over" in n for n in stored.notes)


async def test_a_broken_stream_then_an_overloaded_api_hands_the_answer_to_the_extractive_reasoner(
    fake: FakeAnthropic, handbook: Built
) -> None:
    _script_search(fake)
    fake.script("answer", Reply(_true_invented_true, broken="cut"), Reply(status=529))
    handed = Handed()
    answer = await handbook.loop(reasoner=_reasoner(fake)).answer(QUESTION, on_claim=handed)
    assert answer.claims and await all_quotes_stored(handbook.pool, answer)
    assert handed.claims and all(INVENTED not in c.quote for _, c, _ in handed.claims)
    stored = await handbook.runs.get(answer.run_id or 0)
    assert stored is not None
    assert any("claude was unavailable" in n and "extractive took over" in n for n in stored.notes)
