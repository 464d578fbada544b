"""Claude's own words held to the documents (issue 24, item 3), through the real SDK and
the local fake of the Messages API, over the handbook pages.

A statement is kept only if its quote says it (a faithful paraphrase), and one with an
invented number is dropped and counted; a "reply" that states a fact is searched
instead; "from thread" with nothing earlier to restate searches; a reply cut off at its
token budget is asked again with a larger one; and the tools and system prompt are one
cached prefix, re-read by every decision after the first.
"""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import anthropic
import pytest

from agent.reasoners.claude import ClaudeOptions, ClaudeReasoner
from agent.state import PlannedQuestion
from tests.agent.conftest import Built, all_quotes_stored
from tests.agent.fake_anthropic import MIN_CACHEABLE_TOKENS, FakeAnthropic, Reply, running_fake

QUESTION = "How much advanced sick leave can I request?"
SENTENCE = "You can request up to 240 hours of advanced sick leave."
PLAN = {"sub_questions": [{"text": "advanced sick leave amount", "key": True}]}
_QUOTE = re.compile(r'<quote chunk_id="(\d+)"[^>]*>([^<]*)</quote>')
_CHUNK = re.compile(r"\[chunk (\d+)\]\n")


@pytest.fixture
async def fake() -> AsyncIterator[FakeAnthropic]:
    async for running in running_fake():
        yield running


async def _no_wait(seconds: float) -> None:
    return None


def _reasoner(fake: FakeAnthropic) -> ClaudeReasoner:
    client = anthropic.AsyncAnthropic(api_key="test-key", base_url=fake.base_url, max_retries=0)
    return ClaudeReasoner(
        client=client, options=ClaudeOptions(model="claude-test", timeout=5.0), sleep=_no_wait
    )


def _extract_sentence(body: dict[str, Any]) -> dict[str, Any]:
    """Quote SENTENCE from the chunk that holds it, when it was shown."""
    documents = html.unescape(body["messages"][0]["content"][0]["text"])
    quotes = []
    for match in _CHUNK.finditer(documents):
        following = documents[match.end() :].split("[chunk ", 1)[0]
        if SENTENCE in following:
            quotes.append({"chunk_id": int(match[1]), "quote": SENTENCE, "support": "strong"})
    return {"quotes": quotes[:1]}


