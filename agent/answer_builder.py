"""The answer half of a run: claims grounded (agent/claim_grounding), numbered citations,
the sub-questions' status, the gaps, the conflicts, and whether to offer a human. Also
the two answers that need no search: a conversational reply, and the previous answer
restated from the thread.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import time
from collections.abc import Callable, Sequence

from agent.answer import Answer, Citation, Claim, Conflict, Gap, PageRead, SubQuestion, Turn
from agent.choices import choice_settled, found_by_question
from agent.claim_grounding import Grounded, ground_claims, ground_each, merged
from agent.conflicts import find_conflicts
from agent.grounding import GroundingVerifier
from agent.language.questions import answer_type
from agent.language.rules import PARTICLES
from agent.language.spans import gap_sentence
from agent.reasoners.base import DraftClaim, Route
from agent.retrieval.reading import Passage
from agent.run_recorder import RunRecorder
from agent.state import AgentState, Evidence, GapState
from store.text_forms import WORD

# A particle after a verb (agent/language/rules.py PARTICLES).
_PARTICLE = re.compile(rf"\s+(?:{PARTICLES})\b", re.I)

log = logging.getLogger(__name__)

# Pages named when nothing answers: enough to find the one that does, few enough to read.
CLOSEST_PAGES = 3


class AnswerBuilder:
    def __init__(
        self,
        *,
        state: AgentState,
        chunks: dict[int, Passage],
        verifier: GroundingVerifier,
        stems: Callable[[str], frozenset[str]],
        recorder: RunRecorder,
        max_claims: int,
    ) -> None:
        self.state = state
        self._chunks = chunks
        self._verifier = verifier
        self._stems = stems
        self._recorder = recorder
        self._max_claims = max_claims
        # This run's drafts, each grounded once: a claim checked as it was written is
        # not checked (nor counted) again when the answer is built.
        self._checked: dict[DraftClaim, Grounded] = {}

    async def _ground(self, drafts: list[DraftClaim], *, from_run: bool) -> Grounded:
        """Every path that produces claims goes through here; the counts are recorded."""
        if from_run:
            grounded = merged(await self._ground_each(drafts))
        else:
            grounded = await ground_claims(self._verifier, drafts, stems=self._stems)
        verification = self._recorder.verification
        for dropped in grounded.dropped:
            verification["dropped"].append({"chunk_id": dropped.chunk_id, "reason": dropped.reason})
            log.warning("dropped a claim citing chunk %d: %s", dropped.chunk_id, dropped.reason)
        verification["verified"] += len(grounded.kept)
        verification["rejected"] += len(grounded.dropped)
        verification["statements_written"] += grounded.statements_written
        verification["statements_dropped"] += grounded.statements_dropped
        return grounded

    async def _ground_each(self, drafts: Sequence[DraftClaim]) -> list[Grounded]:
        new = [d for d in dict.fromkeys(drafts) if d not in self._checked]
        if new:
            results = await ground_each(self._verifier, new, stems=self._stems, read=self._chunks)
            self._checked.update(zip(new, results, strict=True))
        return [self._checked[d] for d in drafts]

    async def written(self, drafts: Sequence[DraftClaim]) -> None:
        """The claims a reasoner has written so far (a prefix of its answer): each
        grounded now, and those kept handed over at once, numbered as the answer will
        number them. Nothing is counted here; the answer counts what it keeps."""
        parts = await self._ground_each(drafts[: self._max_claims])
        claims, citations = self._numbered([d for p in parts for d in p.kept])
        await self._recorder.hand_over_claims(claims, citations)

    async def grounded(
        self, drafts: list[DraftClaim], disagreeing: Sequence[DraftClaim] = ()
    ) -> Answer:
        """The answer from the reasoner's `drafts` (at most `max_claims` of them) and the
        quotes of sources found to disagree with them (agent/corroboration.py), after."""
        started = time.perf_counter()
        drafts = [*drafts[: self._max_claims], *disagreeing]
        grounded = await self._ground(drafts, from_run=True)
        kept = list(grounded.kept)
        self._recorder.record("verify", f"{len(drafts)} claims", f"{len(kept)} verified", started)
        return self._answer(kept, grounded)

    def _answer(self, kept: list[DraftClaim], grounded: Grounded) -> Answer:
        rejected = len(grounded.dropped)
        claims, citations = self._numbered(kept)
        subs = self._sub_questions(kept)
        # Quotes that only partly answer are shown, and a human is still offered.
        escalate = any(s.key and s.status != "answered" for s in subs) or all(
            s.status != "answered" for s in subs
        )
        if subs and not any(s.key for s in subs):  # the options of "A or B?" (agent/choices.py)
            answered = {i for i, s in enumerate(subs) if s.status == "answered"}
            found = found_by_question(
                (d.sub_question, d.quote, d.span, self._chunks[d.chunk_id].title) for d in kept
            )
            escalate = not choice_settled(self.state.sub_questions, answered, found)
        stop = self.state.stop_reason or "no_better_action"
        if escalate and rejected and stop == "enough_evidence":
            stop = "insufficient_grounding"
        return Answer(
            question=self.state.goal.question,
            claims=tuple(claims),
            citations=tuple(citations),
            stop_reason=stop,
            escalate=escalate,
            sub_questions=tuple(subs),
            gaps=tuple(self._gaps(subs)),
            conflicts=tuple(self._conflicts(claims, citations)),
            standalone_question=self._standalone(),
            rejected_claims=rejected,
            statements_written=grounded.statements_written,
            statements_dropped=grounded.statements_dropped,
            timings_ms=self._recorder.timings(),
            closest_pages=() if claims else self._closest_pages(),
        )

    def _closest_pages(self) -> tuple[PageRead, ...]:
        """The pages read whose sentences came closest to the question, closest first."""
        ranked = sorted(self.state.close_pages.values(), key=lambda c: -c[0])
        return tuple(page for _, page in ranked[:CLOSEST_PAGES])

    def _numbered(self, kept: Sequence[DraftClaim]) -> tuple[list[Claim], list[Citation]]:
        """The kept drafts as claims, each document cited by its number in order of first
        citation (so a prefix of the drafts is numbered as the whole answer numbers it)."""
        citations: dict[int, Citation] = {}
        claims: list[Claim] = []
        for draft in kept:
            passage = self._chunks[draft.chunk_id]
            cited = citations.setdefault(
                passage.document_id, _citation(len(citations) + 1, passage, draft.chunk_id)
            )
            claims.append(
                Claim(
                    statement=draft.statement,
                    quote=draft.quote,
                    citation=cited.number,
                    chunk_id=draft.chunk_id,
                    sub_question=self.state.sub_questions[draft.sub_question].text,
                    support=draft.support,
                    score=draft.score,
                    # A quote leads with its span as the answer only where the judge
                    # found the sub-question answered; else it is shown as found, so a
                    # passage on the topic is never dressed as the answer.
                    span=draft.span if draft.sub_question in self.state.answered else "",
                )
            )
        return claims, list(citations.values())

    def _sub_questions(self, kept: list[DraftClaim]) -> list[SubQuestion]:
        with_claims = {d.sub_question for d in kept}
        result = []
        for index, planned in enumerate(self.state.sub_questions):
            if index not in with_claims:
                status = "missing"
            elif index in self.state.answered:
                status = "answered"
            else:
                status = "partial"
            result.append(SubQuestion(planned.text, status, planned.key))  # type: ignore[arg-type]
        return result

    def _gaps(self, subs: list[SubQuestion]) -> list[Gap]:
        gaps = []
        by_index = {g.sub_question: g for g in self.state.gaps}
        for index, sub in enumerate(subs):
            if sub.status == "answered":
                continue
            state_gap = by_index.get(index)
            reason = (
                state_gap.reason
                if state_gap
                else ("too_weak" if sub.status == "partial" else "no_results")
            )
            unsaid = self._surface(sub.text, state_gap.missing[:1] if state_gap else ())
            detail = _said_gap(sub.text, self.state.evidence_for(index), unsaid)
            if not detail and state_gap and state_gap.unheard is not None:
                # Nothing kept: name only a word no page read has.
                unsaid = self._surface(sub.text, state_gap.unheard[:1])
            if not detail and unsaid:
                detail = f"No page found mentions {unsaid}."
            gaps.append(Gap(sub.text, reason, detail or _gap_detail(sub.status, state_gap)))
        return gaps

    def _surface(self, question: str, terms: Sequence[str]) -> str:
        """The question's own word for the first of `terms` (stems), "" if none; a verb
        with the particle the question puts after it ("paid out", not "paid")."""
        for term in terms:
            for word in WORD.finditer(question):
                if term in self._stems(word.group()):
                    particle = _PARTICLE.match(question, word.end())
                    return word.group() + (particle.group() if particle else "")
        return ""

    def _conflicts(self, claims: list[Claim], citations: list[Citation]) -> list[Conflict]:
        by_chunk_quote = {(c.chunk_id, c.quote): i for i, c in enumerate(claims)}
        evidence = [e for e in self.state.evidence if (e.chunk_id, e.quote) in by_chunk_quote]
        numbers = {c.number: c for c in citations}
        found = []
        questions = [q.text for q in self.state.sub_questions]
        for conflict in find_conflicts(evidence, stems=self._stems, questions=questions):
            first = by_chunk_quote[(conflict.first.chunk_id, conflict.first.quote)]
            second = by_chunk_quote[(conflict.second.chunk_id, conflict.second.quote)]
            newer = conflict.newer
            newer_number = None
            if newer is not None:
                newer_number = claims[first if newer is conflict.first else second].citation
            found.append(
                Conflict(
                    sub_question=self.state.sub_questions[conflict.sub_question].text,
                    claims=(first, second),
                    newer=newer_number,
                    detail=_conflict_detail(claims[first], claims[second], numbers, newer_number),
                )
            )
        return found

    def reply(self, route: Route) -> Answer:
        return Answer(
            question=self.state.goal.question,
            claims=(),
            citations=(),
            stop_reason="no_retrieval_needed",
            escalate=False,
            reply=route.reply,
            timings_ms=self._recorder.timings(),
        )

    async def from_thread(self, turn: Turn) -> Answer:
        """The first claim of the thread's last answer (`turn`), grounded again."""
        first = turn.claims[0]
        draft = DraftClaim(
            first.statement, first.quote, first.chunk_id, 0, first.support, span=first.span
        )
        grounded = await self._ground([draft], from_run=False)
        self._recorder.record(
            "verify", "1 claim from the thread", str(bool(grounded.kept)), time.perf_counter()
        )
        cited = next((c for c in turn.citations if c.number == first.citation), None)
        if not grounded.kept or cited is None:
            return Answer(
                question=self.state.goal.question,
                claims=(),
                citations=(),
                stop_reason="insufficient_grounding",
                escalate=True,
                rejected_claims=1,
                timings_ms=self._recorder.timings(),
            )
        citation = dataclasses.replace(cited, number=1)
        claim = dataclasses.replace(first, citation=1)
        return Answer(
            question=self.state.goal.question,
            claims=(claim,),
            citations=(citation,),
            stop_reason="no_retrieval_needed",
            escalate=False,
            timings_ms=self._recorder.timings(),
        )

    def _standalone(self) -> str | None:
        standalone = self.state.goal.standalone
        return standalone if standalone != self.state.goal.question else None


