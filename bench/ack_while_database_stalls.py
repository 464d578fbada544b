"""Ack latency of the assistant panel's events while Postgres stalls (issue 19 item 10).

Slack wants its 200 within 3 seconds; nothing on the ack path should wait on the
database. This starts an embedded Postgres in a temporary folder, the fake Slack Web
API of the tests (tests/bot/slack/rig.py) and `kb serve` as a real process, opens an
assistant-panel thread, then stalls the database for the panel: a transaction holds
`LOCK TABLE assistant_threads IN ACCESS EXCLUSIVE MODE` for `--stall` seconds, so every
query on that table waits. Meanwhile it sends N signed messages in the panel's thread
and N `assistant_thread_context_changed` events, all at once, and measures each ack
(request sent → HTTP response). The same is measured without the stall, as the floor.

An ack that looks the thread up (is this DM thread the panel's?) or saves the context
before answering waits for the lock: its latency is the stall.

`--pause sigstop` stalls the whole server instead, as the issue asks: every Postgres
process (the postmaster and its backends) gets SIGSTOP for `--stall` seconds, then
SIGCONT. During the pause it also sends N mentions, and after it waits until each is
answered, counting answers per mention, so a question lost or answered twice shows.

Prints a Markdown report and writes it to bench/results/ack_while_database_stalls.md
(or ack_while_postgres_is_stopped.md). Run from the repository root:

    python bench/ack_while_database_stalls.py                 # 20 of each, 2 s lock
    python bench/ack_while_database_stalls.py --pause sigstop --stall 10
    python bench/ack_while_database_stalls.py --no-output     # print only
"""

from __future__ import annotations

from _env import REPO  # first: the environment, before numpy loads

# isort: split

import argparse
import asyncio
import os
import signal
import sys
import tempfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import asyncpg
from bot_process import bot_process
from slack_load import Latencies

from tests.bot.slack.rig import Call, FakeSlack, SlackSender, payload

PANEL, THREAD = "D111", "1726133698.626339"


def panel_message(n: int, label: str) -> dict:
    body = payload("event_message_im_in_thread.json")
    ts = f"1726134{n:03d}.{len(label):06d}"
    body["event_id"] = f"EvMsg{label}{n}"
    body["event"] |= {"text": "How do I request annual leave?", "ts": ts, "event_ts": ts}
    return body


def mention(n: int, label: str) -> dict:
    body = payload("event_app_mention.json")
    ts = f"1726135{n:03d}.{len(label):06d}"
    body["event_id"] = f"EvMention{label}{n}"
    body["event"] |= {"text": "<@W111> How do I request annual leave?", "ts": ts, "event_ts": ts}
    return body


def context_changed(n: int, label: str) -> dict:
    body = payload("event_assistant_thread_context_changed.json")
    body["event_id"] = f"EvCtx{label}{n}"
    return body


async def acks(sender: SlackSender, bodies: list[dict], label: str) -> Latencies:
    """All at once, so each of them meets the stall."""
    sent = await asyncio.gather(*(sender.event(body) for body in bodies))
    return Latencies(label, [s.seconds for s in sent], Counter(s.status for s in sent))


async def hold_lock(dsn: str, stall: float, held: asyncio.Event) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        async with conn.transaction():
            await conn.execute("LOCK TABLE assistant_threads IN ACCESS EXCLUSIVE MODE")
            held.set()
            await asyncio.sleep(stall)  # the stall being measured
    finally:
        await conn.close()


def postgres_pids(data_dir: Path) -> list[int]:
    """The postmaster (first line of postmaster.pid) and every process it started."""
    postmaster = int((data_dir / "postmaster.pid").read_text().split()[0])
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended while we looked
        parents[int(stat.parent.name)] = int(fields[1])
    pids, frontier = [postmaster], [postmaster]
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        pids += children
        frontier = children
    return pids


def answers_per_mention(fake: FakeSlack) -> Counter:
    """kb_answer writes (a placeholder updated, or a message posted) by the mention's ts."""
    thread_of = {m["ts"]: m.get("thread_ts") for ms in fake.messages.values() for m in ms}

    def answer(c: Call) -> bool:
        return (c.params.get("metadata") or {}).get("event_type") == "kb_answer"

    updated = (thread_of.get(c.params["ts"]) for c in fake.calls_to("chat.update") if answer(c))
    posted = (c.params.get("thread_ts") for c in fake.calls_to("chat.postMessage") if answer(c))
    return Counter([*updated, *posted])


