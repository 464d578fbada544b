"""Who may answer an escalation posted in the asker's own thread: that channel's members.

Without an escalation channel, the escalation note goes in the thread where the question
was asked. Anyone who can see a public channel can press its buttons, so "Answer & add to
knowledge base" checks membership with conversations.members
(https://docs.slack.dev/reference/methods/conversations.members: `channel`, `cursor`,
`limit` up to 1000; `members` and `response_metadata.next_cursor`).
"""

from __future__ import annotations

from slack_sdk.web.async_client import AsyncWebClient

from store.escalations import Escalation

_PAGE = 1000


def in_channel_thread(escalation: Escalation) -> bool:
    """The question has a channel thread to escalate in (not a DM, not a private answer)."""
    return bool(escalation.thread_ts) and not escalation.channel_id.startswith("D")


def posted_in_thread(escalation: Escalation) -> bool:
    """The escalation note went in the asker's thread, not to an escalation channel."""
    return bool(escalation.thread_ts) and escalation.post_channel_id == escalation.channel_id


async def is_member(client: AsyncWebClient, channel_id: str, user_id: str) -> bool:
    cursor: str | None = None
    while True:
        response = await client.conversations_members(
            channel=channel_id, limit=_PAGE, cursor=cursor
        )
        if user_id in (response.get("members") or []):
            return True
        cursor = (response.get("response_metadata") or {}).get("next_cursor") or None
        if not cursor:
            return False
