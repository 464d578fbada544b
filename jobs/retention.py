"""The retention purge: stored runs and question text older than the retention period go.

What goes after `keep` (KB_RETENTION_DAYS):
- runs (agent_runs) nothing else refers to: deleted;
- runs only feedback refers to: kept for the vote, their text emptied (question, answer,
  steps, queries, sub-questions, sources, notes, the asker's user id);
- the answers posted in Slack (slack_answers: where and whom, with the question text),
  assistant-panel threads, and claimed delivery ids;
- the text of feedback comments (the vote itself stays).

What stays: escalations, whole, with their runs (the experts' answers become documents
built on the question; they are data that cannot be re-derived), and the votes.

Only one instance purges at a time (an advisory lock); another finds it taken and skips.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import asyncpg

from store.conversations import AssistantThreads, ConversationLog
from store.deliveries import DeliveryLog
from store.feedback import FeedbackRepository
from store.locks import RETENTION_LOCK_KEY, try_advisory_lock
from store.runs import RunRepository

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PurgeReport:
    cutoff: datetime
    runs_deleted: int
    runs_emptied: int
    answers_deleted: int
    assistant_threads_deleted: int
    deliveries_deleted: int
    comments_cleared: int


class RetentionJob:
    def __init__(self, *, pool: asyncpg.Pool, keep: timedelta) -> None:
        if keep <= timedelta(0):
            raise ValueError("keep must be positive (0 days means: do not schedule a purge)")
        self._pool = pool
        self._keep = keep

    async def run(self, *, now: datetime | None = None) -> PurgeReport | None:
        """Purge what is older than the retention period; None if another instance is."""
        cutoff = (now or datetime.now(UTC)) - self._keep
        async with try_advisory_lock(self._pool, RETENTION_LOCK_KEY) as acquired:
            if not acquired:
                log.info("another instance is purging; skipped", extra={"stage": "retention"})
                return None
            report = await self._purge(cutoff)
        log.info(
            "retention purge: %d runs deleted, %d emptied, %d answers, %d comments",
            report.runs_deleted,
            report.runs_emptied,
            report.answers_deleted,
            report.comments_cleared,
            extra={"stage": "retention"},
        )
        return report

    async def _purge(self, cutoff: datetime) -> PurgeReport:
        pool = self._pool
        # Answers first: they refer to runs (ON DELETE SET NULL), and hold the question.
        answers = await ConversationLog(pool).purge(before=cutoff)
        threads = await AssistantThreads(pool).purge(before=cutoff)
        deliveries = await DeliveryLog(pool).prune(older_than=datetime.now(UTC) - cutoff)
        comments = await FeedbackRepository(pool).purge_comments(before=cutoff)
        deleted, emptied = await RunRepository(pool).purge(before=cutoff)
        return PurgeReport(cutoff, deleted, emptied, answers, threads, deliveries, comments)
