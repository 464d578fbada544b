"""Who is asking: a member of this workspace, one of its guests, or someone of another
organisation (Slack Connect), read from users.info and kept for a short while.

- A message or mention from a shared channel (or a Slack Connect DM) carries
  `user_team`, the asker's own workspace, beside `source_team` (see
  https://docs.slack.dev/apis/slack-connect); a click carries `user.team_id`.
- users.info (https://docs.slack.dev/reference/methods/users.info, the user object at
  https://docs.slack.dev/reference/objects/user-object) says `is_restricted` (a
  multi-channel guest), `is_ultra_restricted` (a single-channel guest), `is_stranger`
  (someone of another organisation this workspace only partly sees), `team_id`, and for
  Enterprise Grid `enterprise_user.enterprise_id` (another workspace of the same
  organisation is not "external").

A user Slack will not describe is treated as external: when in doubt, no content.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.access.config import Standing

log = logging.getLogger(__name__)

# How long what users.info said about someone is trusted: a guest made a member (or the
# reverse) is seen within this many seconds, and a busy thread costs one lookup per asker.
CACHE_SECONDS = 300.0


@dataclass(frozen=True, slots=True)
class Workspace:
    """The workspace the app is installed in (auth.test)."""

    team_id: str
    enterprise_id: str | None = None


@dataclass(frozen=True, slots=True)
class Person:
    user_id: str
    standing: Standing
    is_admin: bool = False  # a workspace admin or owner


def standing_of(
    user: Mapping[str, Any], *, workspace: Workspace, user_team: str | None = None
) -> Standing:
    """A member, a guest or an outsider, from a users.info `user` and the event's team."""
    enterprise = (user.get("enterprise_user") or {}).get("enterprise_id") or user.get(
        "enterprise_id"
    )
    same_org = bool(workspace.enterprise_id) and enterprise == workspace.enterprise_id
    teams = {t for t in (user_team, user.get("team_id")) if t}
    if user.get("is_stranger") or not teams:
        return Standing.EXTERNAL
    if teams != {workspace.team_id} and not same_org:
        return Standing.EXTERNAL
    if user.get("is_restricted") or user.get("is_ultra_restricted"):
        return Standing.GUEST
    return Standing.MEMBER


def person_of(
    user: Mapping[str, Any], *, workspace: Workspace, user_team: str | None = None
) -> Person:
    standing = standing_of(user, workspace=workspace, user_team=user_team)
    admin = standing is Standing.MEMBER and any(
        user.get(flag) for flag in ("is_admin", "is_owner", "is_primary_owner")
    )
    return Person(user_id=str(user.get("id", "")), standing=standing, is_admin=admin)


class People:
    """users.info with a short per-user cache; one per running app (bot/wiring.py)."""

    def __init__(
        self,
        *,
        client: AsyncWebClient,
        workspace: Workspace,
        cache_seconds: float = CACHE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._workspace = workspace
        self._cache_seconds = cache_seconds
        self._clock = clock
        self._users: dict[str, tuple[float, Mapping[str, Any]]] = {}

    async def person(self, user_id: str, *, user_team: str | None = None) -> Person:
        user = await self._user(user_id)
        if user is None:
            return Person(user_id=user_id, standing=Standing.EXTERNAL)
        return person_of(user, workspace=self._workspace, user_team=user_team)

    async def _user(self, user_id: str) -> Mapping[str, Any] | None:
        now = self._clock()
        cached = self._users.get(user_id)
        if cached is not None and now - cached[0] < self._cache_seconds:
            return cached[1]
        try:
            response = await self._client.users_info(user=user_id)
        except SlackApiError as exc:
            log.warning("users.info refused (%s): treated as external", exc.response.get("error"))
            return None
        user = response.get("user") or {}
        self._users = {u: c for u, c in self._users.items() if now - c[0] < self._cache_seconds}
        self._users[user_id] = (now, user)
        return user
