"""Soak benchmark of the Slack app: questions at a steady rate, a reindex every minute.

Copies the bundled handbook into a temporary folder, writes a sources file that indexes
that copy `every = "1m"`, starts an embedded Postgres in a temporary folder, indexes the
copy once with `kb index`, starts the fake Slack Web API of the tests
(tests/bot/slack/rig.py) on an ephemeral port and `kb serve` as a real process pointed
at it (as bench/slack_load.py does). Then, for `--minutes` minutes, it sends signed
`app_mention` events at `--rate` per second (each a new question in its own thread)
and, every minute, edits one page of the copy so the scheduled reindex does real work
(one document re-chunked and re-embedded). It measures:

- errors: acks that were not HTTP 200, tracebacks or errors in the server's log, failed
  reindexes, chat.postMessage / chat.update calls outside the asker's channel;
- lost and duplicated answers: every question gets exactly one answer (a chat.update
  carrying the `kb_answer` metadata on its placeholder);
- resident memory of the `kb serve` process (VmRSS from /proc/<pid>/status, sampled
  every 5 s): the growth from minute 2 (after warm-up) to the last minute, against the
  target of under 10%;
- answer latency (event sent → answer posted), p50/p95 per minute of sending, and the
  ratio of the last minute's p95 to the first minute's;
- the reindexes the schedule ran, from the server's log.

A progress line is printed every 10 s. Prints a Markdown report and writes it to
bench/results/soak.md. Run from the repository root:

    python bench/soak.py                                  # 10 minutes at 1 question/s
    python bench/soak.py --minutes 2 --rate 0.5 --no-output   # smoke run
"""

from __future__ import annotations

from _env import REPO  # first: the environment, before numpy loads

# isort: split

import argparse
import asyncio
import math
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
from slack_load import free_port, wait_healthy  # the same start-up as the load bench

from store.embedded import start_embedded_postgres
from tests.bot.slack.rig import SIGNING_SECRET, Call, FakeSlack, SlackSender, mention

HANDBOOK = REPO / "bot" / "sample_kb" / "handbook"
CHANNEL = "CSOAK"
EDITED_PAGE = Path("pages") / "travel-and-leave" / "going-out-of-office.md"
QUESTIONS = [
    "How do I request annual leave?",
    "How do I book travel and get reimbursed?",
    "What should I do in my first week?",
    "How do I get a laptop?",
    "Who approves my timesheet?",
    "How much sick leave do I earn?",
    "How do I set up my PIV card?",
    "What is the policy on working remotely?",
    "What do I do before going out of office?",
]
SOURCES = """\
[[source]]
name = "soak"
kind = "directory"
collection = "handbook"
every = "1m"
[source.settings]
root = "{root}"
include = ["pages/**/*.md"]
"""
# What in the server's log counts as an error (rich prints the reindex reports there).
LOG_ERRORS = re.compile(r"Traceback|\bERROR\b|\bCRITICAL\b|failed:|Exception")
LOG_REINDEX = re.compile(r"indexed soak in ([\d.]+)s: (\d+) added, (\d+) updated")


@dataclass
class Question:
    index: int
    ts: str
    sent_at: float = 0.0
    ack_status: int = 0
    ack_seconds: float = 0.0


