"""Postgres stopped and restarted under a running `kb serve`, mid-answer and mid-reindex.

A dedicated embedded Postgres (store/embedded.py) in the test's folder, so the session's
server is untouched; stopped with pg_ctl's fast shutdown (every session cut) and
started again on the same data folder. Meanwhile `kb serve` is a real process:

- a question is mid-answer: its first Claude decision is held open by the fake Anthropic
  API until the database is down, then the run continues and meets the outage; the
  asker gets one plain line naming the run, and the outcome the database missed is
  recorded once it is back (so the question's lease never runs out into a re-run);
- a reindex is mid-pass: 40 documents changed just before, their embeddings being
  written when the server stops.

After the restart, without restarting `kb serve`: the next question is answered (the
asyncpg pool replaces its dead connections), the next scheduled pass completes the
reindex, and the index holds each document once, at its new version, with no
duplicate chunks.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import asyncpg
import pytest
from aiohttp import web

from store.embedded import EmbeddedPostgres, start_embedded_postgres
from tests.agent.fake_anthropic import FakeAnthropic
from tests.bot.slack.processes import FIXTURE_KB, ServeProcess, serve_env, sources_file
from tests.bot.slack.rig import Call, FakeSlack, mention

FILLERS = 40


class HoldingAnthropic(FakeAnthropic):
    """Holds the first request that mentions `words` until released; the rest get the
    fake's answer for nothing scripted (HTTP 500), so the extractive reasoner takes over."""

    words = "annual leave"

    def __init__(self) -> None:
        super().__init__()
        self.held = asyncio.Event()

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        if not self.held.is_set() and self.words in json.dumps(await request.json()):
            self.held.set()
            await self._release.wait()
        return await super()._messages(request)


@pytest.fixture
async def anthropic_api() -> AsyncIterator[HoldingAnthropic]:
    fake = HoldingAnthropic()
    async for _ in _serve(fake):
        yield fake


async def _serve(fake: FakeAnthropic) -> AsyncIterator[None]:
    from aiohttp.test_utils import TestServer

    server = TestServer(fake.app(), port=0)
    await server.start_server()
    fake.server = server
    try:
        yield
    finally:
        fake.release()
        await server.close()


def write_fillers(root: Path, *, version: int) -> None:
    for d in range(FILLERS):
        text = "\n\n".join(
            " ".join(f"Filler {d}.{p}.{s} (version {version}) covers step {s}." for s in range(12))
            for p in range(4)
        )
        (root / f"filler{d:02}.md").write_text(f"# Filler {d}\n\n{text}\n")


async def poll(dsn: str, query: str, *args: object, timeout: float = 240) -> None:
    """Until `query` returns true; the database may be down meanwhile (a fresh connection
    each time). Polled: the work is another process's."""
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        try:
            conn = await asyncpg.connect(dsn)
            try:
                if await conn.fetchval(query, *args):
                    return
            finally:
                await conn.close()
        except (OSError, asyncpg.PostgresError):
            pass
        await asyncio.sleep(0.1)
    raise AssertionError(f"timed out on: {query}")


def _is_answer(call: Call) -> bool:
    return (call.params.get("metadata") or {}).get("event_type") == "kb_answer"


def _answers(fake: FakeSlack) -> list[Call]:
    return [c for c in fake.calls_to("chat.update") if _is_answer(c)]


async def _serve_fixture_kb(
    tmp_path: Path, fake_slack: FakeSlack
) -> tuple[EmbeddedPostgres, dict[str, str], ServeProcess]:
    """An embedded Postgres in tmp_path and `kb serve` on it over the fixture knowledge
    base (the start-up of both outage tests)."""
    database = await start_embedded_postgres(tmp_path / "pg")
    env = serve_env(
        database_url=database.dsn, home=tmp_path / "home", slack_url=fake_slack.base_url,
        sources=sources_file(tmp_path / "sources.toml", root=FIXTURE_KB),
    )  # fmt: skip
    return database, env, await ServeProcess.start(env, log=tmp_path / "serve.log")


