"""A scripted Claude for benchmarks: the local fake of the Messages API (tests/agent/
fake_anthropic.py) answering every decision of a run the way a careful model would, with
the answer decision taking `answer_seconds` to write (spread over its streamed tokens, or
waited before the whole message when not streamed).

- route: search, the newest message as the standalone question;
- plan: the question as its one key sub-question;
- extract: the first sentence of each of the first three chunks shown, strong;
- judge: every sub-question asked about answered;
- rewrite: the sub-question again, with "policy" (only if the rules ask);
- answer: one claim per quote of the evidence (at most four), each statement the quote.
"""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from tests.agent.fake_anthropic import FakeAnthropic, Reply, running_fake

_CHUNK = re.compile(r"\[chunk (\d+)\]\n([^\n]+)")
_QUOTE = re.compile(r'<quote chunk_id="(\d+)" sub_question="(\d+)"[^>]*>([^<]*)</quote>')
_NEWEST = re.compile(r"Newest message: (.*)", re.S)
_QUESTION = re.compile(r"Question: ([^\n]*)")
_LISTED = re.compile(r"^(\d+): ", re.M)


def _texts(body: dict[str, Any]) -> list[str]:
    return [block["text"] for block in body["messages"][0]["content"]]


def _route(body: dict[str, Any]) -> dict[str, Any]:
    newest = _NEWEST.search(_texts(body)[-1])
    question = html.unescape(newest[1]) if newest else "help"
    return {"action": "search", "standalone_question": question}


def _plan(body: dict[str, Any]) -> dict[str, Any]:
    found = _QUESTION.search(_texts(body)[0])
    return {"sub_questions": [{"text": html.unescape(found[1]) if found else "?", "key": True}]}


def _extract(body: dict[str, Any]) -> dict[str, Any]:
    quotes = []
    for chunk_id, line in _CHUNK.findall(_texts(body)[0])[:3]:
        sentence = html.unescape(line).split(". ")[0].strip()
        if sentence:
            quotes.append({"chunk_id": int(chunk_id), "quote": sentence, "support": "strong"})
    return {"quotes": quotes}


def _judge(body: dict[str, Any]) -> dict[str, Any]:
    asked = _texts(body)[-1].split("Sub-questions:", 1)[-1]
    return {"answered": [int(i) for i in _LISTED.findall(asked)], "gaps": []}


def _rewrite(body: dict[str, Any]) -> dict[str, Any]:
    found = re.search(r"Sub-question: ([^\n]*)", _texts(body)[0])
    return {"query": (html.unescape(found[1]) if found else "leave") + " policy"}


def _answer(body: dict[str, Any]) -> dict[str, Any]:
    claims = []
    for chunk_id, sub_question, quote in _QUOTE.findall(_texts(body)[0])[:4]:
        text = html.unescape(quote)
        claims.append(
            {
                "statement": text,
                "quote": text,
                "chunk_id": int(chunk_id),
                "sub_question": int(sub_question),
            }
        )
    return {"claims": claims}


@asynccontextmanager
async def scripted_claude(*, answer_seconds: float) -> AsyncIterator[FakeAnthropic]:
    """The fake on an ephemeral port, answering every decision as the module says."""
    async with asynccontextmanager(running_fake)() as fake:
        for tool, reply in (
            ("route", _route),
            ("plan", _plan),
            ("extract", _extract),
            ("judge", _judge),
            ("rewrite", _rewrite),
        ):
            fake.always(tool, Reply(reply))
        fake.always("answer", Reply(_answer, seconds=answer_seconds))
        yield fake