def _citation(number: int, passage: Passage, chunk_id: int) -> Citation:
    span = next((s for s in passage.spans if s.chunk_id == chunk_id), None)
    section = " > ".join(span.heading_path) if span else passage.heading
    return Citation(
        number=number,
        title=passage.title,
        url=passage.url,
        uri=passage.uri,
        chunk_id=chunk_id,
        document_id=passage.document_id,
        source=passage.source,
        collection=passage.collection,
        section=section,
        updated_at=passage.updated_at,
    )


def _said_gap(question: str, evidence: Sequence[Evidence], unsaid: str = "") -> str:
    """What the best source found says and lacks, in one sentence ("" with none found)."""
    if not evidence:
        return ""
    best = max(evidence, key=lambda e: e.score)
    return gap_sentence(question, answer_type(question), best.title, best.quote, unsaid=unsaid)


def _gap_detail(status: str, gap: GapState | None) -> str:
    if status == "partial":
        return "only partly answered by the sources found"
    if gap is not None and gap.reason == "no_results":
        return "nothing in the knowledge base answers this"
    return "the sources found do not answer this clearly enough"


def _conflict_detail(
    first: Claim, second: Claim, citations: dict[int, Citation], newer: int | None
) -> str:
    def side(claim: Claim) -> str:
        cited = citations[claim.citation]
        when = f", updated {cited.updated_at:%Y-%m-%d}" if cited.updated_at else ""
        return f"[{cited.number}] {cited.title}{when}"

    text = f"The sources disagree: {side(first)} and {side(second)}."
    if newer is not None:
        text += f" [{newer}] is the more recent."
    return text
