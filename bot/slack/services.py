"""Everything the listeners hand work to, built once by the composition root (bot/wiring.py)."""

from __future__ import annotations

from dataclasses import dataclass

from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.assistant import AssistantDesk, StoredThreadContext
from bot.slack.config import AccessPolicy, BotOptions
from bot.slack.escalation import EscalationDesk
from bot.slack.feedback import FeedbackDesk
from bot.slack.home import HomeDesk
from bot.slack.messages import MessageDesk
from bot.slack.slash import CommandDesk
from bot.slack.tasks import BackgroundTasks
from bot.slack.trace import TraceDesk
from store.deliveries import DeliveryLog


@dataclass(frozen=True, slots=True)
class SlackServices:
    client: AsyncWebClient
    signing_secret: str | None
    options: BotOptions
    access: AccessPolicy
    deliveries: DeliveryLog
    messages: MessageDesk
    commands: CommandDesk
    assistant: AssistantDesk
    thread_context: StoredThreadContext
    escalations: EscalationDesk
    feedback: FeedbackDesk
    traces: TraceDesk
    home: HomeDesk
    tasks: BackgroundTasks
