"""The retention purge: backdated runs and question text go, escalations and votes stay,
and only one instance purges at a time."""

from __future__ import annotations

from datetime import timedelta

from jobs.retention import RetentionJob
from store.conversations import AssistantThreads, ConversationLog, PostedAnswer
from store.deliveries import DeliveryLog
from store.escalations import EscalationRepository, NewEscalation
from store.feedback import FeedbackRepository
from store.locks import RETENTION_LOCK_KEY
from store.runs import RunOutcome, RunRepository, RunStart

KEEP = timedelta(days=90)


async def _run(pool, question: str, *, days_old: int) -> int:
    runs = RunRepository(pool)
    run_id = await runs.start(RunStart(question=question, origin={"user": "W1", "channel": "C1"}))
    await runs.finish(
        run_id,
        RunOutcome(
            stop_reason="enough_evidence",
            escalate=False,
            answer={"question": question},
            queries=[question],
            latency_ms=10.0,
        ),
    )
    await ConversationLog(pool).record(
        PostedAnswer(run_id, "C1", "1.1", "1.2", "W1", question, "mention")
    )
    for table in ("agent_runs", "slack_answers"):
        await pool.execute(
            f"UPDATE {table} SET created_at = now() - $2::interval "
            f"WHERE {'id' if table == 'agent_runs' else 'run_id'} = $1",
            run_id,
            timedelta(days=days_old),
        )
    return run_id


async def test_old_runs_and_question_text_go_while_escalations_votes_and_new_rows_stay(pool):
    old_alone = await _run(pool, "old question alone", days_old=120)
    old_voted = await _run(pool, "old question voted on", days_old=120)
    old_escalated = await _run(pool, "old question escalated", days_old=120)
    recent = await _run(pool, "recent question", days_old=10)
    feedback = FeedbackRepository(pool)
    await feedback.comment(run_id=old_voted, user_id="W2", comment="old comment")
    await feedback.comment(run_id=recent, user_id="W2", comment="recent comment")
    await pool.execute(
        "UPDATE feedback SET updated_at = now() - interval '100 days' WHERE run_id = $1", old_voted
    )
    await EscalationRepository(pool).open(
        NewEscalation(old_escalated, "C1", "1.1", "W1", "old question escalated", "ops", "W1")
    )
    threads = AssistantThreads(pool)
    for ts, days in (("9.1", 100), ("9.2", 1)):
        await threads.started(channel_id="D1", thread_ts=ts, user_id="W1", context={})
        await pool.execute(
            "UPDATE assistant_threads SET created_at = now() - $2::interval WHERE thread_ts = $1",
            ts,
            timedelta(days=days),
        )
    await DeliveryLog(pool).claim("Ev-old", kind="event")
    await pool.execute("UPDATE slack_deliveries SET received_at = now() - interval '100 days'")
    await DeliveryLog(pool).claim("Ev-new", kind="event")

    report = await RetentionJob(pool=pool, keep=KEEP).run()
    assert report is not None
    assert (report.runs_deleted, report.runs_emptied, report.comments_cleared) == (1, 1, 1)

    runs = {r["id"]: r for r in await pool.fetch("SELECT * FROM agent_runs")}
    assert old_alone not in runs
    assert runs[old_voted]["question"] == "" and runs[old_voted]["answer"] is None
    assert runs[old_voted]["stop_reason"] == "enough_evidence"  # the vote's context stays
    assert runs[old_voted]["queries"] == "[]" and "user" not in runs[old_voted]["origin"]
    assert runs[old_escalated]["question"] == "old question escalated"  # kept whole
    assert runs[recent]["question"] == "recent question"
    questions = {r["question"] for r in await pool.fetch("SELECT question FROM slack_answers")}
    assert questions == {"recent question"}
    votes = {r["run_id"]: r["comment"] for r in await pool.fetch("SELECT * FROM feedback")}
    assert votes == {old_voted: None, recent: "recent comment"}
    assert await pool.fetchval("SELECT question FROM escalations") == "old question escalated"
    assert [r["thread_ts"] for r in await pool.fetch("SELECT * FROM assistant_threads")] == ["9.2"]
    assert [r["key"] for r in await pool.fetch("SELECT key FROM slack_deliveries")] == ["Ev-new"]

    again = await RetentionJob(pool=pool, keep=KEEP).run()
    assert again is not None and (again.runs_deleted, again.runs_emptied) == (0, 0)


async def test_a_purge_is_skipped_while_another_instance_holds_the_lock(pool):
    old = await _run(pool, "old question", days_old=120)
    async with pool.acquire() as other:
        await other.execute("SELECT pg_advisory_lock($1)", RETENTION_LOCK_KEY)
        try:
            assert await RetentionJob(pool=pool, keep=KEEP).run() is None
        finally:
            await other.execute("SELECT pg_advisory_unlock($1)", RETENTION_LOCK_KEY)
    assert await pool.fetchval("SELECT count(*) FROM agent_runs WHERE id = $1", old) == 1
    assert (await RetentionJob(pool=pool, keep=KEEP).run()) is not None
    assert await pool.fetchval("SELECT count(*) FROM agent_runs WHERE id = $1", old) == 0