def _assert_each_answered_once(
    fake_slack: FakeSlack, answers: list[Call], threads: list[str]
) -> None:
    assert all("HRLinks" in json.dumps(a.params["blocks"]) for a in answers)
    placeholders = fake_slack.calls_to("chat.postMessage")
    assert sorted(p.params["thread_ts"] for p in placeholders) == threads  # one each
    assert len(_answers(fake_slack)) == len(threads)  # and no duplicates


async def test_kb_serve_answers_and_reindexes_again_after_postgres_restarts_under_it(
    fake_slack: FakeSlack, anthropic_api: HoldingAnthropic, tmp_path: Path
) -> None:
    data = tmp_path / "pg"
    database: EmbeddedPostgres = await start_embedded_postgres(data)
    dsn = database.dsn
    corpus = tmp_path / "kb"
    shutil.copytree(FIXTURE_KB, corpus)
    write_fillers(corpus, version=1)
    env = serve_env(
        database_url=dsn, home=tmp_path / "home", slack_url=fake_slack.base_url,
        sources=sources_file(tmp_path / "sources.toml", root=corpus, every="1s"),
        ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=anthropic_api.base_url,
        KB_ANTHROPIC_TIMEOUT="5", KB_SLACK_LEASE="3", KB_SLACK_SWEEP_EVERY="0.5",
    )  # fmt: skip
    serve = await ServeProcess.start(env, log=tmp_path / "serve.log")
    try:
        async with aiohttp.ClientSession() as http:
            await serve.wait_healthy(http)
            await poll(dsn, "SELECT count(*) > 0 FROM index_runs WHERE status = 'succeeded'")
            write_fillers(corpus, version=2)
            await poll(
                dsn,
                "SELECT count(*) > 0 FROM documents WHERE text LIKE '%(version 2)%'",
            )  # the pass over the changed documents is writing them
            sender = serve.sender(http)
            asked = mention("How do I request annual leave?", ts="1700001100.000001",
                            event_id="EvOutage")  # fmt: skip
            assert (await sender.event(asked)).status == 200
            await asyncio.wait_for(anthropic_api.held.wait(), 60)  # mid-answer
            database.stop()  # pg_ctl stop (fast): every session is cut
            anthropic_api.release()
            (failure,) = await fake_slack.wait_for("chat.update", timeout=120)
            database = await start_embedded_postgres(data)
            assert database.dsn == dsn
            await poll(
                dsn,
                """SELECT count(*) = $1 FROM documents WHERE text LIKE '%(version 2)%'""",
                FILLERS,
            )
            await poll(
                dsn,
                """SELECT status = 'succeeded' FROM index_runs
                   ORDER BY started_at DESC LIMIT 1""",
            )
            again = mention("How do I request annual leave?", ts="1700001101.000001",
                            event_id="EvAfter")  # fmt: skip
            assert (await sender.event(again)).status == 200
            (answer,) = await fake_slack.wait_for(
                "chat.update",
                where=_is_answer,
                timeout=120,
            )
            # The failed question's outcome, missed by the database, is recorded once it
            # is back (its lease kept meanwhile), so no sweep re-runs it.
            await poll(
                dsn,
                "SELECT outcome = 'failed' AND runs = 1 FROM slack_deliveries WHERE key = $1",
                "message:C111:1700001100.000001",
            )
            await poll(
                dsn,
                "SELECT count(*) = 0 FROM slack_deliveries"
                " WHERE reply_channel IS NOT NULL AND finished_at IS NULL",
            )
    finally:
        code = await serve.stop()
        output = serve.output()
    try:
        assert code == 0, output[-3000:]
        assert "Sorry, something went wrong" in failure.params["text"]
        run_id = await _run_of(dsn, "1700001100.000001")
        assert f"(run {run_id})" in failure.params["text"]
        assert "HRLinks" in json.dumps(answer.params["blocks"])
        assert len(_answers(fake_slack)) == 1
        assert len(fake_slack.calls_to("chat.postMessage")) == 2  # one placeholder each
        conn = await asyncpg.connect(dsn)
        try:
            assert await conn.fetchval("SELECT count(*) FROM documents") == 3 + FILLERS
            assert (
                await conn.fetchval(
                    """SELECT count(*) FROM (SELECT document_id, ordinal FROM chunks
                   GROUP BY 1, 2 HAVING count(*) > 1) d"""
                )
                == 0
            )
            assert (
                await conn.fetchval(
                    """SELECT count(*) FROM documents d
                   WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.document_id = d.id)"""
                )
                == 0
            )
            assert (
                await conn.fetchval("SELECT count(*) FROM index_runs WHERE status = 'running'") == 0
            )
        finally:
            await conn.close()
    finally:
        database.stop()


