"""Cross-cutting concerns, as bolt global middleware, and log redaction.

- `watch_threads`: every message event is shown to the thread watch first, edits and
  deletions included, before `drop_noise` drops them.
- `drop_noise`: the bot's own messages, edits, deletions, joins, (by setting) other
  bots, and channel chatter no thread or setting could make it answer are acknowledged
  and dropped before any listener sees them or anything is written.
- `mark_delivery`: names the delivery (the event id; for slash commands, buttons and
  modals a fingerprint of the payload). The listener acks, then its work starts only
  once that name is recorded in Postgres (`SlackServices.hand_off`): a Slack retry or a
  duplicate delivery to another instance finds it taken and does nothing. Claiming
  after the ack keeps the database off the ack path (bench/results/slack_load.md).
- `mark_delivery` also binds the event id and channel id to the request's log context
  (bot/logs.py), so every line logged for it carries them.
- `RedactingFilter`: bolt logs request bodies in some warnings; message text and tokens
  never reach the log.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from bot.logs import begin
from bot.slack.access.config import BotOptions
from bot.slack.delivery.journal import REPLAYED, KeptRequest
from bot.slack.transport.predicates import delivery_key, event_of, is_noise, never_for_the_bot
from bot.slack.transport.thread_watch import ThreadWatch

log = logging.getLogger(__name__)

Next = Callable[[], Awaitable[None]]
Middleware = Callable[..., Awaitable[BoltResponse | None]]


def watch_threads(watch: ThreadWatch) -> Middleware:
    """Tell the thread watch of every message event, noise included: an edit, a deletion
    or a reply in a thread a `slack` source indexed is read again
    (bot/slack/transport/thread_watch.py). No I/O here: the watch only notes the thread."""

    async def watch_threads(body: dict[str, Any], next: Next) -> Any:
        event = event_of(body)
        if event is not None:
            watch.touched(event)
        return await next()

    return watch_threads


def drop_noise(options: BotOptions) -> Middleware:
    async def drop_noise(body: dict[str, Any], context: AsyncBoltContext, next: Next) -> Any:
        event = event_of(body)
        if event is not None and (
            is_noise(
                event,
                bot_user_id=context.bot_user_id,
                bot_id=context.bot_id,
                ignore_bots=options.ignore_bots,
            )
            or never_for_the_bot(
                event, bot_user_id=context.bot_user_id, help_channels=options.help_channels
            )
        ):
            return await context.ack()
        return await next()

    return drop_noise


DELIVERY = "kb_delivery"


@dataclass(frozen=True, slots=True)
class Delivery:
    key: str
    kind: str
    # The request as received, written to the journal should its claim meet an outage.
    request: KeptRequest | None = None
    replayed: bool = False


def mark_delivery() -> Middleware:
    async def mark_delivery(
        body: dict[str, Any], context: AsyncBoltContext, request: AsyncBoltRequest, next: Next
    ) -> Any:
        found = delivery_key(body)
        if found is not None:
            key, kind = found
            kept = KeptRequest.of(request)
            context[DELIVERY] = Delivery(key, kind, kept, replayed=bool(context.get(REPLAYED)))
        # Every line logged for this request, and by the work it hands off, carries these.
        begin(event_id=body.get("event_id"), channel_id=context.channel_id)
        return await next()

    return mark_delivery


_TOKEN = re.compile(r"xox[a-z]-[A-Za-z0-9-]+|xapp-[A-Za-z0-9-]+")
_BODY = re.compile(r"\{.*\}", re.S)


class RedactingFilter(logging.Filter):
    """Replaces request bodies and tokens in log records with a marker."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = _TOKEN.sub("[token]", _BODY.sub("{…redacted…}", message))
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


def redact_logs(logger: logging.Logger) -> None:
    if not any(isinstance(f, RedactingFilter) for f in logger.filters):
        logger.addFilter(RedactingFilter())
