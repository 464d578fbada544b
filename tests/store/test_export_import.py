"""`kb export` / `kb import`: what cannot be re-derived survives a move to a fresh database.

The CLI runs as real processes against two databases on the session's Postgres:
export from the first, import into the second (twice), export again, compare.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from store.database import open_pool
from store.errors import ExportFileInvalid
from store.escalations import EscalationRepository, NewEscalation
from store.feedback import FeedbackRepository
from store.portable import export_lines, import_lines
from store.runs import RunOutcome, RunRepository, RunStart
from tests.conftest import with_database

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
async def second_database(pg_server) -> AsyncIterator[str]:
    """Another fresh database on the session's server (a restore target)."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(pg_server.dsn)
    await admin.execute(f'CREATE DATABASE "{name}"')
    yield with_database(pg_server.dsn, name)
    await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await admin.close()


async def _fill(pool: asyncpg.Pool) -> None:
    """Three runs: one escalated and answered by an expert, one voted on, one alone."""
    runs, escalations = RunRepository(pool), EscalationRepository(pool)
    ids = []
    for question in ("Where is the parking permit desk?", "How do I request leave?", "Hi"):
        run_id = await runs.start(RunStart(question=question, origin={"channel": "C111"}))
        await runs.finish(
            run_id,
            RunOutcome(
                stop_reason="enough_evidence",
                escalate=False,
                steps=[{"action": "plan", "latency_ms": 1.5}],
                answer={"question": question, "claims": []},
                latency_ms=12.5,
            ),
        )
        ids.append(run_id)
    opened = await escalations.open(
        NewEscalation(
            run_id=ids[0], channel_id="C111", thread_ts="1700.1", asker_id="W1",
            question="Where is the parking permit desk?", collection="ops", escalated_by="W1",
        )
    )  # fmt: skip
    assert opened is not None
    await escalations.posted(opened.id, channel_id="CESC", ts="1700.2", permalink=None)
    await escalations.resolve(opened.id, resolved_by="W9", answer="Ground floor, by the lifts.")
    feedback = FeedbackRepository(pool)
    await feedback.vote(run_id=ids[1], user_id="W2", vote=1)
    await feedback.comment(run_id=ids[0], user_id="W3", comment="It did not know")


async def _kb(*args: str, database_url: str, home: Path) -> tuple[int, str, str]:
    env = {**os.environ, "DATABASE_URL": database_url, "KB_HOME": str(home)}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", *args, env=env, cwd=REPO,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_export_then_import_into_a_fresh_database_twice_gives_back_the_same_file(
    pool, database_url, second_database, tmp_path
):
    await _fill(pool)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    code, out, err = await _kb("export", str(first), database_url=database_url, home=tmp_path)
    assert code == 0, err
    assert "exported 5 records" in out  # 2 runs referenced, 1 escalation, 2 votes
    records = [json.loads(line) for line in first.read_text().splitlines()]
    assert [r["type"] for r in records] == [
        "header",
        "run",
        "run",
        "escalation",
        "feedback",
        "feedback",
    ]
    assert records[3]["answer"] == "Ground floor, by the lifts."
    assert (records[3]["status"], records[3]["resolved_by"]) == ("resolved", "W9")

    code, out, err = await _kb("import", str(first), database_url=second_database, home=tmp_path)
    assert code == 0, err
    assert "imported 2 run, 1 escalation, 2 feedback; 0 already present" in out
    code, out, err = await _kb("import", str(first), database_url=second_database, home=tmp_path)
    assert code == 0, err
    assert "imported 0 run, 0 escalation, 0 feedback; 5 already present" in out

    code, _, err = await _kb("export", str(second), database_url=second_database, home=tmp_path)
    assert code == 0, err
    assert second.read_text() == first.read_text()

    # New rows in the restored database never collide with the imported ids.
    restored = await open_pool(second_database, max_size=2)
    try:
        new_run = await RunRepository(restored).start(RunStart(question="after the restore"))
        assert new_run > max(r["id"] for r in records if r["type"] == "run")
        assert await restored.fetchval("SELECT count(*) FROM feedback") == 2
    finally:
        await restored.close()


async def test_a_bad_line_is_one_error_naming_its_number_and_nothing_is_written(
    pool, second_database, tmp_path
):
    await _fill(pool)
    lines = await export_lines(pool)
    broken = json.loads(lines[3])
    broken["status"] = "lost"
    lines[3] = json.dumps(broken)
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, _, err = await _kb("import", str(path), database_url=second_database, home=tmp_path)
    assert code == 1
    assert err.strip().splitlines() == [
        "error: line 4: escalation: status 'lost' is not one of open, resolved"
    ]
    restored = await open_pool(second_database, max_size=2)
    try:
        assert await restored.fetchval("SELECT count(*) FROM agent_runs") == 0
        for bad, problem in (
            ("{not json", "line 2: not JSON"),
            (json.dumps({"type": "vote"}), "line 2: unknown type 'vote'"),
            (lines[4].replace('"run_id": ', '"run_id": 9'), "line 2: feedback refers to run"),
        ):
            with pytest.raises(ExportFileInvalid, match=problem):
                await import_lines(restored, [lines[0], bad])
        with pytest.raises(ExportFileInvalid, match="line 1: not a slack-kb-export file"):
            await import_lines(restored, lines[1:])
        assert await restored.fetchval("SELECT count(*) FROM agent_runs") == 0
    finally:
        await restored.close()


async def test_an_id_taken_by_another_row_stops_the_import(pool, second_database):
    await _fill(pool)
    lines = await export_lines(pool)
    other = await open_pool(second_database, max_size=2)
    try:
        await RunRepository(other).start(RunStart(question="a different first question"))
        with pytest.raises(ExportFileInvalid, match="line 2: run 1 is already in this database"):
            await import_lines(other, lines)
        assert await other.fetchval("SELECT count(*) FROM escalations") == 0
    finally:
        await other.close()
