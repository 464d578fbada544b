"""Corroboration: the answer's quote searched for elsewhere, to find a source that disagrees.

A knowledge base holds stale copies and revised pages. When the question's search found
only one of them, the answer would quote it alone, as if no other page said otherwise.
So once the answer's quotes are chosen, the store is searched once more with the quote's
own words (the quote of each answered sub-question, a few hits, in the run's scope), and
every sentence of another document that says the same thing with one stretch changed
(agent/conflicts.py's `restated_with_one_change`) is put to the conflict rule
(`find_conflicts`, with its guards: two changed stretches are two facts, a comparison's
two options and each page's own title are no disagreement). A sentence that disagrees
is quoted beside the answer, so the answer shows both sources, cited, the newer marked.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent.conflicts import find_conflicts, restated_with_one_change
from agent.reasoners.base import DraftClaim
from agent.retrieval.dense import Retriever
from agent.retrieval.reading import Passage
from agent.run_recorder import RunRecorder
from agent.sentences import SentenceSplitter
from agent.state import AgentState, Evidence, SourceRead
from store.corpus import ChunkSpan
from store.vector_search import ChunkHit


@dataclass(frozen=True, slots=True)
class CorroborationOptions:
    # Hits of the quote's search looked through: a copy of the quoted sentence ranks at
    # the top of a search made of that sentence.
    hits: int = 5
    # Answer quotes searched for (one search each, run together).
    searches: int = 3


@dataclass(frozen=True, slots=True)
class Disagreeing:
    """A sentence of another document that disagrees with an answer's quote."""

    draft: DraftClaim
    evidence: Evidence
    passage: Passage


class Corroborator:
    def __init__(
        self,
        *,
        state: AgentState,
        chunks: dict[int, Passage],
        retriever: Retriever,
        stems: Callable[[str], frozenset[str]],
        recorder: RunRecorder,
        splitter: SentenceSplitter,
        options: CorroborationOptions | None = None,
    ) -> None:
        self.state = state
        self._splitter = splitter
        self._chunks = chunks
        self._retriever = retriever
        self._stems = stems
        self._recorder = recorder
        self._options = options or CorroborationOptions()

    async def disagreeing(self, drafts: Sequence[DraftClaim]) -> list[DraftClaim]:
        """Drafts quoting sources that disagree with `drafts`' answer quotes (none for a
        sub-question whose answer already shows a conflict); each one's chunk is
        recorded as read and its evidence added to the state, so the answer grounds it
        and shows the conflict."""
        started = time.perf_counter()
        questions = [q.text for q in self.state.sub_questions]
        quotes = self._answer_quotes(drafts, questions)
        searches = await asyncio.gather(
            *(
                self._retriever.retrieve(
                    e.quote, limit=self._options.hits, where=self.state.goal.scope
                )
                for e in quotes
            )
        )
        found: list[DraftClaim] = []
        taken: set[tuple[int, str]] = set()
        for evidence, hits in zip(quotes, searches, strict=True):
            other = self._first_disagreeing(evidence, hits, questions)
            if other is None or (other.draft.chunk_id, other.draft.quote) in taken:
                continue
            taken.add((other.draft.chunk_id, other.draft.quote))
            for span in other.passage.spans:
                self._chunks.setdefault(span.chunk_id, other.passage)  # read already: kept
                self.state.visited.setdefault(
                    span.chunk_id,
                    SourceRead(
                        span.chunk_id, other.passage.title, other.passage.url, other.passage.heading
                    ),
                )
            self.state.evidence.append(other.evidence)
            found.append(other.draft)
        self._recorder.record(
            "corroborate", f"{len(quotes)} quotes searched", f"{len(found)} disagree", started
        )
        return found

    def _answer_quotes(self, drafts: Sequence[DraftClaim], questions: list[str]) -> list[Evidence]:
        """The quotes to search for: those of answered sub-questions with no conflict
        shown yet, the ones holding an answer (a span) first, at most `searches`."""
        by_quote = {(e.chunk_id, e.quote): e for e in self.state.evidence}
        quoted = [e for d in drafts if (e := by_quote.get((d.chunk_id, d.quote))) is not None]
        shown = {
            c.sub_question for c in find_conflicts(quoted, stems=self._stems, questions=questions)
        }
        picked: dict[str, Evidence] = {}
        for evidence in sorted(quoted, key=lambda e: not e.span):
            index = evidence.sub_question
            if index in shown or index not in self.state.answered or evidence.quote in picked:
                continue
            picked[evidence.quote] = evidence
            if len(picked) == self._options.searches:
                break
        return list(picked.values())

    def _first_disagreeing(
        self, quoted: Evidence, hits: Sequence[ChunkHit], questions: list[str]
    ) -> Disagreeing | None:
        for hit in hits:
            if hit.document_id == quoted.document_id:
                continue
            for text in _statements(self._splitter, hit.text):
                if not restated_with_one_change(quoted.quote, text):
                    continue
                candidate = _evidence(quoted, hit, text)
                if find_conflicts([quoted, candidate], stems=self._stems, questions=questions):
                    draft = DraftClaim(
                        text, text, hit.chunk_id, quoted.sub_question, "partial", hit.score
                    )
                    return Disagreeing(draft, candidate, _passage(hit))
        return None


def _statements(splitter: SentenceSplitter, text: str) -> list[str]:
    """Each sentence of `text`, and each two adjacent ones: a quote of two sentences, or
    a copy whose changed value ends in a full stop ("KKR & Co. L.P. …" against
    "Pavel Alexandrov. L.P. …"), is compared with the same stretch of the other page."""
    # Short units too: a copy's changed name may stand as a "sentence" of its own.
    units = splitter.sentences(text, min_words=1)
    pairs = [text[a.start : b.end] for a, b in itertools.pairwise(units)]
    return [u.text for u in units] + pairs


def _evidence(quoted: Evidence, hit: ChunkHit, sentence: str) -> Evidence:
    return dataclasses.replace(
        quoted,
        claim=sentence,
        quote=sentence,
        chunk_id=hit.chunk_id,
        document_id=hit.document_id,
        title=hit.title,
        url=hit.url,
        uri=hit.uri,
        source=hit.source,
        collection=hit.collection,
        section=" > ".join(hit.heading_path),
        updated_at=hit.updated_at,
        score=hit.score,
        support="partial",
        span="",
        companions=(),
    )


def _passage(hit: ChunkHit) -> Passage:
    """The hit's chunk alone, as the passage its quote is cited from."""
    return Passage(
        document_id=hit.document_id,
        title=hit.title,
        url=hit.url,
        uri=hit.uri,
        source=hit.source,
        collection=hit.collection,
        heading_path=hit.heading_path,
        char_start=hit.char_start,
        char_end=hit.char_end,
        text=hit.text,
        chunk_ids=(hit.chunk_id,),
        score=hit.score,
        spans=(
            ChunkSpan(
                hit.chunk_id,
                hit.document_id,
                hit.ordinal,
                hit.char_start,
                hit.char_end,
                hit.heading_path,
            ),
        ),
        updated_at=hit.updated_at,
    )
