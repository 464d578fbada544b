from __future__ import annotations

import asyncio

from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from jobs.config import DirectorySettings, DirectorySourceConfig, SourceConfig
from jobs.schedule import build_scheduler


def _config(name: str, every: str | None = None, cron: str | None = None) -> SourceConfig:
    return DirectorySourceConfig(
        name=name, every=every, cron=cron, settings=DirectorySettings(root="docs")
    )


async def test_each_scheduled_source_gets_one_coalescing_job_and_unscheduled_ones_none() -> None:
    async def run(config: SourceConfig) -> None: ...

    scheduler = build_scheduler(
        [
            _config("a", every="2h"),
            _config("b", cron="0 6 * * 1-5"),
            _config("c"),
        ],
        run_source=run,
        run_at_start=False,
    )
    jobs = {job.id: job for job in scheduler.get_jobs()}
    assert sorted(jobs) == ["reindex:a", "reindex:b"]
    assert isinstance(jobs["reindex:a"].trigger, IntervalTrigger)
    assert isinstance(jobs["reindex:b"].trigger, CronTrigger)
    for job in jobs.values():
        assert job.coalesce is True and job.max_instances == 1
    assert jobs["reindex:a"].misfire_grace_time == 3600


async def test_a_started_scheduler_runs_the_source_on_the_event_loop() -> None:
    ran: list[str] = []
    done = asyncio.Event()

    async def run(config: SourceConfig) -> None:
        ran.append(config.name)
        done.set()

    scheduler = build_scheduler([_config("a", every="1h")], run_source=run)
    scheduler.start()
    try:
        await asyncio.wait_for(done.wait(), timeout=10)
    finally:
        scheduler.shutdown(wait=False)
    assert ran == ["a"]
