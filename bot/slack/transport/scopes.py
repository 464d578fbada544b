"""Every Web API method the bot calls, with the bot-token scopes it needs.

tests/bot/slack/test_scopes.py finds every call in bot/ and checks it is listed here and
that manifest.yml asks for its scopes, so a new call without its scope fails CI.
Scopes from each method's page at https://docs.slack.dev/reference/methods/.
"""

from __future__ import annotations

from types import MappingProxyType

SCOPES = MappingProxyType(
    {
        "auth.test": (),
        "assistant.threads.setStatus": ("assistant:write",),
        "assistant.threads.setSuggestedPrompts": ("assistant:write",),
        "assistant.threads.setTitle": ("assistant:write",),
        "chat.getPermalink": (),
        "chat.postEphemeral": ("chat:write",),
        "chat.postMessage": ("chat:write",),
        "chat.update": ("chat:write",),
        # An answer streamed into its thread (bot/slack/delivery/streaming.py).
        "chat.startStream": ("chat:write",),
        "chat.appendStream": ("chat:write",),
        "chat.stopStream": ("chat:write",),
        # Public and private channels, DMs and group DMs: each kind needs its own scope.
        "conversations.history": (
            "channels:history",
            "groups:history",
            "im:history",
            "mpim:history",
        ),
        "conversations.replies": (
            "channels:history",
            "groups:history",
            "im:history",
            "mpim:history",
        ),
        # The D… id of a DM posted to by user id, to find that post after a 5xx
        # (bot/slack/delivery/posting.py).
        "conversations.open": ("im:write",),
        "conversations.members": ("channels:read", "groups:read", "mpim:read"),
        # Whether a channel is shared with another organisation (never asked of a DM).
        "conversations.info": ("channels:read", "groups:read", "mpim:read"),
        "usergroups.users.list": ("usergroups:read",),
        # A thank-you in the bot's thread gets a reaction (bot/slack/transport/followups.py).
        "reactions.add": ("reactions:write",),
        # App Home: whether the viewer is an admin, who sees the knowledge gaps.
        "users.info": ("users:read",),
        "views.open": (),
        "views.publish": (),
    }
)
