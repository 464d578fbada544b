"""App Home: what the bot knows (within App Home's access), how to ask, your recent questions
(each linked to its thread), and for workspace admins the knowledge gaps of `kb stats`."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.access.gate import AccessGate
from bot.slack.access.people import Person
from bot.slack.render.views import (
    HomeContent,
    KnowledgeGap,
    RecentQuestion,
    SourceSummary,
    home_view,
)
from store.catalog import Catalog
from store.conversations import ConversationLog
from store.conversations import RecentQuestion as AskedBefore

log = logging.getLogger(__name__)

KnowledgeGaps = Callable[[], Awaitable[Sequence[KnowledgeGap]]]
"""The most frequent questions that escalated or got 👎 lately, grouped by meaning."""


class HomeDesk:
    def __init__(
        self,
        *,
        client: AsyncWebClient,
        catalog: Catalog,
        conversations: ConversationLog,
        gate: AccessGate,
        knowledge_gaps: KnowledgeGaps | None = None,
    ) -> None:
        self._client = client
        self._catalog = catalog
        self._conversations = conversations
        self._gate = gate
        self._knowledge_gaps = knowledge_gaps

    async def publish(self, *, user_id: str) -> None:
        person = await self._gate.person(user_id)
        access = await self._gate.at_home(person)
        sources = [
            SourceSummary(name=s.name, collection=c.name, documents=s.documents)
            for c in await self._catalog.collections()
            if access.allows(c.name)
            for s in c.sources
        ]
        recent = await self._conversations.recent_questions(user_id=user_id, limit=5)
        view = home_view(
            HomeContent(
                sources=sources,
                last_reindex=await self._catalog.last_successful_reindex(),
                recent_questions=[
                    RecentQuestion(q.question, q.asked_at, await self._thread_link(q))
                    for q in recent
                ],
                gaps=await self._gaps_for(person),
            )
        )
        await self._client.views_publish(user_id=user_id, view=view)

    async def _thread_link(self, asked: AskedBefore) -> str | None:
        if not asked.thread_ts:
            return None  # a private answer has no thread to go back to
        try:
            response = await self._client.chat_getPermalink(
                channel=asked.channel_id, message_ts=asked.thread_ts
            )
        except SlackApiError as exc:
            log.info("no link to an earlier question's thread: %s", exc.response.get("error"))
            return None
        permalink = response.get("permalink")
        return str(permalink) if permalink else None

    async def _gaps_for(self, person: Person) -> Sequence[KnowledgeGap] | None:
        """The gaps for a workspace admin or owner (users.info), None for everyone else."""
        if self._knowledge_gaps is None or not person.is_admin:
            return None
        return await self._knowledge_gaps()
