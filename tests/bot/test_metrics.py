"""The metrics object: Claude's errors by kind reach it through the callback the
composition root gives the reasoner, and each Metrics owns its registry."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from agent.errors import ReasonerUnavailable
from bot.claude import claude_reasoner
from bot.metrics import Metrics
from bot.settings import Settings
from tests.agent.fake_anthropic import FakeAnthropic, Reply, running_fake

PLAN = {"sub_questions": [{"text": "annual leave", "key": True}]}


@pytest.fixture
async def fake() -> AsyncIterator[FakeAnthropic]:
    async for running in running_fake():
        yield running


def _errors(metrics: Metrics) -> dict[str, float]:
    return {
        s.labels["kind"]: s.value
        for family in text_string_to_metric_families(metrics.exposition().decode())
        if family.name == "kb_anthropic_errors"
        for s in family.samples
        if s.name == "kb_anthropic_errors_total"
    }


async def test_claude_errors_are_counted_by_kind(fake: FakeAnthropic) -> None:
    metrics = Metrics()
    settings = Settings(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake.base_url)
    reasoner = claude_reasoner(settings, on_error=metrics.anthropic_error)
    fake.script("plan", Reply(status=429, headers={"retry-after": "0"}), Reply(PLAN))
    await reasoner.decompose("How much annual leave do I earn?")
    fake.script("plan", Reply(status=529), Reply(status=529))
    with pytest.raises(ReasonerUnavailable):
        await reasoner.decompose("How much annual leave do I earn?")
    fake.script("plan", Reply({"wrong": 1}), Reply(PLAN))
    await reasoner.decompose("How much annual leave do I earn?")
    assert _errors(metrics) == {"ratelimited": 1, "overloaded": 2, "malformed": 1}


def test_two_metrics_objects_never_share_a_counter() -> None:
    first, second = Metrics(), Metrics()
    first.escalated()
    assert b"kb_escalations_total 1.0" in first.exposition()
    assert b"kb_escalations_total 0.0" in second.exposition()
