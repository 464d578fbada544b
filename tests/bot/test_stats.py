"""`kb stats`: counts per day, answered vs escalated, feedback, and gaps grouped by meaning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import asyncpg
import numpy as np

from bot.stats import cluster, stats_report
from store.escalations import EscalationRepository, NewEscalation
from store.feedback import FeedbackRepository
from store.runs import RunOutcome, RunRepository, RunStart
from store.stats import StatsReader

REPO = Path(__file__).resolve().parents[2]


async def _run(runs: RunRepository, question: str, *, escalate: bool) -> int:
    run_id = await runs.start(RunStart(question=question))
    await runs.finish(run_id, RunOutcome(stop_reason="enough_evidence", escalate=escalate))
    return run_id


async def _history(pool: asyncpg.Pool) -> None:
    runs, feedback = RunRepository(pool), FeedbackRepository(pool)
    answered = await _run(runs, "How do I request annual leave?", escalate=False)
    await feedback.vote(run_id=answered, user_id="U1", vote=1)
    for wording in (
        "How do I get a parking permit?",
        "Where do I get a parking permit for the garage?",
        "How can I get a parking pass?",
    ):
        await _run(runs, wording, escalate=True)
    disliked = await _run(runs, "Who approves my expense report?", escalate=False)
    await feedback.vote(run_id=disliked, user_id="U1", vote=-1)
    await feedback.comment(run_id=disliked, user_id="U1", comment="wrong office")
    escalated = await _run(runs, "Who approves expense reports?", escalate=False)
    await EscalationRepository(pool).open(
        NewEscalation(
            run_id=escalated,
            channel_id="C1",
            thread_ts="1.1",
            asker_id="U2",
            question="Who approves expense reports?",
            collection="ops",
            escalated_by="U2",
        )
    )


async def test_stats_count_and_group_the_gaps_by_meaning(pool: asyncpg.Pool, embedder) -> None:
    await _history(pool)
    report = await stats_report(StatsReader(pool), embedder=embedder, days=7)
    totals = report.totals
    assert (totals.questions, totals.answered, totals.flagged) == (6, 3, 3)
    assert (totals.escalated, totals.thumbs_up, totals.thumbs_down, totals.comments) == (1, 1, 1, 1)
    assert sum(d.questions for d in report.days) == 6
    parking, expenses = report.gaps[:2]
    assert parking.count == 3 and "parking" in parking.question and parking.escalated == 3
    assert expenses.count == 2 and expenses.thumbs_down == 1 and expenses.escalated == 1
    assert all("annual leave" not in g.question for g in report.gaps)


def test_clusters_link_paraphrases_transitively_and_keep_the_rest_apart() -> None:
    vectors = np.array([[1, 0], [0.95, 0.31], [0, 1], [0.1, 0.99]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    assert sorted(cluster(vectors, threshold=0.9)) == [[0, 1], [2, 3]]
    assert sorted(cluster(vectors, threshold=0.999)) == [[0], [1], [2], [3]]


async def test_kb_stats_json_as_a_user_runs_it(
    pool: asyncpg.Pool, database_url: str, tmp_path
) -> None:
    await _history(pool)
    result = subprocess.run(
        [sys.executable, "-m", "bot", "stats", "--json"],
        env={**os.environ, "DATABASE_URL": database_url, "KB_HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=240,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["totals"]["questions"] == 6
    assert figures["gaps"][0]["count"] == 3
