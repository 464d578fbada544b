"""Load benchmark of the Slack app: ack latency while answers are computed, exactly once.

Starts an embedded Postgres in a temporary folder, indexes a corpus (the bundled
handbook by default) with `kb index`, starts the fake Slack Web API of the tests
(tests/bot/slack/rig.py) on an ephemeral port and `kb serve` as a real process pointed
at it (SLACK_API_URL), then sends N signed `app_mention` events (HTTP mode, each a new
question in its own thread), C at a time, and measures:

- ack latency (request sent → HTTP response) p50 / p99 / max, against the target
  p99 < 250 ms while answers are being computed;
- answers posted: every thread gets exactly one answer (a `chat.update` carrying the
  `kb_answer` metadata), none twice, none missing;
- total time from the first event to the last answer;
- with streamed answers (the default; `--no-stream` for the placeholder path), per
  thread the time from its event to the first verified claim in its stream, and to the
  final answer (the chat.update that replaces the stream), p50 / p95, in the same run.

With `--reasoner claude` the server answers with the Claude reasoner, through the local
fake of the Messages API (bench/scripted_claude.py) in this process, whose answer
decision takes `--claude-delay` seconds to write (spread over its streamed tokens);
`--runs-per-workspace` is KB_SLACK_RUNS_PER_WORKSPACE (Claude's runs mostly wait on
the API, so more of them can run at once than extractive ones).

The same N events, C at a time, then go to a bare aiohttp handler in its own process
that only acks (no signature check, no database, no bolt): the floor the bot's ack
path is compared with. Prints a Markdown report and writes it to
bench/results/slack_load.md. Run from the repository root:

    python bench/slack_load.py                       # 200 events, 50 at a time, handbook
    python bench/slack_load.py --events 20 --corpus fixture --no-output   # smoke run
    python bench/slack_load.py --events 50 --reasoner claude --claude-delay 1.5 \
        --runs-per-workspace 50                      # first claim vs whole answer
"""

from __future__ import annotations

from _env import REPO  # first: the environment, before numpy loads

# isort: split

import argparse
import asyncio
import json
import math
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
from aiohttp import web
from bot_process import bot_process, free_port, wait_healthy
from scripted_claude import scripted_claude

from store.database import open_pool
from store.runs import RunRepository
from tests.agent.fake_anthropic import Recorded
from tests.bot.slack.rig import FakeSlack, SlackSender, mention

QUESTIONS = {
    "handbook": [
        "How do I request annual leave?",
        "How do I book travel and get reimbursed?",
        "What should I do in my first week?",
        "How do I get a laptop?",
        "Who approves my timesheet?",
        "How much sick leave do I earn?",
        "How do I set up my PIV card?",
        "What is the policy on working remotely?",
    ],
    "fixture": [
        "How do I request annual leave?",
        "How do I get reimbursed after a trip?",
        "What do I do if my laptop breaks?",
        "Can sick leave be requested after the fact?",
    ],
}
CORPORA = {"handbook": None, "fixture": REPO / "tests" / "fixtures" / "kb"}
STREAM_CALLS = ("chat.startStream", "chat.appendStream", "chat.stopStream")
# A claim line as bot/slack/delivery/streaming.py streams it.
CLAIM_LINE = re.compile(r"^- (?:\*\*.*?\*\* — )?“", re.M)


@dataclass(frozen=True, slots=True)
class Latencies:
    label: str
    seconds: list[float]
    statuses: Counter[int]

    @property
    def ms(self) -> list[float]:
        return sorted(s * 1000 for s in self.seconds)

    @property
    def p99_ms(self) -> float:
        """The nearest-rank 99th percentile."""
        ms = self.ms
        return ms[min(len(ms) - 1, math.ceil(0.99 * len(ms)) - 1)]

    def later(self, skip: int) -> Latencies:
        """The same run without its first `skip` requests (the cold start)."""
        return Latencies(f"{self.label}, after the first {skip}", self.seconds[skip:], Counter())

    @property
    def p95_ms(self) -> float:
        ms = self.ms
        return ms[min(len(ms) - 1, math.ceil(0.95 * len(ms)) - 1)]

    def row(self) -> str:
        ms = self.ms
        return (
            f"| {self.label} | {len(ms)} | {statistics.median(ms):.1f} | {self.p99_ms:.1f} | "
            f"{ms[-1]:.1f} | {dict(self.statuses)} |"
        )