async def measure_sigstop(
    sender: SlackSender, fake: FakeSlack, data_dir: Path, args: argparse.Namespace
) -> tuple[list[Latencies], str]:
    kinds = (("mention", mention), ("message", panel_message), ("context", context_changed))
    results = [
        await acks(sender, [build(n, "calm") for n in range(args.events)], kind)
        for kind, build in kinds
    ]
    await wait_answered(fake, {mention(n, "calm")["event"]["ts"] for n in range(args.events)}, args)
    pids = postgres_pids(data_dir)
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        stopped = asyncio.get_running_loop().time()
        for kind, build in kinds:
            bodies = [build(n, "stopped") for n in range(args.events)]
            results.append(await acks(sender, bodies, f"{kind}, Postgres stopped"))
        await asyncio.sleep(max(0.0, args.stall - (asyncio.get_running_loop().time() - stopped)))
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
    asked = {mention(n, "stopped")["event"]["ts"] for n in range(args.events)}
    counts = await wait_answered(fake, asked, args)
    twice = sum(1 for ts in asked if counts[ts] > 1)
    lost = sum(1 for ts in asked if counts[ts] == 0)
    outcome = (
        f"{len(pids)} Postgres processes stopped for {args.stall:g} s. Mentions sent while "
        f"stopped: {len(asked)}; answered after SIGCONT: {len(asked) - lost}; lost: {lost}; "
        f"answered twice: {twice}."
    )
    return results, outcome


async def wait_answered(fake: FakeSlack, asked: set[str], args: argparse.Namespace) -> Counter:
    """Until every mention in `asked` has an answer, or `--answer-timeout` passes."""
    deadline = asyncio.get_running_loop().time() + args.answer_timeout
    while True:
        counts = answers_per_mention(fake)
        done = sum(1 for ts in asked if counts[ts])
        print(f"\ranswered {done}/{len(asked)}", end="", file=sys.stderr, flush=True)
        if done == len(asked) or asyncio.get_running_loop().time() > deadline:
            print(file=sys.stderr)
            await asyncio.sleep(2)  # a duplicate would come late: give it time to show
            return answers_per_mention(fake)
        await asyncio.sleep(0.5)


async def measure(sender: SlackSender, dsn: str, args: argparse.Namespace) -> list[Latencies]:
    results = [
        await acks(sender, [panel_message(n, "calm") for n in range(args.events)], "message"),
        await acks(sender, [context_changed(n, "calm") for n in range(args.events)], "context"),
    ]
    for kind, build in (("message", panel_message), ("context", context_changed)):
        held = asyncio.Event()
        stall = asyncio.create_task(hold_lock(dsn, args.stall, held))
        await held.wait()
        bodies = [build(n, f"stall{kind}") for n in range(args.events)]
        results.append(await acks(sender, bodies, f"{kind}, database stalled"))
        await stall
    return results


async def run(args: argparse.Namespace, workdir: Path) -> tuple[list[Latencies], str]:
    fake = FakeSlack()
    await fake.start()
    extra = {"KB_SENTENCE_WARMUP": "false"}
    async with bot_process(workdir, fake, extra) as bot, aiohttp.ClientSession() as http:
        sender = SlackSender(http, bot.events_url)
        started = payload("event_assistant_thread_started.json")
        started["event_id"] = "EvStarted"
        await sender.event(started)
        await fake.wait_for("chat.postMessage", where=lambda c: c.params["channel"] == PANEL)
        if args.pause == "sigstop":
            return await measure_sigstop(sender, fake, workdir / "pg", args)
        return await measure(sender, bot.database.dsn, args), ""


def report(args: argparse.Namespace, results: list[Latencies], outcome: str) -> str:
    stall = (
        f"every Postgres process SIGSTOPped for {args.stall:g} s"
        if args.pause == "sigstop"
        else f"a lock on assistant_threads held {args.stall:g} s"
    )
    head = (
        f"# Ack latency while Postgres stalls\n\n"
        f"`{' '.join(sys.argv[1:]) or '(defaults)'}`, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
        f"{args.events} of each, sent at once; stall: {stall}.\n\n"
        "| requests | n | p50 ms | p99 ms | max ms | statuses |\n|---|---|---|---|---|---|\n"
    )
    return head + "\n".join(r.row() for r in results) + "\n" + (f"\n{outcome}\n" if outcome else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=20)
    parser.add_argument("--stall", type=float, default=2.0, help="seconds the database stalls")
    parser.add_argument(
        "--pause",
        choices=("lock", "sigstop"),
        default="lock",
        help="lock: a table lock the panel needs; sigstop: stop every Postgres process",
    )
    parser.add_argument(
        "--answer-timeout", type=float, default=180, help="sigstop: wait for answers"
    )
    parser.add_argument("--no-output", action="store_true", help="print, write no file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        results, outcome = asyncio.run(run(args, Path(workdir)))
    text = report(args, results, outcome)
    print(text)
    if not args.no_output:
        name = (
            "ack_while_postgres_is_stopped"
            if args.pause == "sigstop"
            else "ack_while_database_stalls"
        )
        (REPO / "bench" / "results" / f"{name}.md").write_text(text)


if __name__ == "__main__":
    main()
