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
from bot.slack.access.config import Access
from store.catalog import ChunkOrigin
from store.runs import StoredRun

NOT_FOUND_TURN = "I couldn't find this in the knowledge base."
HIDDEN = "(not shown: outside what this channel may see)"


def visible_answer(answer: Answer, access: Access) -> Answer:
    """The answer without the claims and citations `access` may not see."""
    citations = tuple(c for c in answer.citations if access.allows(c.collection))
    closest = tuple(p for p in answer.closest_pages if access.allows(p.collection))
    if len(closest) < len(answer.closest_pages):
        answer = dataclasses.replace(answer, closest_pages=closest)
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


def chunk_ids_of(run: StoredRun) -> list[int]:
    """Every chunk a stored run names: its evidence, its claims, and any list of entries
    carrying a `chunk_id` (such as the sources it read)."""
    ids = list(run.evidence_chunk_ids)
    ids += [c["chunk_id"] for c in (run.answer or {}).get("claims", ()) if "chunk_id" in c]
    for value in _entry_lists(run).values():
        ids += [e["chunk_id"] for e in value if isinstance(e.get("chunk_id"), int)]
    return list(dict.fromkeys(ids))


def visible_run(run: StoredRun, access: Access, origins: Mapping[int, ChunkOrigin]) -> StoredRun:
    """The run as "Why this answer?" may show it where `access` applies.

    Evidence, claims and citations from hidden collections are dropped, so is any entry
    of a list of mappings (the steps, the sources read…) naming a hidden chunk or
    collection, and any remaining text naming a hidden document, or a query built from
    evidence while some evidence is hidden, is replaced by a note.
    The run's fields are walked generically, so fields the agent adds are filtered too.
    """
    hidden = {o.title for o in origins.values() if not access.allows(o.collection)}
    changes: dict[str, Any] = {}
    if run.answer is not None:
        hidden |= {
            c["title"]
            for c in run.answer.get("citations", ())
            if not access.allows(c.get("collection", ""))
        }
        changes["answer"] = visible_answer(Answer.from_dict(run.answer), access).as_dict()
    changes["evidence_chunk_ids"] = [
        i for i in run.evidence_chunk_ids if i in origins and access.allows(origins[i].collection)
    ]
    if hidden or len(changes["evidence_chunk_ids"]) < len(run.evidence_chunk_ids):
        # A rewrite or a second hop is built from the evidence (a name a quote holds):
        # with some evidence hidden, only the queries the question itself gave are shown.
        asked = {run.question, run.standalone_question or ""}
        asked |= {str(s.get("text", "")) for s in run.sub_questions}
        hidden |= {q for q in run.queries if q not in asked}
    for name, entries in _entry_lists(run).items():
        kept = [e for e in entries if _entry_visible(e, access, origins)]
        changes[name] = [_redacted(e, hidden) for e in kept]
    for f in dataclasses.fields(run):
        value = getattr(run, f.name)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            changes[f.name] = [HIDDEN if _names(v, hidden) else v for v in value]
    return dataclasses.replace(run, **changes)


def _entry_lists(run: StoredRun) -> dict[str, list[dict[str, Any]]]:
    return {
        f.name: value
        for f in dataclasses.fields(run)
        if isinstance(value := getattr(run, f.name), list)
        and value
        and all(isinstance(v, dict) for v in value)
    }


def _entry_visible(
    entry: Mapping[str, Any], access: Access, origins: Mapping[int, ChunkOrigin]
) -> bool:
    chunk = entry.get("chunk_id")
    if isinstance(chunk, int) and (
        chunk not in origins or not access.allows(origins[chunk].collection)
    ):
        return False
    collection = entry.get("collection")
    return not isinstance(collection, str) or access.allows(collection)


def _redacted(entry: Mapping[str, Any], hidden: set[str]) -> dict[str, Any]:
    shown = dict(entry)
    for key, value in entry.items():
        text = (
            value
            if isinstance(value, str)
            else repr(value)
            if isinstance(value, list | dict)
            else None
        )
        if text and _names(text, hidden):
            shown[key] = HIDDEN
    return shown


def _names(text: str, titles: set[str]) -> bool:
    return any(title and title in text for title in titles)