async def send_all(
    sender: SlackSender,
    bodies: list[dict],
    concurrency: int,
    label: str,
    sent_at: dict[str, float] | None = None,
):
    """Send every body, `concurrency` at a time; `sent_at` gets each event's send time."""
    gate = asyncio.Semaphore(concurrency)
    statuses: Counter[int] = Counter()

    async def one(index: int, body: dict) -> None:
        async with gate:
            if sent_at is not None:
                sent_at[body["event"]["ts"]] = time.monotonic()
            sent = await sender.event(body)
            seconds[index] = sent.seconds
            statuses[sent.status] += 1

    seconds = [0.0] * len(bodies)
    await asyncio.gather(*(one(i, b) for i, b in enumerate(bodies)))
    return Latencies(label, seconds, statuses)


def events(count: int, corpus: str) -> list[dict]:
    questions = QUESTIONS[corpus]
    base = int(time.time())
    return [
        mention(
            questions[i % len(questions)],
            ts=f"{base}.{i:06d}",
            event_id=f"EvLoad{i}",
            channel="CLOAD",
        )
        for i in range(count)
    ]


async def run_steps(dsn: str, count: int) -> dict[str, float]:
    """The median time of each kind of step over the last `count` stored runs (agent_runs),
    and of the whole run: where a run's time goes, once it has started."""
    pool = await open_pool(dsn, max_size=1)
    try:
        runs = await RunRepository(pool).latest(limit=count)
    finally:
        await pool.close()
    per_run: list[Counter[str]] = []
    for run in runs:
        spent: Counter[str] = Counter()
        for step in run.steps:
            spent[step["action"]] += step["latency_ms"]
        per_run.append(spent)
    actions = sorted({a for spent in per_run for a in spent})
    medians = {a: statistics.median(spent[a] for spent in per_run) for a in actions}
    medians["whole run"] = statistics.median(r.latency_ms or 0.0 for r in runs)
    return medians


def answers_per_thread(fake: FakeSlack) -> Counter[str]:
    """How many answers (chat.update with kb_answer metadata) each placeholder got."""
    return Counter(
        c.params["ts"]
        for c in fake.calls_to("chat.update")
        if (c.params.get("metadata") or {}).get("event_type") == "kb_answer"
    )


def stream_timings(fake: FakeSlack, sent_at: dict[str, float]) -> tuple[Latencies, Latencies]:
    """Per streamed thread: event → first verified claim streamed, and event → the final
    answer (the kb_answer chat.update of its stream)."""
    thread_of = {
        m["ts"]: m["thread_ts"]
        for messages in fake.messages.values()
        for m in messages
        if "streaming_state" in m
    }
    first_claim: dict[str, float] = {}
    for call in fake.calls:
        if call.method not in STREAM_CALLS:
            continue
        thread = call.params.get("thread_ts") or thread_of.get(str(call.params.get("ts")))
        if thread in sent_at and CLAIM_LINE.search(str(call.params.get("markdown_text") or "")):
            first_claim.setdefault(thread, call.at)
    answered = {
        thread_of[c.params["ts"]]: c.at
        for c in fake.calls_to("chat.update")
        if (c.params.get("metadata") or {}).get("event_type") == "kb_answer"
        and c.params["ts"] in thread_of
    }
    threads = sorted(set(first_claim) & set(answered))
    return (
        Latencies("first claim", [first_claim[t] - sent_at[t] for t in threads], Counter()),
        Latencies("final answer", [answered[t] - sent_at[t] for t in threads], Counter()),
    )


async def bot_run(args: argparse.Namespace, workdir: Path) -> tuple[Latencies, dict]:
    if args.reasoner != "claude":
        return await _bot_run(args, workdir, {})
    async with scripted_claude(answer_seconds=args.claude_delay) as claude:
        claude_env = {"ANTHROPIC_API_KEY": "bench-key", "ANTHROPIC_BASE_URL": claude.base_url}
        acks, outcome = await _bot_run(args, workdir, claude_env)
        answers = [r for r in claude.requests if r.tool == "answer"]
        outcome["claude_answers"] = len(answers)
        outcome["claude_streamed"] = sum(1 for r in answers if r.body.get("stream"))
        outcome["claude_answer_chars"] = statistics.mean(_input_chars(r) for r in answers)
    return acks, outcome


