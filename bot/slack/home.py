"""App Home: what the bot knows (within App Home's access), how to ask, your recent questions."""

from __future__ import annotations

from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.config import Access
from bot.slack.views import HomeContent, RecentQuestion, SourceSummary, home_view
from store.catalog import Catalog
from store.conversations import ConversationLog


class HomeDesk:
    def __init__(
        self,
        *,
        client: AsyncWebClient,
        catalog: Catalog,
        conversations: ConversationLog,
        access: Access,
    ) -> None:
        self._client = client
        self._catalog = catalog
        self._conversations = conversations
        self._access = access

    async def publish(self, *, user_id: str) -> None:
        sources = [
            SourceSummary(name=s.name, collection=c.name, documents=s.documents)
            for c in await self._catalog.collections()
            if self._access.allows(c.name)
            for s in c.sources
        ]
        recent = await self._conversations.recent_questions(user_id=user_id, limit=5)
        view = home_view(
            HomeContent(
                sources=sources,
                last_reindex=await self._catalog.last_successful_reindex(),
                recent_questions=[RecentQuestion(q.question, q.asked_at) for q in recent],
            )
        )
        await self._client.views_publish(user_id=user_id, view=view)
