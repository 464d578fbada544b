"""The escalations source: experts' answers to escalated questions, as documents.

One source per collection (`escalations-<collection>`): an escalation is indexed into the
collection of the channel it was asked in, so only channels that may see that
collection can ever cite it. Each document is the question as its title and the
expert's answer as its text, linked to the escalation thread, so a citation of it
takes the reader to where the answer was given.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol

from jobs.documents import SourceDocument, SourceItem
from store.escalations import Escalation

KIND = "escalations"


class AnsweredEscalations(Protocol):
    async def answered(self, *, collection: str) -> Sequence[Escalation]: ...


def source_name(collection: str) -> str:
    return f"{KIND}-{collection}"


class EscalationSource:
    """Every resolved escalation of one collection that has an expert's answer."""

    def __init__(self, *, collection: str, escalations: AnsweredEscalations) -> None:
        self.name = source_name(collection)
        self.collection = collection
        self._escalations = escalations

    async def documents(self) -> AsyncIterator[SourceItem]:
        for escalation in await self._escalations.answered(collection=self.collection):
            yield escalation_document(escalation)


def escalation_document(escalation: Escalation) -> SourceDocument:
    answer = (escalation.answer or "").strip()
    return SourceDocument(
        uri=f"escalation/{escalation.id}",
        title=escalation.question.strip(),
        url=escalation.post_permalink or escalation.thread_permalink,
        text=f"# {escalation.question.strip()}\n\n{answer}\n",
        metadata={
            "escalation_id": escalation.id,
            "run_id": escalation.run_id,
            "resolved_by": escalation.resolved_by,
        },
        updated_at=escalation.resolved_at,
    )
