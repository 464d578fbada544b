"""What one place in Slack may be shown of an answer, a thread turn or a stored run.

Runs are scoped when they are asked, but what they produced is shown again later and
elsewhere: in a thread's history, in "Why this answer?" clicked from another channel,
in the escalation channel. Each of those goes through these filters with the access of
the place it is shown in, so a source outside that access never appears.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from agent.answer import Answer, Turn
from bot.slack.config import Access
from store.catalog import ChunkOrigin
from store.runs import StoredRun

NOT_FOUND_TURN = "I couldn't find this in the knowledge base."
HIDDEN = "(not shown: outside what this channel may see)"


def visible_answer(answer: Answer, access: Access) -> Answer:
    """The answer without the claims and citations `access` may not see."""
    citations = tuple(c for c in answer.citations if access.allows(c.collection))
    if len(citations) == len(answer.citations):
        return answer
    kept = {c.number for c in citations}
    claims = tuple(c for c in answer.claims if c.citation in kept)
    # A conflict names claims by index; with claims gone the indexes no longer hold.
    return dataclasses.replace(answer, claims=claims, citations=citations, conflicts=())


def visible_turn(turn: Turn, access: Access) -> Turn:
    if turn.role != "bot" or all(access.allows(c.collection) for c in turn.citations):
        return turn
    citations = tuple(c for c in turn.citations if access.allows(c.collection))
    kept = {c.number for c in citations}
    claims = tuple(c for c in turn.claims if c.citation in kept)
    text = " ".join(c.statement for c in claims) or NOT_FOUND_TURN
    return Turn(role="bot", text=text, claims=claims, citations=citations)


def visible_run(run: StoredRun, access: Access, origins: Mapping[int, ChunkOrigin]) -> StoredRun:
    """The run as "Why this answer?" may show it where `access` applies.

    Evidence from hidden collections is dropped, the answer filtered like any answer,
    and any step text naming a hidden document is replaced by a note.
    """
    hidden_titles = {o.title for o in origins.values() if not access.allows(o.collection)}
    answer = run.answer
    if answer is not None:
        filtered = visible_answer(Answer.from_dict(answer), access)
        hidden_titles |= {
            c["title"] for c in answer.get("citations", ()) if not access.allows(c["collection"])
        }
        answer = filtered.as_dict()
    evidence = [
        i for i in run.evidence_chunk_ids if i in origins and access.allows(origins[i].collection)
    ]
    steps = [_visible_step(step, hidden_titles) for step in run.steps]
    return dataclasses.replace(run, answer=answer, evidence_chunk_ids=evidence, steps=steps)


def _visible_step(step: Mapping[str, Any], hidden_titles: set[str]) -> dict[str, Any]:
    shown = dict(step)
    for key, value in step.items():
        text = value if isinstance(value, str) else None
        if text is None and isinstance(value, list | dict):
            text = repr(value)
        if text and any(title and title in text for title in hidden_titles):
            shown[key] = HIDDEN
    return shown