@dataclass
class Samples:
    rss_kb: list[tuple[float, int]] = field(default_factory=list)  # (seconds since start, kB)


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def p(values: list[float], q: float) -> float:
    """The nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def is_answer(call: Call) -> bool:
    return (call.params.get("metadata") or {}).get("event_type") == "kb_answer"


def edit_page(root: Path, minute: int) -> None:
    """Append a paragraph to one page: the next reindex re-chunks and re-embeds it."""
    path = root / EDITED_PAGE
    with path.open("a", encoding="utf-8") as f:
        f.write(f"\n\nSoak edit {minute}: tell your supervisor {minute} days before you leave.\n")


class Soak:
    def __init__(self, args: argparse.Namespace, workdir: Path) -> None:
        self.args = args
        self.workdir = workdir
        self.root = workdir / "handbook"
        self.fake = FakeSlack()
        self.questions: list[Question] = []
        self.samples = Samples()
        self.started = 0.0
        self.log_path = workdir / "serve.log"

    async def run(self) -> dict:
        shutil.copytree(HANDBOOK, self.root)
        sources = self.workdir / "sources.toml"
        sources.write_text(SOURCES.format(root=self.root), encoding="utf-8")
        database = await start_embedded_postgres(self.workdir / "pg")
        await self.fake.start()
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "KB_"))},
            "DATABASE_URL": database.dsn,
            "KB_HOME": str(self.workdir / "home"),
            "KB_SOURCES": str(sources),
            "SLACK_BOT_TOKEN": "xoxb-bench-token",
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "SLACK_API_URL": self.fake.base_url,
        }
        print("indexing the handbook copy…", file=sys.stderr)
        subprocess.run(
            [sys.executable, "-m", "bot", "index"], env=env, cwd=REPO, check=True,
            capture_output=True,
        )  # fmt: skip
        port = free_port()
        log = self.log_path.open("w")
        server = subprocess.Popen(
            [sys.executable, "-m", "bot", "serve"],
            env={**env, "KB_PORT": str(port)},
            cwd=REPO,
            stdout=log,
            stderr=log,
        )
        try:
            async with aiohttp.ClientSession() as http:
                await wait_healthy(http, port, server, timeout=300)
                sender = SlackSender(http, f"http://127.0.0.1:{port}/slack/events")
                await self.drive(sender, server.pid)
                return self.outcome()
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=120)
            except subprocess.TimeoutExpired:
                server.kill()
            log.close()
            await self.fake.close()
            database.stop()

    async def drive(self, sender: SlackSender, pid: int) -> None:
        total = int(self.args.minutes * 60 * self.args.rate)
        base = int(time.time())
        self.started = time.monotonic()
        sampler = asyncio.create_task(self.sample(pid))
        editor = asyncio.create_task(self.edit_every_minute())
        progress = asyncio.create_task(self.progress(total))
        sends = []
        for i in range(total):
            due = self.started + i / self.args.rate
            await asyncio.sleep(max(0.0, due - time.monotonic()))  # the steady rate itself
            question = Question(i, f"{base}.{i:06d}")
            self.questions.append(question)
            sends.append(asyncio.create_task(self.send(sender, question)))
        await asyncio.gather(*sends)
        editor.cancel()
        print(f"sent {total}; waiting for the last answers…", file=sys.stderr)
        try:
            await self.fake.wait_for("chat.update", count=total, where=is_answer,
                                     timeout=self.args.drain_timeout)  # fmt: skip
        except TimeoutError:
            print("timed out waiting for answers", file=sys.stderr)
        # A late duplicate would arrive within a few seconds of the last answer.
        await asyncio.sleep(5)
        sampler.cancel()
        progress.cancel()

    async def send(self, sender: SlackSender, question: Question) -> None:
        body = mention(
            QUESTIONS[question.index % len(QUESTIONS)],
            ts=question.ts,
            event_id=f"EvSoak{question.index}",
            channel=CHANNEL,
        )
        question.sent_at = time.monotonic()
        sent = await sender.event(body)
        question.ack_status, question.ack_seconds = sent.status, sent.seconds

    async def sample(self, pid: int) -> None:
        while True:
            self.samples.rss_kb.append((time.monotonic() - self.started, rss_kb(pid)))
            await asyncio.sleep(5)  # the sampling period

    async def edit_every_minute(self) -> None:
        """Edit a page at 0:30, 1:30, …: half-way between two scheduled reindexes."""
        minute = 0
        while True:
            minute += 1
            await asyncio.sleep(max(0.0, self.started + 60 * minute - 30 - time.monotonic()))
            edit_page(self.root, minute)

    async def progress(self, total: int) -> None:
        while True:
            await asyncio.sleep(10)  # the progress period
            elapsed = time.monotonic() - self.started
            answered = self.answered()
            rss = self.samples.rss_kb[-1][1] / 1024 if self.samples.rss_kb else 0
            print(
                f"[{elapsed:6.0f}s] sent {len(self.questions)}/{total}, answered {answered}, "
                f"pending {len(self.questions) - answered}, RSS {rss:.0f} MB, "
                f"reindexes {len(self.reindexes())}, load {os.getloadavg()[0]:.2f}",
                file=sys.stderr,
                flush=True,
            )

    def answered(self) -> int:
        return sum(1 for c in self.fake.calls_to("chat.update") if is_answer(c))

    def reindexes(self) -> list[tuple[float, int]]:
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return [(float(m[1]), int(m[3])) for m in LOG_REINDEX.finditer(text)]

    def outcome(self) -> dict:
        posts = self.fake.calls_to("chat.postMessage")
        # The fake's message store keeps each placeholder's ts with its thread's ts.
        thread_of = {m["ts"]: m.get("thread_ts") for m in self.fake.messages.get(CHANNEL, [])}
        answers: dict[str, list[float]] = {}
        for call in self.fake.calls_to("chat.update"):
            if is_answer(call):
                thread = thread_of.get(call.params.get("ts"))
                answers.setdefault(str(thread), []).append(call.at)
        by_ts = {q.ts: q for q in self.questions}
        latencies: dict[int, list[float]] = {}
        for ts, times in answers.items():
            question = by_ts.get(ts)
            if question is not None:
                minute = int((question.sent_at - self.started) // 60)
                latencies.setdefault(minute, []).append(times[0] - question.sent_at)
        wrong_channel = [
            c for c in self.fake.calls
            if c.method in ("chat.postMessage", "chat.update", "chat.postEphemeral")
            and c.params.get("channel") != CHANNEL
        ]  # fmt: skip
        stray_threads = [
            c for c in posts if c.params.get("thread_ts") not in by_ts
        ]  # fmt: skip
        log_text = self.log_path.read_text(encoding="utf-8", errors="replace")
        log_errors = [line for line in log_text.splitlines() if LOG_ERRORS.search(line)]
        return {
            "sent": len(self.questions),
            "acks": Counter(q.ack_status for q in self.questions),
            "ack_ms": [q.ack_seconds * 1000 for q in self.questions],
            "answered": sum(1 for q in self.questions if q.ts in answers),
            "lost": [q.ts for q in self.questions if q.ts not in answers],
            "duplicated": [ts for ts, times in answers.items() if len(times) > 1],
            "placeholders": len(posts),
            "wrong_channel": len(wrong_channel),
            "stray_threads": len(stray_threads),
            "latencies": latencies,
            "log_errors": log_errors,
            "reindexes": self.reindexes(),
            "rss": self.samples.rss_kb,
        }


def minute_rss(rss: list[tuple[float, int]], minute: int) -> float | None:
    values = [kb for at, kb in rss if minute * 60 <= at < (minute + 1) * 60]
    return statistics.mean(values) / 1024 if values else None


def report(args: argparse.Namespace, o: dict, load_before: tuple[float, ...]) -> str:
    minutes = sorted(o["latencies"])
    last_minute = max(0, math.ceil(args.minutes) - 1)
    warm = min(1, last_minute)  # minute 2, counted from 1
    rss_warm, rss_last = minute_rss(o["rss"], warm), minute_rss(o["rss"], last_minute)
    growth = (rss_last / rss_warm - 1) if rss_warm and rss_last else float("nan")
    first, last = o["latencies"].get(0, []), o["latencies"].get(last_minute, [])
    ratio = p(last, 0.95) / p(first, 0.95) if first and last else float("nan")
    # The first minute holds the cold start; minute 2 is the warmed-up baseline.
    warmed = o["latencies"].get(warm, [])
    warm_ratio = p(last, 0.95) / p(warmed, 0.95) if warmed and last else float("nan")
    errors = (
        sum(n for status, n in o["acks"].items() if status != 200)
        + len(o["log_errors"]) + o["wrong_channel"] + o["stray_threads"]
    )  # fmt: skip
    once = not o["lost"] and not o["duplicated"]
    edits = [r for r in o["reindexes"] if r[1] > 0]
    lines = [
        "# Soak: questions at a steady rate through the Slack path, a reindex every minute",
        "",
        f"{args.minutes:g} minutes at {args.rate:g} question/s: {o['sent']} signed "
        f"`app_mention` events over HTTP to `kb serve` (a real process; the fake Web API of "
        "tests/bot/slack/rig.py), each a new question in its own thread, over a copy of the "
        'bundled handbook indexed by a source with `every = "1m"`; one page of the copy '
        "edited every minute, half-way between two scheduled reindexes.",
        "",
        f"- errors: **{errors}** (acks not 200: "
        f"{sum(n for s, n in o['acks'].items() if s != 200)}; error lines in the server's "
        f"log: {len(o['log_errors'])}; posts or updates outside the asker's channel: "
        f"{o['wrong_channel']}; placeholders outside an asker's thread: {o['stray_threads']})",
        f"- answers: {o['answered']} of {o['sent']}, lost {len(o['lost'])}, duplicated "
        f"{len(o['duplicated'])}, placeholders {o['placeholders']}: "
        f"**{'exactly once' if once else 'NOT exactly once'}**",
        f"- resident memory of `kb serve`: minute {warm + 1} mean {rss_warm or 0:.0f} MB, "
        f"minute {last_minute + 1} mean {rss_last or 0:.0f} MB, growth **{growth:+.1%}** "
        f"(target < 10%: **{'pass' if growth < 0.10 else 'FAIL'}**)",
        f"- answer latency p95, last minute / first minute: **{ratio:.2f}** (last minute / "
        f"minute {warm + 1}, after the cold start: {warm_ratio:.2f})",
        f"- ack latency: p50 {p(o['ack_ms'], 0.5):.1f} ms, p99 {p(o['ack_ms'], 0.99):.1f} ms, "
        f"max {max(o['ack_ms']):.1f} ms",
        f"- scheduled reindexes: {len(o['reindexes'])}, of which {len(edits)} updated the "
        f"edited page; durations {', '.join(f'{s:.1f}' for s, _ in o['reindexes'])} s",
        "",
        "| minute | questions answered | answer p50 s | answer p95 s | max s | RSS mean MB |",
        "|---|---|---|---|---|---|",
    ]
    for minute in minutes:
        values = o["latencies"][minute]
        rss = minute_rss(o["rss"], minute)
        lines.append(
            f"| {minute + 1} | {len(values)} | {p(values, 0.5):.2f} | {p(values, 0.95):.2f} | "
            f"{max(values):.2f} | {rss or 0:.0f} |"
        )
    if o["log_errors"]:
        lines += ["", "First error lines of the server's log:", ""]
        lines += [f"    {line[:200]}" for line in o["log_errors"][:10]]
    lines += [
        "",
        "Latency is counted per minute in which the question was sent; RSS is the mean of "
        "the 5-second VmRSS samples of the `kb serve` process in that minute (its "
        "conversion worker processes not included).",
        "",
        "## Machine",
        "",
        f"- {os.cpu_count()} CPUs, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, {platform.platform()}",
        f"- load average before the run: {', '.join(f'{x:.2f}' for x in load_before)}; "
        f"after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}",
        f"- niceness of the bench (and so of `kb serve`): {os.nice(0)}",
        f"- {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; command: "
        f"`python bench/soak.py {' '.join(sys.argv[1:])}`".rstrip(),
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--rate", type=float, default=1.0, help="questions per second")
    parser.add_argument(
        "--drain-timeout", type=float, default=600, help="seconds to wait for the last answers"
    )
    parser.add_argument("--output", type=Path, default=REPO / "bench" / "results" / "soak.md")
    parser.add_argument("--no-output", action="store_true", help="print only; write no file")
    args = parser.parse_args()
    load_before = os.getloadavg()

    async def run() -> dict:
        with tempfile.TemporaryDirectory(prefix="kb-soak-") as tmp:
            return await Soak(args, Path(tmp)).run()

    text = report(args, asyncio.run(run()), load_before)
    print(text)
    if not args.no_output:
        args.output.write_text(text, encoding="utf-8")
        print(f"written to {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