async def _bot_run(
    args: argparse.Namespace, workdir: Path, claude_env: dict[str, str]
) -> tuple[Latencies, dict]:
    fake = FakeSlack()
    fake.streaming = args.stream
    await fake.start()
    extra = {
        "KB_SLACK_STREAM": "true" if args.stream else "false",
        "KB_SLACK_RUNS_PER_WORKSPACE": str(args.runs_per_workspace),
        **claude_env,
    }
    corpus = CORPORA[args.corpus]
    label = f"{args.corpus} corpus"
    async with (
        bot_process(workdir, fake, extra, index=str(corpus or ""), label=label) as bot,
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=args.concurrency)) as http,
    ):
        sender = SlackSender(http, bot.events_url)
        started = time.monotonic()
        sent_at: dict[str, float] = {}
        acks = await send_all(
            sender, events(args.events, args.corpus), args.concurrency, "kb serve", sent_at
        )
        print(f"acked {args.events}; waiting for the answers…", file=sys.stderr)
        await fake.wait_for(
            "chat.update",
            count=args.events,
            where=lambda c: (c.params.get("metadata") or {}).get("event_type") == "kb_answer",
            timeout=args.timeout,
        )
        total = time.monotonic() - started
        per_thread = answers_per_thread(fake)
        placeholders = len(fake.calls_to("chat.postMessage")) + len(
            fake.calls_to("chat.startStream")
        )
        first_claim, final = stream_timings(fake, sent_at)
        step_ms = await run_steps(bot.database.dsn, args.events)
    outcome = {
        "total_seconds": total,
        "answers": sum(per_thread.values()),
        "threads_answered": len(per_thread),
        "answered_twice": sum(1 for n in per_thread.values() if n > 1),
        "placeholders": placeholders,
        "first_claim": first_claim,
        "final": final,
        "step_ms": step_ms,
    }
    return acks, outcome


async def bare_run(args: argparse.Namespace) -> Latencies:
    port = free_port()
    server = subprocess.Popen([sys.executable, __file__, "--serve-bare", str(port)], cwd=REPO)
    try:
        async with aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=args.concurrency)
        ) as http:
            await wait_healthy(http, port, server, timeout=60)
            sender = SlackSender(http, f"http://127.0.0.1:{port}/slack/events")
            return await send_all(
                sender, events(args.events, args.corpus), args.concurrency, "bare aiohttp ack"
            )
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)


