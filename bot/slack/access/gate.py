"""What one asker may see in one place: the place's access (slack.toml), narrowed for a
guest or someone of another organisation (bot/slack/access/people.py says which they are), and
in a channel shared with another organisation narrowed as for them whoever asks, since
they read the thread too (bot/slack/access/shared_channels.py); and never a private channel's
threads outside that channel (store/private_collections.py).

Every surface that shows document content asks here first: mentions, thread follow-ups,
direct messages and group DMs, `/kb`, the assistant panel, "Why this answer?" and App
Home. An access that shows nothing means one polite line instead (notices.OUTSIDER).
"""

from __future__ import annotations

from bot.slack.access.config import Access, AccessPolicy, Standing
from bot.slack.access.people import People, Person
from bot.slack.access.shared_channels import SharedChannels
from store.private_collections import PrivateCollections


class AccessGate:
    def __init__(
        self,
        *,
        policy: AccessPolicy,
        people: People,
        shared: SharedChannels | None = None,
        private: PrivateCollections | None = None,
    ) -> None:
        self.policy = policy
        self._people = people
        self._shared = shared
        self._private = private

    async def person(self, user_id: str, *, user_team: str | None = None) -> Person:
        return await self._people.person(user_id, user_team=user_team)

    async def in_channel(
        self,
        *,
        channel_id: str,
        user_id: str,
        user_team: str | None = None,
        channel_type: str | None = None,
    ) -> Access:
        place = self.policy.for_channel(channel_id, channel_type=channel_type)
        if await self._seen_outside(channel_id, channel_type):
            place = self.policy.for_person(place, channel_id=channel_id, standing=Standing.EXTERNAL)
        narrowed = await self._narrowed(place, channel_id, user_id, user_team)
        return await self._without_private(narrowed, channel_id)

    async def in_thread_of(self, *, channel_id: str, user_id: str, user_team: str | None) -> Access:
        """For what only the asker sees (a private answer, a trace): who asks, not who reads."""
        place = self.policy.for_channel(channel_id)
        narrowed = await self._narrowed(place, channel_id, user_id, user_team)
        return await self._without_private(narrowed, channel_id)

    async def in_assistant(self, *, channel_id: str, user_id: str) -> Access:
        narrowed = await self._narrowed(self.policy.assistant, channel_id, user_id, None)
        return await self._without_private(narrowed, None)

    async def at_home(self, person: Person) -> Access:
        home = self.policy.for_person(self.policy.home, channel_id=None, standing=person.standing)
        return await self._without_private(home, None)

    async def _without_private(self, access: Access, channel_id: str | None) -> Access:
        """A private channel's threads only in that channel: elsewhere (another channel,
        DMs, the assistant panel, App Home) their collection is hidden, whatever
        slack.toml lets the place see."""
        if self._private is None or access.shows_nothing:
            return access
        return access.hiding(await self._private.hidden_from(channel_id))

    async def _narrowed(
        self, place: Access, channel_id: str, user_id: str, user_team: str | None
    ) -> Access:
        if place.shows_nothing:
            return place
        person = await self._people.person(user_id, user_team=user_team)
        return self.policy.for_person(place, channel_id=channel_id, standing=person.standing)

    async def _seen_outside(self, channel_id: str, channel_type: str | None) -> bool:
        """Whether people of another organisation read what is posted here."""
        if self._shared is None or channel_type == "im" or channel_id.startswith("D"):
            return False
        return await self._shared.with_outsiders(channel_id)
