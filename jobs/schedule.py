"""The reindex schedule: one APScheduler job per scheduled source, on the running event loop.

Deliberate settings: `coalesce=True` (a backlog of missed runs — the laptop slept, the
process was busy — collapses into one run, since a reindex catches up on everything
anyway); `max_instances=1` (a slow run is never overlapped by the next tick in this
process; the advisory lock covers other processes); `misfire_grace_time` of half the
interval, capped at an hour (a run that is late by less still happens, a run that is
later waits for the next tick rather than piling up).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from jobs.config import SourceConfig

RunSource = Callable[[SourceConfig], Awaitable[object]]

_MAX_GRACE = timedelta(hours=1)
_CRON_GRACE = timedelta(minutes=10)


def build_scheduler(
    configs: Sequence[SourceConfig], *, run_source: RunSource, run_at_start: bool = True
) -> AsyncIOScheduler:
    """A scheduler (not started) with one job per source that has a schedule."""
    scheduler = AsyncIOScheduler(timezone=UTC)
    for config in configs:
        trigger, grace = _trigger(config)
        if trigger is None:
            continue
        scheduler.add_job(
            run_source,
            trigger,
            args=[config],
            id=f"reindex:{config.name}",
            name=f"reindex {config.name}",
            coalesce=True,
            max_instances=1,
            misfire_grace_time=max(1, int(grace.total_seconds())),
            next_run_time=datetime.now(UTC) if run_at_start else None,
        )
    return scheduler


def _trigger(config: SourceConfig) -> tuple[IntervalTrigger | CronTrigger | None, timedelta]:
    if config.schedule.cron:
        return CronTrigger.from_crontab(config.schedule.cron, timezone=UTC), _CRON_GRACE
    if config.schedule.every:
        grace = min(config.schedule.every / 2, _MAX_GRACE)
        return IntervalTrigger(seconds=config.schedule.every.total_seconds()), grace
    return None, timedelta(0)
