"""Answers streamed into their thread (chat.startStream → appendStream → stopStream).

The fake Web API streams like Slack when its `streaming` is on (and answers the methods
`unknown_method` when off, as a Slack without them would). A streamed answer ends as the
very message the placeholder path posts; a refused stream falls back to that path
without a word of it to the asker; only claims that passed grounding are ever streamed;
a 429 on an append is waited out.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from typing import Any

import asyncpg
import pytest
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.access.config import BotOptions
from bot.slack.delivery.replies import ThreadReply
from bot.slack.delivery.streaming import StreamedReply
from bot.slack.render.blocks import too_long_message
from store.runs import RunRepository
from tests.bot.slack.rig import (
    BOT_TOKEN,
    BOT_USER,
    FakeSlack,
    GatedAnswerer,
    SteppingAnswerer,
    mention,
    payload,
    slash_command,
)

QUESTION = "How do I request annual leave?"
TWO_PARTS = "How do I request annual leave, and how do I book travel?"
STREAM_CALLS = ("chat.startStream", "chat.appendStream", "chat.stopStream")
CLAIM = re.compile(r"^- (?:\*\*.*?\*\* — )?“(.*)” \[(\d+)\]$", re.M)


def streamed_text(fake: FakeSlack) -> str:
    """Everything the bot streamed, in order."""
    return "".join(
        str(c.params.get("markdown_text") or "") for c in fake.calls if c.method in STREAM_CALLS
    )


def bot_messages(fake: FakeSlack, channel: str, thread_ts: str) -> list[dict[str, Any]]:
    return [
        m
        for m in fake.messages[channel]
        if m.get("user") == BOT_USER and m.get("thread_ts") == thread_ts
    ]


def without_run(blocks: Any, run_id: int) -> str:
    return json.dumps(blocks).replace(f'"{run_id}"', '"RUN"').replace(f":{run_id}", ":RUN")


async def test_a_streamed_answer_ends_as_the_message_the_placeholder_path_posts(
    start_bot, fake_slack: FakeSlack
) -> None:
    plain = await start_bot(options=BotOptions(stream_answers=False))
    await plain.sender.event(mention(QUESTION, ts="1700000100.000001", event_id="EvPlain"))
    (posted,) = await fake_slack.wait_for("chat.update")
    await plain.idle()
    assert not [c for c in fake_slack.calls if c.method in STREAM_CALLS]

    fake_slack.streaming = True
    bot = await start_bot(options=BotOptions())
    await bot.sender.event(mention(QUESTION, ts="1700000200.000001", event_id="EvStream"))
    _, streamed = await fake_slack.wait_for("chat.update", count=2)
    await bot.idle()

    (start,) = fake_slack.calls_to("chat.startStream")
    assert start.params["thread_ts"] == "1700000200.000001"
    assert (start.params["recipient_team_id"], start.params["recipient_user_id"]) == (
        "T111",
        "W222",
    )
    (stop,) = fake_slack.calls_to("chat.stopStream")
    assert fake_slack.calls.index(stop) < fake_slack.calls.index(streamed)
    # The stream is the placeholder: nothing else was posted in its thread.
    (message,) = bot_messages(fake_slack, "C111", "1700000200.000001")
    assert message["ts"] == stop.params["ts"] == streamed.params["ts"]
    assert message["streaming_state"] == "completed"
    # ...and it ends as the placeholder path's answer: the same blocks, text, metadata.
    first = posted.params["metadata"]["event_payload"]["run_id"]
    second = message["metadata"]["event_payload"]["run_id"]
    assert without_run(message["blocks"], second) == without_run(posted.params["blocks"], first)
    assert message["text"] == posted.params["text"]
    assert message["metadata"]["event_type"] == posted.params["metadata"]["event_type"]
    assert "HRLinks" in json.dumps(message["blocks"])


async def test_only_claims_that_passed_grounding_are_streamed(
    start_bot, fake_slack: FakeSlack, pool: asyncpg.Pool
) -> None:
    fake_slack.streaming = True
    bot = await start_bot(options=BotOptions())
    await bot.sender.event(mention(QUESTION, ts="1700000300.000001", event_id="EvClaims"))
    (answer,) = await fake_slack.wait_for("chat.update")
    await bot.idle()
    run = await RunRepository(pool).get(answer.params["metadata"]["event_payload"]["run_id"])
    assert run is not None and run.answer is not None
    verified = {(c["quote"], c["citation"]["number"]) for c in run.answer["claims"]}
    streamed = [(quote, int(number)) for quote, number in CLAIM.findall(streamed_text(fake_slack))]
    assert streamed, "the claims are streamed before the answer replaces them"
    assert set(streamed) <= verified
    assert len(streamed) == len(verified)


async def test_a_refused_stream_falls_back_to_the_placeholder_without_an_error(
    start_bot, fake_slack: FakeSlack
) -> None:
    fake_slack.streaming = True
    fake_slack.script(
        "chat.startStream", status=200, body={"ok": False, "error": "channel_type_not_supported"}
    )
    bot = await start_bot(options=BotOptions())
    await bot.sender.event(mention(QUESTION, ts="1700000400.000001", event_id="EvRefused"))
    (answer,) = await fake_slack.wait_for("chat.update")
    await bot.idle()
    assert len(fake_slack.calls_to("chat.startStream")) == 1
    assert not fake_slack.calls_to("chat.appendStream") + fake_slack.calls_to("chat.stopStream")
    (placeholder,) = fake_slack.calls_to("chat.postMessage")
    assert placeholder.params["thread_ts"] == "1700000400.000001"
    (message,) = bot_messages(fake_slack, "C111", "1700000400.000001")
    assert message["ts"] == answer.params["ts"]
    assert message["metadata"]["event_type"] == "kb_answer"
    assert "HRLinks" in json.dumps(message["blocks"])
    assert "wrong" not in message["text"].lower() and "error" not in message["text"].lower()


async def test_a_slack_without_streams_gets_the_placeholder_and_the_answer(
    start_bot, fake_slack: FakeSlack
) -> None:
    bot = await start_bot(options=BotOptions())  # the fake answers unknown_method
    await bot.sender.event(mention(QUESTION, ts="1700000500.000001", event_id="EvOld"))
    (answer,) = await fake_slack.wait_for("chat.update")
    await bot.idle()
    (message,) = bot_messages(fake_slack, "C111", "1700000500.000001")
    assert message["ts"] == answer.params["ts"]
    assert "HRLinks" in json.dumps(message["blocks"])


async def test_steps_are_streamed_at_most_every_300_ms_and_a_429_is_waited_out(
    start_bot, fake_slack: FakeSlack
) -> None:
    fake_slack.streaming = True
    fake_slack.script(
        "chat.appendStream",
        status=429,
        body={"ok": False, "error": "ratelimited"},
        **{"Retry-After": "0"},
    )
    stepping: list[SteppingAnswerer] = []

    def answerer(runtime: Any) -> SteppingAnswerer:
        stepping.append(SteppingAnswerer(runtime.answerer(), "Searching: annual leave"))
        return stepping[0]

    bot = await start_bot(answerer=answerer, options=BotOptions())
    await bot.sender.event(mention(QUESTION, ts="1700000600.000001", event_id="EvSteps"))
    # The 429, then the same append again once Retry-After has passed.
    refused, appended = await fake_slack.wait_for("chat.appendStream", count=2)
    assert refused.params == appended.params
    assert "Searching: annual leave" in appended.params["markdown_text"]
    stepping[0].gate.set()
    (answer,) = await fake_slack.wait_for("chat.update")
    await bot.idle()
    (message,) = bot_messages(fake_slack, "C111", "1700000600.000001")
    assert message["ts"] == answer.params["ts"] and "HRLinks" in json.dumps(message["blocks"])


class PacedClaims:
    """The real answerer, its claims then handed over as a slow reasoner would: the first,
    then (once Slack has it) the rest in a burst."""

    def __init__(self, inner: Any, fake: FakeSlack) -> None:
        self.inner = inner
        self.fake = fake

    async def answer(self, question: str, *, on_claim: Any = None, **kwargs: Any) -> Any:
        answer = await self.inner.answer(question, **kwargs)
        assert on_claim is not None and len(answer.claims) >= 2
        first, *rest = answer.claims
        await on_claim(first, answer.citation(first.citation))
        await self.fake.wait_for("chat.appendStream")
        for claim in rest:
            await on_claim(claim, answer.citation(claim.citation))
        await self.fake.wait_for("chat.appendStream", count=2)
        return answer


async def test_claims_handed_over_in_a_burst_go_in_one_append_300_ms_after_the_last(
    start_bot, fake_slack: FakeSlack
) -> None:
    fake_slack.streaming = True
    bot = await start_bot(
        answerer=lambda runtime: PacedClaims(runtime.answerer(), fake_slack), options=BotOptions()
    )
    await bot.sender.event(mention(TWO_PARTS, ts="1700000700.000001", event_id="EvBurst"))
    await fake_slack.wait_for("chat.update")
    await bot.idle()
    first, burst = fake_slack.calls_to("chat.appendStream")
    assert len(CLAIM.findall(first.params["markdown_text"])) == 1
    assert len(CLAIM.findall(burst.params["markdown_text"])) >= 1
    assert burst.at - first.at >= 0.3
    (start,) = fake_slack.calls_to("chat.startStream")
    sent = [start.at, first.at, burst.at]
    assert all(later - earlier >= 0.3 for earlier, later in itertools.pairwise(sent))


async def test_the_assistant_panel_streams_the_claims_and_keeps_its_status_for_the_steps(
    start_bot, fake_slack: FakeSlack
) -> None:
    fake_slack.streaming = True
    bot = await start_bot(options=BotOptions())
    await bot.sender.event(assistant_started())
    await bot.idle()
    await bot.sender.event(assistant_message(QUESTION, ts="1726133800.1"))
    (answer,) = await fake_slack.wait_for("chat.update")
    await bot.idle()
    assert fake_slack.calls_to("assistant.threads.setStatus")
    (start,) = fake_slack.calls_to("chat.startStream")
    assert CLAIM.search(start.params["markdown_text"]), "the stream opens with a claim"
    (stop,) = fake_slack.calls_to("chat.stopStream")
    thread = str(start.params["thread_ts"])
    streamed = [m for m in bot_messages(fake_slack, "D111", thread) if "streaming_state" in m]
    (message,) = streamed
    assert message["ts"] == stop.params["ts"] == answer.params["ts"]
    assert message["metadata"]["event_type"] == "kb_answer"
    assert "HRLinks" in json.dumps(message["blocks"])
    # The greeting is the only message posted: the answer is the stream, replaced.
    assert len(fake_slack.calls_to("chat.postMessage")) == 1


def assistant_started() -> dict[str, Any]:
    body = payload("event_assistant_thread_started.json")
    body["event_id"] = "EvStarted"
    return body


def assistant_message(text: str, *, ts: str) -> dict[str, Any]:
    body = payload("event_message_im_in_thread.json")
    body["event_id"] = f"Ev{ts}"
    body["event"] |= {"text": text, "ts": ts, "event_ts": ts}
    return body


async def test_a_stream_slack_expired_mid_answer_is_still_replaced_by_the_answer(
    start_bot, fake_slack: FakeSlack
) -> None:
    fake_slack.streaming = True
    expired = {"ok": False, "error": "message_not_in_streaming_state"}
    fake_slack.script("chat.appendStream", status=200, body=expired)
    fake_slack.script("chat.stopStream", status=200, body=expired)
    stepping: list[SteppingAnswerer] = []

    def answerer(runtime: Any) -> SteppingAnswerer:
        stepping.append(SteppingAnswerer(runtime.answerer(), "Searching: annual leave"))
        return stepping[0]

    bot = await start_bot(answerer=answerer, options=BotOptions())
    await bot.sender.event(mention(QUESTION, ts="1700000800.000001", event_id="EvExpired"))
    await fake_slack.wait_for("chat.appendStream")
    fake_slack.expire_streams()  # what the scripted refusals say happened
    stepping[0].gate.set()
    (answer,) = await fake_slack.wait_for("chat.update")
    await bot.idle()
    assert len(fake_slack.calls_to("chat.appendStream")) == 1  # no more appends once refused
    (message,) = bot_messages(fake_slack, "C111", "1700000800.000001")
    assert message["ts"] == answer.params["ts"]
    assert message["metadata"]["event_type"] == "kb_answer"
    assert "HRLinks" in json.dumps(message["blocks"])
    assert not fake_slack.calls_to("chat.postMessage")


@pytest.mark.parametrize("refused", [False, True], ids=["streamed", "refused"])
async def test_socket_mode_streams_and_falls_back_as_http_does(
    start_socket_bot, fake_slack: FakeSlack, refused: bool
) -> None:
    fake_slack.streaming = True
    if refused:
        fake_slack.script(
            "chat.startStream", status=200, body={"ok": False, "error": "missing_recipient_team_id"}
        )
    services = await start_socket_bot(options=BotOptions())
    envelope = payload("socket_mode_envelope_events_api_app_mention.json")
    envelope["payload"]["event"]["text"] = f"<@W111> {QUESTION}"
    await fake_slack.send_socket(envelope)
    await fake_slack.wait_socket_ack(envelope["envelope_id"])
    (answer,) = await fake_slack.wait_for("chat.update")
    await services.tasks.wait_idle()
    event = envelope["payload"]["event"]
    (message,) = bot_messages(fake_slack, event["channel"], event["ts"])
    assert message["ts"] == answer.params["ts"]
    assert message["metadata"]["event_type"] == "kb_answer"
    assert "HRLinks" in json.dumps(message["blocks"])
    assert len(fake_slack.calls_to("chat.postMessage")) == (1 if refused else 0)
    assert len(fake_slack.calls_to("chat.stopStream")) == (0 if refused else 1)


async def test_the_run_starts_while_the_stream_is_still_opening(
    start_bot, fake_slack: FakeSlack, pool: asyncpg.Pool
) -> None:
    """chat.startStream is held until the run has begun (or 10 s have passed): opened one
    after the other, the run would wait for the stream, and the hold for the run."""
    fake_slack.streaming = True
    answerer: list[GatedAnswerer] = []

    def passing_through(runtime: Any) -> GatedAnswerer:
        answerer.append(GatedAnswerer(runtime.answerer()))
        answerer[0].gate.set()  # held by nothing: `started` only tells when it was called
        return answerer[0]

    began_while_opening: list[bool] = []

    async def hold_until_the_run_began(call: Any) -> None:
        try:
            await asyncio.wait_for(answerer[0].started.wait(), 10)
        except TimeoutError:
            began_while_opening.append(False)
        else:
            began_while_opening.append(True)

    fake_slack.on_call["chat.startStream"] = hold_until_the_run_began
    bot = await start_bot(answerer=passing_through, options=BotOptions())
    await bot.sender.event(mention(QUESTION, ts="1700000950.000001", event_id="EvOverlap"))
    (answer,) = await fake_slack.wait_for("chat.update")
    await bot.idle()
    assert began_while_opening == [True]
    # ...and the answer is the one message of the thread, its claims streamed first.
    (message,) = bot_messages(fake_slack, "C111", "1700000950.000001")
    assert message["ts"] == answer.params["ts"] and message["streaming_state"] == "completed"
    assert CLAIM.findall(streamed_text(fake_slack))
    run_id = message["metadata"]["event_payload"]["run_id"]
    assert await pool.fetchval("SELECT status FROM agent_runs WHERE id = $1", run_id) == "finished"


async def test_a_429_on_starting_the_stream_puts_the_placeholder_up_at_once(
    start_bot, fake_slack: FakeSlack
) -> None:
    fake_slack.streaming = True
    fake_slack.script(
        "chat.startStream",
        status=429,
        body={"ok": False, "error": "ratelimited"},
        **{"Retry-After": "30"},
    )
    bot = await start_bot(options=BotOptions())
    await bot.sender.event(mention(QUESTION, ts="1700000900.000001", event_id="EvBusy"))
    (answer,) = await fake_slack.wait_for("chat.update")
    await bot.idle()
    assert len(fake_slack.calls_to("chat.startStream")) == 1  # not tried again after 30 s
    (placeholder,) = fake_slack.calls_to("chat.postMessage")
    assert placeholder.params["thread_ts"] == "1700000900.000001"
    (message,) = bot_messages(fake_slack, "C111", "1700000900.000001")
    assert message["ts"] == answer.params["ts"] and "HRLinks" in json.dumps(message["blocks"])


async def test_kb_streams_its_answer_into_the_thread_of_the_posted_question(
    start_bot, fake_slack: FakeSlack
) -> None:
    fake_slack.streaming = True
    bot = await start_bot(options=BotOptions())
    await bot.sender.command(slash_command(QUESTION, response_url=fake_slack.hook_url()))
    (answer,) = await fake_slack.wait_for("chat.update")
    await bot.idle()
    (question,) = fake_slack.calls_to("chat.postMessage")  # no placeholder: the stream is
    assert question.params["metadata"]["event_type"] == "kb_question"
    asked_ts = fake_slack.messages["C111"][0]["ts"]
    (start,) = fake_slack.calls_to("chat.startStream")
    assert start.params["thread_ts"] == asked_ts and start.params["recipient_user_id"] == "W222"
    (message,) = bot_messages(fake_slack, "C111", asked_ts)
    assert message["ts"] == answer.params["ts"] and "HRLinks" in json.dumps(message["blocks"])
    assert message["metadata"]["event_type"] == "kb_answer"


async def test_a_dm_thread_is_streamed_and_a_top_level_dm_keeps_its_placeholder(
    start_bot, fake_slack: FakeSlack
) -> None:
    fake_slack.streaming = True
    bot = await start_bot(options=BotOptions())
    threaded = payload("event_message_im_in_thread.json")
    threaded["event"]["text"] = QUESTION
    await bot.sender.event(threaded)
    (answer,) = await fake_slack.wait_for("chat.update")
    await bot.idle()
    (start,) = fake_slack.calls_to("chat.startStream")
    assert (start.params["channel"], start.params["thread_ts"]) == (
        "D111",
        threaded["event"]["thread_ts"],
    )
    assert answer.params["ts"] == fake_slack.calls_to("chat.stopStream")[0].params["ts"]
    assert not fake_slack.calls_to("chat.postMessage")

    top = payload("event_message_im_in_thread.json")
    top["event_id"] = "EvTopDm"
    top["event"] |= {"text": QUESTION, "ts": "1700001000.000001", "event_ts": "1700001000.000001"}
    del top["event"]["thread_ts"], top["event"]["parent_user_id"]
    await bot.sender.event(top)
    await fake_slack.wait_for("chat.update", count=2)
    await bot.idle()
    assert len(fake_slack.calls_to("chat.startStream")) == 1  # no thread: nothing to stream in
    (placeholder,) = fake_slack.calls_to("chat.postMessage")
    assert placeholder.params["channel"] == "D111" and "thread_ts" not in placeholder.params


async def test_a_slack_without_streams_is_asked_once_not_on_every_question(
    start_bot, fake_slack: FakeSlack
) -> None:
    bot = await start_bot(options=BotOptions())  # the fake answers unknown_method
    for n in range(2):
        body = mention(QUESTION, ts=f"1700001100.00000{n}", event_id=f"EvNoStreams{n}")
        await bot.sender.event(body)
        await fake_slack.wait_for("chat.update", count=n + 1)
        await bot.idle()
    assert len(fake_slack.calls_to("chat.startStream")) == 1
    assert len(fake_slack.calls_to("chat.postMessage")) == 2  # two placeholders, two answers


async def test_kb_slack_stream_false_never_tries_to_stream(
    start_bot, fake_slack: FakeSlack
) -> None:
    fake_slack.streaming = True
    bot = await start_bot(options=BotOptions(stream_answers=False))
    await bot.sender.event(mention(QUESTION, ts="1700001200.000001", event_id="EvOff"))
    await fake_slack.wait_for("chat.update")
    await bot.idle()
    assert not [c for c in fake_slack.calls if c.method in STREAM_CALLS]
    assert len(fake_slack.calls_to("chat.postMessage")) == 1


async def test_a_step_that_comes_after_the_reply_ended_starts_no_stream(
    fake_slack: FakeSlack,
) -> None:
    fake_slack.streaming = True
    client = AsyncWebClient(token=BOT_TOKEN, base_url=fake_slack.base_url)
    thread = "1700001300.000001"
    placeholder = ThreadReply(client, channel_id="C111", thread_ts=thread)
    reply = StreamedReply(
        client,
        fallback=placeholder,
        channel_id="C111",
        thread_ts=thread,
        recipient_team_id="T111",
        recipient_user_id="W222",
    )
    await reply.failed(too_long_message(length=5000, limit=4000))  # before any work began
    await reply.working(step="Searching: annual leave")
    assert not [c for c in fake_slack.calls if c.method in STREAM_CALLS]
    (line,) = fake_slack.calls_to("chat.postMessage")
    assert line.params["thread_ts"] == thread
