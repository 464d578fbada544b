"""Three `kb serve` replicas on one Postgres: one answer per question, one reindex at a time.

Three real processes share one database (a fresh one on the session's server) and the
fake Slack Web API. Their sources file schedules a reindex at start and every second, so
all three keep finding it due; the first pass embeds a few hundred chunks, long enough
for the others to meet the advisory lock. The same signed event goes to all three
replicas at once, and a Slack retry of it to one of them.
"""

from __future__ import annotations

import asyncio
import itertools
import shutil
from pathlib import Path

import aiohttp
import asyncpg

from tests.bot.slack.processes import FIXTURE_KB, ServeProcess, serve_env, sources_file
from tests.bot.slack.rig import FakeSlack, mention

QUESTION = "How do I request annual leave?"


def corpus_folder(root: Path) -> Path:
    """The fixture corpus plus 50 filler documents, so the first pass takes a while."""
    shutil.copytree(FIXTURE_KB, root)
    for d in range(50):
        text = "\n\n".join(
            " ".join(f"Filler {d}.{p}.{s} describes procedure {s} of team {d}." for s in range(12))
            for p in range(5)
        )
        (root / f"filler{d:02}.md").write_text(f"# Filler {d}\n\n{text}\n")
    return root


async def _wait_indexed(dsn: str, timeout: float = 240) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        deadline = asyncio.get_running_loop().time() + timeout
        while not await conn.fetchval("SELECT count(*) FROM index_runs WHERE status = 'succeeded'"):
            assert asyncio.get_running_loop().time() < deadline, "no reindex ever succeeded"
            await asyncio.sleep(0.1)  # another process's work
    finally:
        await conn.close()


async def test_three_replicas_answer_a_question_once_and_run_one_reindex_at_a_time(
    database_url: str, fake_slack: FakeSlack, tmp_path: Path
) -> None:
    sources = sources_file(
        tmp_path / "sources.toml", root=corpus_folder(tmp_path / "kb"), every="1s"
    )
    replicas = []
    async with aiohttp.ClientSession() as http:
        try:
            for n in range(3):
                env = serve_env(
                    database_url=database_url, home=tmp_path / f"home{n}",
                    slack_url=fake_slack.base_url, sources=sources,
                )  # fmt: skip
                replicas.append(await ServeProcess.start(env, log=tmp_path / f"serve{n}.log"))
            for replica in replicas:
                await replica.wait_healthy(http)
            await _wait_indexed(database_url)
            event = mention(QUESTION, ts="1700000800.000001", event_id="EvReplicas")
            sent = await asyncio.gather(
                *(r.sender(http).event(event) for r in replicas),
                replicas[0].sender(http).event(event, retry_num=1),
            )
            assert [s.status for s in sent] == [200] * 4
            await fake_slack.wait_for(
                "chat.update",
                where=lambda c: (c.params.get("metadata") or {}).get("event_type") == "kb_answer",
            )
        finally:
            # A clean stop waits for every answer a replica started: nothing is in flight.
            codes = [await r.stop() for r in replicas]
    outputs = [r.output() for r in replicas]
    assert codes == [0, 0, 0], "\n".join(o[-2000:] for o in outputs)
    answers = [
        c
        for c in fake_slack.calls_to("chat.update")
        if (c.params.get("metadata") or {}).get("event_type") == "kb_answer"
    ]
    assert len(answers) == 1
    assert len(fake_slack.calls_to("chat.postMessage")) == 1  # one placeholder
    conn = await asyncpg.connect(database_url)
    try:
        runs = await conn.fetch(
            "SELECT started_at, finished_at, status FROM index_runs ORDER BY started_at"
        )
        documents = await conn.fetchval("SELECT count(*) FROM documents")
        duplicate_chunks = await conn.fetchval(
            """SELECT count(*) FROM (SELECT document_id, ordinal FROM chunks
               GROUP BY 1, 2 HAVING count(*) > 1) d"""
        )
    finally:
        await conn.close()
    assert all(r["finished_at"] is not None for r in runs)
    for earlier, later in itertools.pairwise(runs):
        assert earlier["finished_at"] <= later["started_at"], "two reindex runs overlapped"
    assert any("another reindex is running" in o for o in outputs), "the lock was never met"
    assert documents == 3 + 50 and duplicate_chunks == 0