def serve_bare(port: int) -> None:
    """The baseline: read the body, answer 200 with nothing, nothing else."""

    async def ack(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(status=200)

    async def health(request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    app = web.Application()
    app.router.add_post("/slack/events", ack)
    app.router.add_get("/healthz", health)
    web.run_app(app, host="127.0.0.1", port=port, print=None)


def report(args: argparse.Namespace, bot: Latencies, bare: Latencies, outcome: dict) -> str:
    target = "pass" if bot.p99_ms < 250 else "FAIL"
    once = (
        outcome["answers"] == args.events
        and outcome["threads_answered"] == args.events
        and outcome["answered_twice"] == 0
    )
    lines = [
        "# Slack load: ack latency while answers are computed",
        "",
        f"{args.events} signed `app_mention` events, {args.concurrency} at a time, over HTTP "
        f"to `kb serve` (a real process; fake Web API of tests/bot/slack/rig.py), corpus: "
        f"{args.corpus}; each event a new question in its own thread; reasoner: "
        f"{_reasoner_words(args)}.",
        "",
        "| server | requests | ack p50 ms | ack p99 ms | max ms | statuses |",
        "|---|---|---|---|---|---|",
        bot.row(),
        # With one burst only, there is nothing after the cold start.
        *([bot.later(args.concurrency).row()] if args.events > args.concurrency else []),
        bare.row(),
        "",
        f"The first {args.concurrency} requests are the cold start: the first burst meets "
        "a process that has not yet called Slack or answered anything.",
        "",
        f"- target p99 < 250 ms while answers are computed: **{target}** "
        f"({bot.p99_ms:.1f} ms; the bare handler's p99 {bare.p99_ms:.1f} ms)",
        f"- answers posted: {outcome['answers']} for {outcome['threads_answered']} threads, "
        f"{outcome['answered_twice']} answered twice, placeholders or streams "
        f"{outcome['placeholders']}: **{'exactly once' if once else 'NOT exactly once'}**",
        f"- total, first event to last answer: {outcome['total_seconds']:.1f} s "
        f"({args.events / outcome['total_seconds']:.2f} answers/s with "
        f"KB_SLACK_RUNS_PER_WORKSPACE={args.runs_per_workspace})",
        *_claude_lines(args, outcome),
        *_streaming_lines(args, outcome),
        "",
        "Where a run's time goes once it has started (agent_runs, median per run, ms): "
        + ", ".join(f"{a} {ms:.0f}" for a, ms in outcome["step_ms"].items()),
        "",
        "## Machine",
        "",
        f"- {os.cpu_count()} CPUs, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, {platform.platform()}",
        f"- load average after the run: {', '.join(f'{x:.2f}' for x in os.getloadavg())}",
        f"- {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; command: "
        f"`python bench/slack_load.py {' '.join(sys.argv[1:])}`".rstrip(),
    ]
    return "\n".join(lines) + "\n"


def _reasoner_words(args: argparse.Namespace) -> str:
    if args.reasoner != "claude":
        return "extractive"
    return (
        "Claude through the local fake of the Messages API (bench/scripted_claude.py), "
        f"the answer decision written over {args.claude_delay:g} s"
    )


def _input_chars(request: Recorded) -> int:
    """The characters of tool input a streamed reply sent in its input_json deltas."""
    deltas = [json.loads(s.data) for s in request.sent if s.event == "content_block_delta"]
    return sum(len(d["delta"].get("partial_json", "")) for d in deltas)


def _claude_lines(args: argparse.Namespace, outcome: dict) -> list[str]:
    if "claude_answers" not in outcome:
        return []
    tokens = outcome["claude_answer_chars"] / 4  # the fake's estimate, as for its usage
    return [
        f"- Claude answer decisions: {outcome['claude_answers']} (one per mention and the "
        f"server's warm-up run), of which streamed {outcome['claude_streamed']}; the answer's "
        f"tool input is {outcome['claude_answer_chars']:.0f} characters on average (about "
        f"{tokens:.0f} tokens), written in {args.claude_delay:g} s: "
        f"{tokens / args.claude_delay:.0f} tokens/s"
    ]


def _sooner(first: float, final: float) -> str:
    return f"{(1 - first / final) * 100:.0f}%"


def _streaming_lines(args: argparse.Namespace, outcome: dict) -> list[str]:
    if not args.stream:
        return ["- answers not streamed (`--no-stream`): a placeholder, then chat.update"]
    first, final = outcome["first_claim"], outcome["final"]
    if not first.seconds:
        return ["- streamed: no thread had a claim streamed (each was refused or had none)"]
    return [
        f"- streamed answers, {len(first.seconds)} threads with a claim: event → first "
        f"verified claim p50 {statistics.median(first.ms):.0f} ms / p95 {first.p95_ms:.0f} ms; "
        f"event → final answer p50 {statistics.median(final.ms):.0f} ms / p95 "
        f"{final.p95_ms:.0f} ms (same run, same threads)",
        "",
        "| event → | p50 ms | p95 ms |",
        "|---|---|---|",
        f"| first verified claim in the stream | {statistics.median(first.ms):.0f} | "
        f"{first.p95_ms:.0f} |",
        f"| final answer | {statistics.median(final.ms):.0f} | {final.p95_ms:.0f} |",
        f"| first claim sooner by | "
        f"{_sooner(statistics.median(first.ms), statistics.median(final.ms))} | "
        f"{_sooner(first.p95_ms, final.p95_ms)} |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="handbook")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds to wait for answers")
    parser.add_argument("--output", type=Path, default=REPO / "bench" / "results" / "slack_load.md")
    parser.add_argument("--no-output", action="store_true", help="print only; write no file")
    parser.add_argument(
        "--stream",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="answers streamed (the fake Slack streams); --no-stream: placeholder path",
    )
    parser.add_argument("--reasoner", choices=("extractive", "claude"), default="extractive")
    parser.add_argument(
        "--claude-delay",
        type=float,
        default=1.5,
        help="seconds Claude's answer decision takes to write (with --reasoner claude)",
    )
    parser.add_argument(
        "--runs-per-workspace", type=int, default=2, help="KB_SLACK_RUNS_PER_WORKSPACE"
    )
    parser.add_argument("--serve-bare", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_bare:
        serve_bare(args.serve_bare)
        return

    async def run() -> str:
        with tempfile.TemporaryDirectory(prefix="kb-slack-load-") as tmp:
            bot, outcome = await bot_run(args, Path(tmp))
        bare = await bare_run(args)
        return report(args, bot, bare, outcome)

    text = asyncio.run(run())
    print(text)
    if not args.no_output:
        args.output.write_text(text, encoding="utf-8")
        print(f"written to {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