async def _run_of(dsn: str, thread_ts: str) -> int:
    conn = await asyncpg.connect(dsn)
    try:
        return await conn.fetchval(
            "SELECT id FROM agent_runs WHERE origin->>'thread' = $1", thread_ts
        )
    finally:
        await conn.close()


async def test_questions_asked_while_postgres_is_down_are_answered_once_when_it_is_back(
    fake_slack: FakeSlack, tmp_path: Path
) -> None:
    database, _, serve = await _serve_fixture_kb(tmp_path, fake_slack)
    data, dsn = tmp_path / "pg", database.dsn
    threads = [f"1700001200.00000{n}" for n in range(3)]
    try:
        async with aiohttp.ClientSession() as http:
            await serve.wait_healthy(http)
            await poll(dsn, "SELECT count(*) > 0 FROM index_runs WHERE status = 'succeeded'")
            database.stop()
            sender = serve.sender(http)
            for n, ts in enumerate(threads):
                asked = mention("How do I request annual leave?", ts=ts, event_id=f"EvDown{n}")
                assert (await sender.event(asked)).status == 200
            # Acked while the database is down, one of them delivered twice (a retry).
            retried = mention("How do I request annual leave?", ts=threads[0], event_id="EvDown0")
            assert (await sender.event(retried, retry_num=1)).status == 200
            assert fake_slack.calls_to("chat.postMessage") == []  # nothing can be claimed yet
            database = await start_embedded_postgres(data)
            answers = await fake_slack.wait_for(
                "chat.update",
                count=3,
                where=_is_answer,
                timeout=180,
            )
            await poll(
                dsn,
                "SELECT count(*) = 3 FROM slack_deliveries WHERE outcome = 'answered'",
            )
    finally:
        code = await serve.stop()
        output = serve.output()
    try:
        assert code == 0, output[-3000:]
        _assert_each_answered_once(fake_slack, answers, threads)
    finally:
        database.stop()


async def test_questions_acked_during_an_outage_survive_the_process_being_killed(
    fake_slack: FakeSlack, tmp_path: Path
) -> None:
    """The process that acked them dies before the database is back; the next process on
    the same disk (KB_HOME) answers them from its journal, each once."""
    database, env, serve = await _serve_fixture_kb(tmp_path, fake_slack)
    data, dsn = tmp_path / "pg", database.dsn
    threads = [f"1700001300.00000{n}" for n in range(3)]
    journal = tmp_path / "home" / "slack-journal"
    try:
        async with aiohttp.ClientSession() as http:
            await serve.wait_healthy(http)
            await poll(dsn, "SELECT count(*) > 0 FROM index_runs WHERE status = 'succeeded'")
            database.stop()
            sender = serve.sender(http)
            for n, ts in enumerate(threads):
                asked = mention("How do I request annual leave?", ts=ts, event_id=f"EvKill{n}")
                assert (await sender.event(asked)).status == 200
            for _ in range(200):  # the claims meet the outage and keep the requests on disk
                if len(list(journal.glob("*.json"))) == 3:
                    break
                await asyncio.sleep(0.05)  # polling another process's files
            assert len(list(journal.glob("*.json"))) == 3
            await serve.kill()
            database = await start_embedded_postgres(data)
            serve = await ServeProcess.start(env, log=tmp_path / "serve-again.log")
            await serve.wait_healthy(http)
            answers = await fake_slack.wait_for(
                "chat.update",
                count=3,
                where=_is_answer,
                timeout=180,
            )
            await poll(dsn, "SELECT count(*) = 3 FROM slack_deliveries WHERE outcome = 'answered'")
    finally:
        code = await serve.stop()
        output = serve.output()
    try:
        assert code == 0, output[-3000:]
        _assert_each_answered_once(fake_slack, answers, threads)
        assert list(journal.iterdir()) == []  # each file dropped once its claim was made
    finally:
        database.stop()
