"""HTTP mode: signed requests only, the url_verification handshake, a capped body."""

from __future__ import annotations

import json
import time

from tests.bot.slack.rig import payload


async def test_a_bad_signature_is_refused_with_401_and_nothing_is_done(start_bot, fake_slack):
    bot = await start_bot()
    body = json.dumps(payload("event_app_mention.json"))
    sent = await bot.sender.raw(body, content_type="application/json", signature="v0=" + "0" * 64)
    assert sent.status == 401
    await bot.idle()
    assert fake_slack.calls_to("chat.postMessage") == []


async def test_a_stale_timestamp_is_refused_with_401_even_when_signed_right(start_bot, fake_slack):
    bot = await start_bot()
    sent = await bot.sender.event(
        payload("event_app_mention.json"), timestamp=int(time.time()) - 10 * 60
    )
    assert sent.status == 401
    await bot.idle()
    assert fake_slack.calls_to("chat.postMessage") == []


async def test_url_verification_answers_the_challenge(start_bot):
    bot = await start_bot()
    challenge = payload("event_url_verification.json")
    sent = await bot.sender.event(challenge)
    assert sent.status == 200
    assert json.loads(sent.text) == {"challenge": challenge["challenge"]}


async def test_a_body_over_the_cap_gets_413_before_bolt_reads_it(start_bot, fake_slack):
    bot = await start_bot()
    limit = bot.runtime.settings.slack_max_body_bytes
    body = payload("event_app_mention.json")
    body["event"]["text"] = "x" * (limit + 1)
    sent = await bot.sender.event(body)
    assert sent.status == 413
    assert [c.method for c in fake_slack.calls] == ["auth.test"]  # at start-up only
