"""The process's Prometheus metrics: one object, owned by the runtime, with a typed method
per thing worth counting.

The registry is this object's own (`CollectorRegistry`), never prometheus-client's
global one, so two runtimes in one process (tests) never share a counter. The desks of
bot/ call these methods; the libraries (agent/, store/, jobs/) never import prometheus:
where they have something to report they take a plain callback (`on_error=`), and
bot/ passes one of these methods. `/metrics` serves `exposition()`.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from agent.answer import Answer
from jobs.reindex import ReindexOutcome

CONTENT_TYPE = CONTENT_TYPE_LATEST

# Slack wants the ack within 3 s; the bot aims at 250 ms (bench/results/slack_load.md).
_ACK_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 3.0, 5.0)
_STAGE_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
_REINDEX_BUCKETS = (1, 5, 15, 60, 300, 900, 1800, 3600, 7200)

SLACK_ERROR_KINDS = ("ratelimited", "5xx", "other")


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self._ack = Histogram(
            "kb_slack_ack_seconds",
            "Time from receiving a Slack request to sending its ack (HTTP mode).",
            registry=r,
            buckets=_ACK_BUCKETS,
        )
        self._stage = Histogram(
            "kb_answer_stage_seconds",
            "Time an answer spent in each agent stage (plan, retrieve, read, judge, ...).",
            ["stage"],
            registry=r,
            buckets=_STAGE_BUCKETS,
        )
        self._answer = Histogram(
            "kb_answer_seconds",
            "Wall time of an answer, from its slot in the queue to the reply.",
            registry=r,
            buckets=_STAGE_BUCKETS,
        )
        self._answers = Counter(
            "kb_answers", "Answers given, by the agent's stop reason.", ["stop_reason"], registry=r
        )
        self._failures = Counter(
            "kb_answer_failures", "Questions that got the failure message.", registry=r
        )
        self._escalations = Counter("kb_escalations", "Questions handed to people.", registry=r)
        self._feedback = Counter("kb_feedback", "Votes on answers.", ["vote"], registry=r)
        self._reindex_runs = Counter(
            "kb_reindex_runs",
            "Reindex runs per source, by outcome (succeeded, partial, failed, skipped).",
            ["source", "outcome"],
            registry=r,
        )
        self._reindex_seconds = Histogram(
            "kb_reindex_seconds",
            "Duration of a source's reindex run.",
            ["source"],
            registry=r,
            buckets=_REINDEX_BUCKETS,
        )
        self._reindex_documents = Gauge(
            "kb_reindex_last_documents",
            "Documents of the last run of a source, by change (added, updated, ...).",
            ["source", "change"],
            registry=r,
        )
        self._reindex_chunks = Gauge(
            "kb_reindex_last_chunks",
            "Chunks of the last run of a source: embedded, reused, deleted.",
            ["source", "change"],
            registry=r,
        )
        self._queue = Gauge(
            "kb_slack_queue_depth", "Questions waiting for a run slot, all workspaces.", registry=r
        )
        self._slack_errors = Counter(
            "kb_slack_api_errors",
            "Slack Web API calls that failed, by kind (ratelimited, 5xx, other).",
            ["kind"],
            registry=r,
        )
        self._anthropic_errors = Counter(
            "kb_anthropic_errors",
            "Anthropic API calls that failed, by kind (timeout, connection, ratelimited, "
            "overloaded, 5xx, 4xx, malformed).",
            ["kind"],
            registry=r,
        )
        for kind in SLACK_ERROR_KINDS:
            self._slack_errors.labels(kind=kind)
        for vote in ("up", "down"):
            self._feedback.labels(vote=vote)

    # --- Slack ----------------------------------------------------------------------------

    def slack_acked(self, seconds: float) -> None:
        self._ack.observe(seconds)

    def slack_api_error(self, kind: str) -> None:
        self._slack_errors.labels(kind=kind if kind in SLACK_ERROR_KINDS else "other").inc()

    def watch_queue(self, depth: Callable[[], int]) -> None:
        """Read the queue depth from `depth` at every scrape."""
        self._queue.set_function(lambda: float(depth()))

    # --- answers --------------------------------------------------------------------------

    def answered(self, answer: Answer, *, seconds: float) -> None:
        self._answers.labels(stop_reason=answer.stop_reason).inc()
        self._answer.observe(seconds)
        for stage, ms in answer.timings_ms.items():
            self._stage.labels(stage=stage).observe(ms / 1000)

    def answer_failed(self) -> None:
        self._failures.inc()

    def escalated(self) -> None:
        self._escalations.inc()

    def voted(self, vote: int) -> None:
        self._feedback.labels(vote="up" if vote > 0 else "down").inc()

    def anthropic_error(self, kind: str) -> None:
        self._anthropic_errors.labels(kind=kind).inc()

    # --- the write flow -------------------------------------------------------------------

    def reindexed(self, outcome: ReindexOutcome, *, sources: list[str]) -> None:
        """One pass over `sources`: its outcome per source, durations and counts."""
        if outcome.skipped:
            for source in sources:
                self._reindex_runs.labels(source=source, outcome="skipped").inc()
            return
        for name in outcome.errors:
            self._reindex_runs.labels(source=name, outcome="failed").inc()
        for report in outcome.reports:
            if report.dry_run:
                continue
            status = "partial" if report.failures else "succeeded"
            self._reindex_runs.labels(source=report.source, outcome=status).inc()
            self._reindex_seconds.labels(source=report.source).observe(report.seconds)
            documents = {
                "added": report.documents_added,
                "updated": report.documents_updated,
                "unchanged": report.documents_unchanged,
                "deleted": report.documents_deleted,
                "failed": report.documents_failed,
            }
            for change, count in documents.items():
                self._reindex_documents.labels(source=report.source, change=change).set(count)
            chunks = {
                "embedded": report.chunks_embedded,
                "reused": report.chunks_reused,
                "deleted": report.chunks_deleted,
            }
            for change, count in chunks.items():
                self._reindex_chunks.labels(source=report.source, change=change).set(count)

    # --- exposition -----------------------------------------------------------------------

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