def _claims(*statements: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """An answer reply: one claim per statement, each citing the evidence's quote."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        evidence = body["messages"][0]["content"][0]["text"]
        chunk_id, quote = _QUOTE.search(evidence).groups()  # type: ignore[union-attr]
        return {
            "claims": [
                {
                    "statement": statement,
                    "quote": html.unescape(quote),
                    "chunk_id": int(chunk_id),
                    "sub_question": 0,
                }
                for statement in statements
            ]
        }

    return reply


def _script_search(fake: FakeAnthropic, *statements: str) -> None:
    fake.script("plan", Reply(PLAN))
    fake.script("extract", Reply(_extract_sentence))
    fake.script("answer", Reply(_claims(*statements)))


async def test_a_faithful_paraphrase_is_kept_and_the_prefix_is_cached_across_decisions(
    fake: FakeAnthropic, handbook: Built
) -> None:
    fake.script("route", Reply({"action": "search", "standalone_question": QUESTION}))
    _script_search(fake, "Up to 240 hours of advanced sick leave can be requested.")
    answer = await handbook.loop(reasoner=_reasoner(fake)).answer(QUESTION)
    assert [c.statement for c in answer.claims] == [
        "Up to 240 hours of advanced sick leave can be requested."
    ]
    assert answer.claims[0].quote == SENTENCE and not answer.escalate
    assert (answer.statements_written, answer.statements_dropped) == (1, 0)
    assert await all_quotes_stored(handbook.pool, answer)
    # Tools and system prompt: written to the cache by the first decision, read by every
    # later one although each forces another tool.
    assert [r.tool for r in fake.requests] == ["route", "plan", "extract", "answer"]
    first, *later = fake.usages
    assert first["cache_read_input_tokens"] == 0
    assert first["cache_creation_input_tokens"] >= MIN_CACHEABLE_TOKENS
    assert all(u["cache_read_input_tokens"] >= first["cache_creation_input_tokens"] for u in later)


async def test_a_paraphrase_with_an_invented_number_is_dropped_and_counted(
    fake: FakeAnthropic, handbook: Built
) -> None:
    fake.script("route", Reply({"action": "search", "standalone_question": QUESTION}))
    _script_search(
        fake,
        "You can request up to 320 hours of advanced sick leave.",  # the quote says 240
        "Advanced sick leave: up to 240 hours can be requested.",
    )
    loop = handbook.loop(reasoner=_reasoner(fake))
    answer = await loop.answer(QUESTION)
    assert [c.statement for c in answer.claims] == [
        "Advanced sick leave: up to 240 hours can be requested."
    ]
    assert (answer.statements_written, answer.statements_dropped) == (2, 1)
    assert answer.rejected_claims == 1
    stored = await handbook.runs.get(answer.run_id or 0)
    assert stored is not None
    assert stored.verification["statements_dropped"] == 1
    assert stored.verification["dropped"][0]["reason"] == "statement_not_in_quote"


async def test_a_reply_that_states_a_fact_is_searched_instead(
    fake: FakeAnthropic, handbook: Built
) -> None:
    fake.script(
        "route",
        Reply(
            {
                "action": "reply",
                "standalone_question": QUESTION,
                "reply": "You can request up to 300 hours.",
            }
        ),
    )
    _script_search(fake, SENTENCE)
    answer = await handbook.loop(reasoner=_reasoner(fake)).answer(QUESTION)
    assert answer.reply is None
    assert [c.quote for c in answer.claims] == [SENTENCE]
    assert [r.tool for r in fake.requests] == ["route", "plan", "extract", "answer"]
    stored = await handbook.runs.get(answer.run_id or 0)
    assert stored is not None and any("stated a fact" in n for n in stored.notes)


async def test_small_talk_stays_a_reply(fake: FakeAnthropic, handbook: Built) -> None:
    fake.script(
        "route",
        Reply({"action": "reply", "standalone_question": "thanks", "reply": "You're welcome!"}),
    )
    answer = await handbook.loop(reasoner=_reasoner(fake)).answer("thanks!")
    assert answer.reply == "You're welcome!" and not answer.claims
    assert [r.tool for r in fake.requests] == ["route"]


async def test_from_thread_with_no_earlier_answer_falls_back_to_a_search(
    fake: FakeAnthropic, handbook: Built
) -> None:
    fake.script("route", Reply({"action": "from_thread", "standalone_question": QUESTION}))
    _script_search(fake, SENTENCE)
    answer = await handbook.loop(reasoner=_reasoner(fake)).answer(QUESTION)
    assert [c.quote for c in answer.claims] == [SENTENCE]
    assert [r.tool for r in fake.requests] == ["route", "plan", "extract", "answer"]


async def test_a_reply_cut_off_at_its_budget_is_asked_again_once_with_a_larger_one(
    fake: FakeAnthropic,
) -> None:
    fake.script("plan", Reply({"sub_questions": []}, stop_reason="max_tokens"), Reply(PLAN))
    planned = await _reasoner(fake).decompose(QUESTION)
    assert planned == [PlannedQuestion("advanced sick leave amount", True)]
    assert [r.body["max_tokens"] for r in fake.requests] == [400, 800]


async def test_the_fake_reads_the_cache_only_when_the_prefix_repeats(
    fake: FakeAnthropic,
) -> None:
    client = anthropic.AsyncAnthropic(api_key="k", base_url=fake.base_url, max_retries=0)
    fake.script("t", *[Reply({}) for _ in range(3)])
    tool = {"name": "t", "description": "x", "input_schema": {"type": "object"}}

    async def ask(system: str) -> None:
        await client.messages.create(
            model="m",
            max_tokens=10,
            system=[{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
            tools=[tool],  # type: ignore[list-item]
            tool_choice={"type": "tool", "name": "t"},
            messages=[{"role": "user", "content": "q"}],
        )

    long = "Rules. " * 800  # over the minimum cacheable length
    await ask(long)
    await ask(long)
    await ask(long + "changed")
    reads = [u["cache_read_input_tokens"] for u in fake.usages]
    writes = [u["cache_creation_input_tokens"] for u in fake.usages]
    assert reads[0] == 0 and writes[0] > 0
    assert reads[1] == writes[0] and writes[1] == 0
    assert reads[2] == 0 and writes[2] > 0
