"""Escalation, closing the loop: hand a question to people, and learn from their answer.

"Escalate to a human" posts the question, the asker, a permalink to the thread, what was
found (with citations) and what is missing to the escalation channel, pinging the
configured user group. Without an escalation channel the same note goes in the asker's
thread, for the people of that channel, and only its members may answer it for the
knowledge base; a question with no channel thread (a DM, a private answer) gets a line
saying where to ask instead (KB_SLACK_ESCALATION_ELSEWHERE). The original reply then
says who escalated it, with a link. The escalation message offers "Mark resolved" and
"Answer & add to knowledge base": the expert's answer is posted in the asker's thread
(or sent to the asker directly when the answer was private), stored with the escalation,
and indexed at once as a document of the escalations source, in the collection of the
channel the question came from.

What the escalation channel is shown is filtered twice: by what the asking channel may
see and by what the escalation channel may see.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from agent.answer import Answer
from bot.metrics import Metrics
from bot.slack.access.config import AccessPolicy, BotOptions, Standing
from bot.slack.access.members import in_channel_thread, is_member, posted_in_thread
from bot.slack.access.people import People
from bot.slack.access.visibility import visible_answer
from bot.slack.delivery.posting import Poster
from bot.slack.delivery.threads import answer_metadata
from bot.slack.render.blocks import (
    EscalationPost,
    ReplyOptions,
    SlackMessage,
    answer_messages,
    escalation_message,
    expert_answer_messages,
    mark_escalated,
    resolved_escalation_message,
)
from bot.slack.render.notices import (
    ESCALATION_ELSEWHERE,
    ESCALATION_FAILED,
    ESCALATION_NOT_FOUND,
    EXPERTS_ONLY,
    NOT_A_MEMBER,
    NOT_THIS_MESSAGE,
    RUN_NOT_FOUND,
    added_to_knowledge,
    already_escalated,
)
from bot.slack.render.views import ExpertAnswerForm, expert_answer_modal
from bot.slack.surfaces.click_checks import escalation_post_clicked, run_belongs_to_click
from bot.slack.surfaces.clicks import Click
from bot.slack.surfaces.responder import Responder
from bot.slack.transport.web import retry_handlers
from store.conversations import ConversationLog
from store.escalations import Escalation, EscalationRepository, NewEscalation
from store.runs import RunRepository

log = logging.getLogger(__name__)

IndexCollection = Callable[[str], Awaitable[object]]
"""Index the escalations source of one collection now."""


class EscalationDesk:
    def __init__(
        self,
        *,
        client: AsyncWebClient,
        runs: RunRepository,
        escalations: EscalationRepository,
        conversations: ConversationLog,
        access: AccessPolicy,
        options: BotOptions,
        index_collection: IndexCollection,
        metrics: Metrics | None = None,
        people: People | None = None,
    ) -> None:
        self._people = people
        self._client = client
        self._runs = runs
        self._escalations = escalations
        self._conversations = conversations
        self._access = access
        self._options = options
        self._index_collection = index_collection
        self._metrics = metrics

    async def escalate(self, click: Click) -> None:
        run = await self._runs.get(click.run_id) if click.run_id is not None else None
        if run is None or run.answer is None:
            await self._tell(click, RUN_NOT_FOUND)
            return
        if not run_belongs_to_click(run.origin, click):
            await self._tell(click, NOT_THIS_MESSAGE)
            return
        answer = Answer.from_dict(run.answer)
        escalation = await self._open(click, run.id, answer, run.origin)
        if escalation is None:
            existing = await self._escalations.for_run(run.id)
            await self._tell(
                click, already_escalated(existing.post_permalink if existing else None)
            )
            return
        channel, thread_ts = self._options.escalation_channel, None
        if channel is None:
            if not in_channel_thread(escalation):
                await self._escalations.forget(escalation.id)
                await self._tell(click, self._options.escalation_elsewhere or ESCALATION_ELSEWHERE)
                return
            channel, thread_ts = escalation.channel_id, escalation.thread_ts
        try:
            escalation = await self._post(escalation, answer, channel, thread_ts=thread_ts)
        except (SlackApiError, aiohttp.ClientError, OSError, TimeoutError) as exc:
            # Nothing reached the experts: forget it, so pressing again can succeed.
            await self._escalations.forget(escalation.id)
            slack_error = exc.response.get("error") if isinstance(exc, SlackApiError) else None
            log.warning("escalation post failed: %s", slack_error or type(exc).__name__)
            await self._tell(click, ESCALATION_FAILED)
            return
        if self._metrics is not None:
            self._metrics.escalated()
        await self._mark_reply(click, escalation, answer)

    async def _open(
        self, click: Click, run_id: int, answer: Answer, origin: Mapping[str, str]
    ) -> Escalation | None:
        posted = await self._conversations.for_run(run_id)
        channel_id = posted.channel_id if posted else origin.get("channel", click.channel_id or "")
        thread_ts = posted.thread_ts if posted else origin.get("thread")
        return await self._escalations.open(
            NewEscalation(
                run_id=run_id,
                team_id=click.team_id,
                channel_id=channel_id,
                thread_ts=thread_ts,
                asker_id=posted.user_id if posted else origin.get("user", click.user_id),
                question=posted.question if posted else answer.question,
                collection=self._access.for_channel(channel_id).home_collection,
                escalated_by=click.user_id,
                thread_permalink=await self._permalink(channel_id, thread_ts),
            )
        )

    async def _post(
        self, escalation: Escalation, answer: Answer, channel: str, *, thread_ts: str | None
    ) -> Escalation:
        # Under a post key, so a 5xx after Slack posted it finds the post instead of
        # posting the escalation twice (bot/slack/delivery/posting.py).
        ts = await Poster(self._client).post(
            key=f"escalation-{escalation.id}",
            channel=channel,
            thread_ts=thread_ts,
            **self._post_message(escalation, answer).post_kwargs(),
        )
        return await self._escalations.posted(
            escalation.id, channel_id=channel, ts=ts, permalink=await self._permalink(channel, ts)
        )

    def _post_message(
        self, escalation: Escalation, answer: Answer, *, answer_link: str | None = None
    ) -> SlackMessage:
        shown = visible_answer(answer, self._access.for_channel(escalation.channel_id))
        if self._options.escalation_channel:
            shown = visible_answer(
                shown, self._access.for_channel(self._options.escalation_channel)
            )
        post = EscalationPost(
            escalation_id=escalation.id,
            run_id=escalation.run_id,
            question=escalation.question,
            asker=escalation.asker_id,
            answer=shown,
            escalated_by=escalation.escalated_by,
            channel=escalation.channel_id,
            thread_link=escalation.thread_permalink,
            user_group=self._options.escalation_usergroup,
        )
        if escalation.status == "open":
            return escalation_message(post)
        return resolved_escalation_message(
            post,
            resolved_by=escalation.resolved_by or "",
            answered=escalation.answer is not None,
            answer_link=answer_link,
        )

    async def _mark_reply(self, click: Click, escalation: Escalation, answer: Answer) -> None:
        """The reply now says who escalated it, with a link, where its button was."""
        if click.message_blocks and click.channel_id and click.message_ts:
            await self._client.chat_update(
                channel=click.channel_id,
                ts=click.message_ts,
                text=click.message_text,
                blocks=mark_escalated(
                    click.message_blocks,
                    escalated_by=click.user_id,
                    link=escalation.post_permalink,
                ),
                metadata=answer_metadata(escalation.run_id),
            )
        elif click.response_url:  # an ephemeral reply: Slack does not send its blocks back
            shown = visible_answer(answer, self._access.for_channel(escalation.channel_id))
            options = ReplyOptions(
                escalated_by=click.user_id, escalation_link=escalation.post_permalink
            )
            last = answer_messages(shown, options=options)[-1]
            hook = AsyncWebhookClient(click.response_url, retry_handlers=retry_handlers())
            await hook.send(**last.update_kwargs(), replace_original=True)

    async def resolve(self, click: Click) -> None:
        if click.escalation_id is None:
            return
        found = await self._escalations.get(click.escalation_id)
        if found is not None and not await self._on_its_post(click, found):
            return
        escalation = await self._escalations.resolve(click.escalation_id, resolved_by=click.user_id)
        if escalation is None:
            await self._tell(click, ESCALATION_NOT_FOUND)
            return
        await self._refresh_post(escalation)

    async def open_answer_form(self, click: Click) -> None:
        escalation = (
            await self._escalations.get(click.escalation_id) if click.escalation_id else None
        )
        if escalation is None or not click.trigger_id:
            await self._tell(click, ESCALATION_NOT_FOUND)
            return
        if not await self._on_its_post(click, escalation):
            return
        if not await self._may_answer(escalation, click.user_id):
            await self._tell(click, NOT_A_MEMBER if posted_in_thread(escalation) else EXPERTS_ONLY)
            return
        form = ExpertAnswerForm(
            escalation_id=escalation.id, run_id=escalation.run_id, question=escalation.question
        )
        await self._client.views_open(trigger_id=click.trigger_id, view=expert_answer_modal(form))

    async def _on_its_post(self, click: Click, escalation: Escalation) -> bool:
        """The click is on this escalation's post; otherwise say so and do nothing."""
        if escalation_post_clicked(
            post_channel_id=escalation.post_channel_id, post_ts=escalation.post_ts, click=click
        ):
            return True
        await self._tell(click, NOT_THIS_MESSAGE)
        return False

    async def is_expert(self, user_id: str) -> bool:
        """A member of the escalation channel or of the configured expert user group: the
        only people whose answers are written into the knowledge base."""
        if not user_id:
            return False
        group, channel = self._options.escalation_usergroup, self._options.escalation_channel
        if group and user_id in await self._listed("usergroups.users.list", usergroup=group):
            return True
        return bool(channel) and user_id in await self._listed(
            "conversations.members", channel=channel, limit=200
        )

    async def _listed(self, method: str, **args: object) -> set[str]:
        """Every user id a members/users list returns, through all its pages; none when
        Slack refuses (an unknown group, a channel the bot left): then nobody is let in."""
        key = "users" if method.startswith("usergroups") else "members"
        found: set[str] = set()
        try:
            async for page in await self._client.api_call(method, params=args):
                found.update(page.get(key) or [])
        except SlackApiError as exc:
            log.warning("%s failed: %s", method, exc.response.get("error"))
        return found

    async def expert_answer(self, *, escalation_id: int, expert_id: str, text: str) -> None:
        """Post the expert's answer to the asker, store it, and index it right away."""
        found = await self._escalations.get(escalation_id)
        if found is None or not await self._may_answer(found, expert_id):
            # The form opens only for those who may answer; a forged submission stores nothing.
            log.warning("an expert answer from someone who may not answer was dropped")
            return
        escalation = await self._escalations.resolve(
            escalation_id, resolved_by=expert_id, answer=text
        )
        if escalation is None:
            return
        messages = expert_answer_messages(
            text=text, expert=expert_id, escalation_link=escalation.post_permalink
        )
        # In the asker's thread; when the question was answered privately, to the asker.
        channel = escalation.channel_id if escalation.thread_ts else escalation.asker_id
        poster = Poster(self._client)
        posted = [
            await poster.post_where(
                key=f"escalation-{escalation.id}-answer-{part}",
                channel=channel,
                thread_ts=escalation.thread_ts,
                **message.post_kwargs(),
            )
            for part, message in enumerate(messages)
        ]
        answer_link = await self._permalink(*posted[0])
        await self._refresh_post(escalation, answer_link=answer_link)
        await self._index_collection(escalation.collection)
        if escalation.post_channel_id:
            await self._client.chat_postEphemeral(
                channel=escalation.post_channel_id,
                user=expert_id,
                text=added_to_knowledge(escalation.collection),
            )

    async def _refresh_post(
        self, escalation: Escalation, *, answer_link: str | None = None
    ) -> None:
        if not (escalation.post_channel_id and escalation.post_ts):
            return
        run = await self._runs.get(escalation.run_id)
        answer = Answer.from_dict(run.answer) if run and run.answer else None
        if answer is None:
            return
        message = self._post_message(escalation, answer, answer_link=answer_link)
        await self._client.chat_update(
            channel=escalation.post_channel_id, ts=escalation.post_ts, **message.update_kwargs()
        )

    async def _may_answer(self, escalation: Escalation, user_id: str) -> bool:
        """A note in the asker's own thread: that channel's members (conversations.members);
        a post in the configured escalation channel: the experts (its members or the group).
        Either way only members of this workspace: a guest or a partner in a shared channel
        never writes into the knowledge base."""
        if not await self._of_this_workspace(user_id):
            return False
        if escalation.post_channel_id is None or not posted_in_thread(escalation):
            return await self.is_expert(user_id)
        try:
            return await is_member(self._client, escalation.post_channel_id, user_id)
        except SlackApiError as exc:
            log.warning("cannot list the channel's members: %s", exc.response.get("error"))
            return False

    async def _of_this_workspace(self, user_id: str) -> bool:
        if self._people is None:
            return True
        return (await self._people.person(user_id)).standing is Standing.MEMBER

    async def _permalink(self, channel_id: str | None, ts: str | None) -> str | None:
        if not channel_id or not ts:
            return None
        try:
            response = await self._client.chat_getPermalink(channel=channel_id, message_ts=ts)
        except SlackApiError as exc:
            log.warning("no permalink for a message: %s", exc.response.get("error"))
            return None
        return response.get("permalink")

    async def _tell(self, click: Click, text: str) -> None:
        await Responder(self._client).tell(click, text)
