"""/healthz is liveness, /readyz says check by check whether to send traffic, and /metrics
counts what the bot did, all over real HTTP against the real composition."""

from __future__ import annotations

import copy

import aiohttp
import asyncpg
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from prometheus_client.parser import text_string_to_metric_families

from bot.server import build_http_app
from bot.slack.access.config import BotOptions
from bot.slack.render import action_ids as ids
from store.index_runs import IndexRunRepository
from tests.bot.slack.conftest import runtime_on
from tests.bot.slack.rig import GatedAnswerer, button_click, buttons, feedback_click, mention
from tests.conftest import with_database

QUESTION = "How do I request annual leave?"


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus exposition, keyed by name and sorted labels."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


async def _get(http: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    async with http.get(url) as response:
        return response.status, await response.text()


async def _serve(runtime, **kwargs):
    from aiohttp import web

    runner = web.AppRunner(build_http_app(runtime, **kwargs))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}"


async def _readyz(http, base) -> tuple[int, dict[str, bool]]:
    async with http.get(f"{base}/readyz") as response:
        body = await response.json()
    return response.status, {c["name"]: c["ok"] for c in body["checks"]}


async def test_readyz_fails_until_every_check_holds_and_names_the_one_that_does_not(
    corpus, embedder, pg_server
):
    runtime = await runtime_on(corpus, embedder)
    scheduler = AsyncIOScheduler()
    runner, base = await _serve(
        runtime, scheduler_running=lambda: bool(scheduler.running), reindex_scheduled=True
    )
    runs = IndexRunRepository(corpus)
    try:
        async with aiohttp.ClientSession() as http:
            status, checks = await _readyz(http, base)
            assert status == 503
            assert checks == {
                "database": True,
                "migrations": True,
                "model": True,
                "keyword_index": False,
                "scheduler": False,
                "last_reindex": False,
            }
            await runtime.keyword_search.refresh()
            scheduler.start()
            run = await runs.start(source="hr-docs")
            await runs.finish(run, status="succeeded", counts={}, failures=[])
            assert (await _readyz(http, base))[0] == 200

            # The last successful reindex is older than KB_READY_MAX_REINDEX_AGE (48 h).
            await corpus.execute("UPDATE index_runs SET finished_at = now() - interval '49 h'")
            status, checks = await _readyz(http, base)
            assert status == 503 and not checks["last_reindex"]
            await corpus.execute("UPDATE index_runs SET finished_at = now()")

            # A migration this code ships is missing from the database.
            await corpus.execute("DELETE FROM schema_migrations WHERE version = 5")
            status, checks = await _readyz(http, base)
            assert status == 503 and not checks["migrations"] and checks["database"]
            await corpus.execute("INSERT INTO schema_migrations (version, name) VALUES (5, 'x')")
            assert (await _readyz(http, base))[0] == 200
    finally:
        scheduler.shutdown(wait=False)
        await runner.cleanup()
        await runtime.keyword_search.close()


async def test_healthz_stays_200_when_the_database_is_gone_and_readyz_says_so(pg_server, embedder):
    name = "t_health_gone"
    admin = await asyncpg.connect(pg_server.dsn)
    await admin.execute(f'CREATE DATABASE "{name}"')
    from store.database import open_pool

    pool = await open_pool(with_database(pg_server.dsn, name), max_size=2)
    runtime = await runtime_on(pool, embedder)
    runner, base = await _serve(runtime, scheduler_running=lambda: True)
    try:
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        async with aiohttp.ClientSession() as http:
            assert (await _get(http, f"{base}/healthz"))[0] == 200
            status, checks = await _readyz(http, base)
        assert status == 503
        assert checks["database"] is False and checks["migrations"] is False
    finally:
        await runner.cleanup()
        await runtime.keyword_search.close()
        pool.terminate()
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def test_metrics_count_acks_answers_stages_feedback_escalations_and_slack_errors(
    start_bot, fake_slack
):
    bot = await start_bot(options=BotOptions(escalation_channel="CESC", always_escalate=True))
    metrics_url = bot.url.replace("/slack/events", "/metrics")
    # Slack rate-limits the first placeholder and fails the first update with a 503.
    fake_slack.script(
        "chat.postMessage", status=429, body={"ok": False, "error": "ratelimited"},
        **{"Retry-After": "0"},
    )  # fmt: skip
    fake_slack.script("chat.update", status=503, body={"ok": False, "error": "unavailable"})
    ts = "1700000600.000001"
    await bot.sender.event(mention(QUESTION, ts=ts, event_id="EvMetrics"))
    await bot.idle()
    reply = copy.deepcopy(next(m for m in fake_slack.messages["C111"] if m.get("thread_ts") == ts))
    vote = feedback_click(
        message=reply, user="W222", positive=True, response_url=fake_slack.hook_url()
    )
    escalate = button_click(
        button=buttons(reply["blocks"])[ids.ESCALATE],
        user="W222",
        channel="C111",
        message=reply,
        response_url=fake_slack.hook_url(),
    )
    for click in (vote, escalate):
        assert (await bot.sender.interaction(click)).status == 200
        await bot.idle()
    async with aiohttp.ClientSession() as http, http.get(metrics_url) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        found = samples(await response.text())
    assert found[("kb_slack_ack_seconds_count", ())] == 3  # the mention and two clicks
    (stop_reason,) = [
        labels for name, labels in found if name == "kb_answers_total" and found[(name, labels)]
    ]
    assert stop_reason[0][0] == "stop_reason"
    assert found[("kb_answer_seconds_count", ())] == 1
    stages = {
        dict(labels)["stage"] for name, labels in found if name == "kb_answer_stage_seconds_count"
    }
    assert {"plan", "retrieve"} <= stages
    assert found[("kb_feedback_total", (("vote", "up"),))] == 1
    assert found[("kb_feedback_total", (("vote", "down"),))] == 0
    assert found[("kb_escalations_total", ())] == 1
    assert found[("kb_slack_api_errors_total", (("kind", "ratelimited"),))] == 1
    assert found[("kb_slack_api_errors_total", (("kind", "5xx"),))] == 1
    assert found[("kb_slack_queue_depth", ())] == 0


async def test_the_queue_depth_gauge_shows_questions_waiting_for_a_slot(start_bot, fake_slack):
    agents: list[GatedAnswerer] = []

    def gated(runtime):
        agents.append(GatedAnswerer(runtime.answerer()))
        return agents[-1]

    bot = await start_bot(answerer=gated, options=BotOptions(runs_per_workspace=1))
    for n in (1, 2):
        await bot.sender.event(mention(QUESTION, ts=f"170000070{n}.000001", event_id=f"EvQ{n}"))
    await agents[0].started.wait()
    # The second question's placeholder shows its place in the queue once it waits.
    await fake_slack.wait_for(
        "chat.postMessage", where=lambda c: "in the queue" in str(c.params.get("text"))
    )
    async with aiohttp.ClientSession() as http:
        waiting = samples((await _get(http, bot.url.replace("/slack/events", "/metrics")))[1])
    agents[0].gate.set()
    await bot.idle()
    assert waiting[("kb_slack_queue_depth", ())] == 1
    async with aiohttp.ClientSession() as http:
        after = samples((await _get(http, bot.url.replace("/slack/events", "/metrics")))[1])
    assert after[("kb_slack_queue_depth", ())] == 0
