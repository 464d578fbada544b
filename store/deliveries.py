"""The slack_deliveries table: each Slack delivery is claimed once, before any work starts.

`claim` is one INSERT … ON CONFLICT DO NOTHING: the first process to insert a key does
the work; a Slack retry, or the same event delivered to a second instance sharing the
database, finds the key taken. Old keys are pruned (Slack retries within minutes).

A question's row also says what became of it: where its answer goes, the placeholder
once posted, and when it finished and how; for a `/kb` question also the asker and
the command's response_url, since a private answer has no message a chat.update could
reach, and what a re-run needs (`Question`).

A question's row carries a lease: set at the claim, renewed by the process answering
it while it works (`renew`, a heartbeat). A row unfinished with its lease run out is a
question whose process died mid-answer; `expired` finds them for the sweep
(bot/slack/delivery/sweep.py), which re-runs each once (`take`) and otherwise tells its asker
(`abandon`), so a question is never silently dropped. Both only touch a row whose lease
has run out, so a live process's question is never taken from it.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from datetime import timedelta

import asyncpg

# Slack honours a response_url for 30 minutes; a minute's margin for the call itself.
RESPONSE_URL_LIFETIME = timedelta(minutes=29)


@dataclass(frozen=True, slots=True)
class Question:
    """What re-running a question needs: who asked what, where and how."""

    team_id: str
    user_id: str
    text: str
    surface: str  # mention, command, private, thread, dm, assistant
    channel_type: str | None = None
    message_ts: str | None = None  # the message that asked (thread history stops there)
    with_history: bool = False


@dataclass(frozen=True, slots=True)
class Unfinished:
    """A question acked but never answered: where to tell the asker."""

    key: str
    channel_id: str
    thread_ts: str | None
    placeholder_ts: str | None
    # A /kb question: who asked, and the response_url while Slack still honours it.
    asker_user_id: str | None = None
    response_url: str | None = None
    placeholder_ephemeral: bool = False
    runs: int = 1  # times it was started: the first run, and a re-run
    question: Question | None = None  # None: claimed before questions were kept


class DeliveryLog:
    def __init__(self, pool: asyncpg.Pool, *, lease: timedelta = timedelta(seconds=90)) -> None:
        self._pool = pool
        self._lease = lease

    async def claim(
        self,
        key: str,
        *,
        kind: str,
        reply_channel: str | None = None,
        reply_thread_ts: str | None = None,
        asker_user_id: str | None = None,
        response_url: str | None = None,
        question: Question | None = None,
    ) -> bool:
        """True if this call recorded `key` first; False if it was already taken.

        `reply_channel` (and thread) mark a question whose answer is followed to the end:
        it gets a lease, and `question` is kept for a re-run; `asker_user_id` and
        `response_url` say how to reach a `/kb` asker privately.
        """
        inserted = await self._pool.fetchval(
            """INSERT INTO slack_deliveries
                   (key, kind, reply_channel, reply_thread_ts, asker_user_id, response_url,
                    question, lease_until)
               VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb,
                       CASE WHEN $3::text IS NOT NULL THEN now() + $8::interval END)
               ON CONFLICT (key) DO NOTHING RETURNING true""",
            key,
            kind,
            reply_channel,
            reply_thread_ts,
            asker_user_id,
            response_url,
            _storable(question) if question is not None else None,
            self._lease,
        )
        return bool(inserted)

    async def renew(self, keys: list[str]) -> None:
        """Extend the leases of the questions this process is answering (its heartbeat)."""
        if keys:
            await self._pool.execute(
                """UPDATE slack_deliveries SET lease_until = now() + $2::interval
                   WHERE key = ANY($1::text[]) AND finished_at IS NULL""",
                keys,
                self._lease,
            )

    async def take(self, key: str) -> bool:
        """Take an expired question for its re-run (a fresh lease, one more run); False if
        its process renewed it, it finished, or another replica took it meanwhile."""
        taken = await self._pool.fetchval(
            """UPDATE slack_deliveries
               SET runs = runs + 1, lease_until = now() + $2::interval
               WHERE key = $1 AND finished_at IS NULL AND lease_until < now()
               RETURNING true""",
            key,
            self._lease,
        )
        return bool(taken)

    async def replying_in(self, key: str, *, thread_ts: str) -> None:
        """The answer's thread, once it exists (a `/kb` question posted by the bot)."""
        await self._pool.execute(
            "UPDATE slack_deliveries SET reply_thread_ts = $2 WHERE key = $1", key, thread_ts
        )

    async def placeholder_posted(self, key: str, *, ts: str) -> None:
        await self._pool.execute(
            "UPDATE slack_deliveries SET placeholder_ts = $2 WHERE key = $1", key, ts
        )

    async def placeholder_shown_ephemerally(self, key: str) -> None:
        """The placeholder went out through the response_url (it has no ts)."""
        await self._pool.execute(
            "UPDATE slack_deliveries SET placeholder_ephemeral = true WHERE key = $1", key
        )

    async def finish(self, key: str, *, outcome: str) -> None:
        # The response_url can post to the asker for 30 minutes, and the question is the
        # asker's words: neither is kept past its use.
        await self._pool.execute(
            """UPDATE slack_deliveries
               SET finished_at = now(), outcome = $2, response_url = NULL, question = NULL
               WHERE key = $1 AND finished_at IS NULL""",
            key,
            outcome,
        )

    async def abandon(self, key: str) -> bool:
        """Mark an expired question abandoned; False if it finished or was renewed meanwhile.

        The caller has read the response_url (`expired`) and uses it once, if at all.
        """
        changed = await self._pool.fetchval(
            """UPDATE slack_deliveries
               SET finished_at = now(), outcome = 'abandoned', response_url = NULL,
                   question = NULL
               WHERE key = $1 AND finished_at IS NULL AND lease_until < now()
               RETURNING true""",
            key,
        )
        return bool(changed)

    async def reopen(self, key: str) -> None:
        """Undo `abandon` (the asker could not be told), so a later sweep tries again."""
        await self._pool.execute(
            """UPDATE slack_deliveries SET finished_at = NULL, outcome = NULL
               WHERE key = $1 AND outcome = 'abandoned'""",
            key,
        )

    async def expired(self) -> list[Unfinished]:
        """Questions never finished whose lease ran out (their process died), oldest first.

        A response_url older than Slack honours it is left out: useless, and a secret.
        """
        rows = await self._pool.fetch(
            """SELECT key, reply_channel, reply_thread_ts, placeholder_ts, asker_user_id,
                      CASE WHEN received_at > now() - $1::interval THEN response_url END
                          AS response_url,
                      placeholder_ephemeral, runs, question
               FROM slack_deliveries
               WHERE reply_channel IS NOT NULL AND finished_at IS NULL
                 AND lease_until < now()
               ORDER BY received_at""",
            RESPONSE_URL_LIFETIME,
        )
        return [
            Unfinished(
                key=r["key"],
                channel_id=r["reply_channel"],
                thread_ts=r["reply_thread_ts"],
                placeholder_ts=r["placeholder_ts"],
                asker_user_id=r["asker_user_id"],
                response_url=r["response_url"],
                placeholder_ephemeral=r["placeholder_ephemeral"],
                runs=r["runs"],
                question=Question(**json.loads(r["question"])) if r["question"] else None,
            )
            for r in rows
        ]

    async def prune(self, *, older_than: timedelta) -> int:
        """Forget keys older than `older_than`; return how many went."""
        result = await self._pool.execute(
            "DELETE FROM slack_deliveries WHERE received_at < now() - $1::interval", older_than
        )
        return int(result.split()[-1])


# jsonb refuses NUL (\u0000) and lone surrogates, and a question may hold either: kept
# without them (the run that answers it cleans its text the same way).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _storable(question: Question) -> str:
    fields = {
        k: _UNSTORABLE.sub("", v) if isinstance(v, str) else v for k, v in asdict(question).items()
    }
    return json.dumps(fields)
