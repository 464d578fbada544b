"""Socket Mode: the same app over the WebSocket that apps.connections.open hands out."""

from __future__ import annotations

import json

from tests.bot.slack.rig import payload


async def test_an_app_mention_envelope_is_acked_and_answered_in_its_thread(
    start_socket_bot, fake_slack
):
    services = await start_socket_bot()
    (opened,) = await fake_slack.wait_for("apps.connections.open")
    assert opened.headers["Authorization"] == "Bearer xapp-test-token"
    envelope = payload("socket_mode_envelope_events_api_app_mention.json")
    envelope["payload"]["event"]["text"] = "<@W111> How do I request annual leave?"
    await fake_slack.send_socket(envelope)
    ack = await fake_slack.wait_socket_ack(envelope["envelope_id"])
    assert ack == {"envelope_id": envelope["envelope_id"]}
    (placeholder,) = await fake_slack.wait_for("chat.postMessage")
    (update,) = await fake_slack.wait_for("chat.update")
    await services.tasks.wait_idle()
    assert placeholder.params["thread_ts"] == envelope["payload"]["event"]["ts"]
    assert "HRLinks" in json.dumps(update.params["blocks"])


async def test_a_redelivered_envelope_is_answered_once(start_socket_bot, fake_slack):
    services = await start_socket_bot()
    envelope = payload("socket_mode_envelope_events_api_app_mention.json")
    envelope["payload"]["event"]["text"] = "<@W111> How do I request annual leave?"
    await fake_slack.send_socket(envelope)
    await fake_slack.wait_socket_ack(envelope["envelope_id"])
    again = envelope | {"envelope_id": "redelivered-1", "retry_attempt": 1}
    await fake_slack.send_socket(again)
    await fake_slack.wait_socket_ack("redelivered-1")
    await services.tasks.wait_idle()
    assert len(fake_slack.calls_to("chat.postMessage")) == 1


async def test_kb_help_over_socket_mode_is_answered_in_the_ack(start_socket_bot, fake_slack):
    await start_socket_bot()
    envelope = payload("socket_mode_envelope_slash_commands.json")
    envelope["payload"] |= {"command": "/kb", "text": "help"}
    await fake_slack.send_socket(envelope)
    ack = await fake_slack.wait_socket_ack(envelope["envelope_id"])
    assert ack["payload"]["response_type"] == "ephemeral"
    assert "/kb" in ack["payload"]["text"]
