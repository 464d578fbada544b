"""The extractive reasoner: offline, deterministic, and the default.

- route: "thanks" gets a reply, "shorter please" is answered from the thread, anything
  else is searched, follow-ups first rewritten to stand alone (agent/followups.py);
- decompose: comparisons, "both" questions and multi-part questions by rule
  (agent/language/decompose.py);
- extract: the units that answer a sub-question, by the checks in
  agent/reasoners/evidence.py (answer type, key terms and names, negation, opposites);
- judge (only where the loop's rules could not decide): partial quotes that together
  carry the sub-question's key terms answer it (the two hops of a multi-hop question);
- rewrite: the gap's missing terms with a name the evidence found (the bridge entity),
  else the sub-question's key words alone; never a query that already ran;
- synthesize: per sub-question, the best quote, then quotes that add missing key terms
  (another document allowed), then close runners-up from the documents already cited.
Claims are the quotes themselves.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent.conflicts import find_conflicts
from agent.followups import asks_for_shorter, is_thanks, last_bot_turn, standalone
from agent.grounding import normalise
from agent.language.decompose import choice_options, decompose, is_choice
from agent.language.entities import new_names
from agent.language.questions import QuestionAnalysis, QuestionAnalyzer, asks
from agent.language.ranges import bounded
from agent.language.scenes import stated_quantities
from agent.reasoners.base import DraftClaim, Judgement, Route
from agent.reasoners.companions import companions
from agent.reasoners.evidence import EvidenceScorer, ScoredUnit
from agent.reasoners.steps_first import steps_of_the_answering_page
from agent.retrieval.reading import Passage
from agent.state import (
    AgentState,
    Companion,
    Evidence,
    GapState,
    Goal,
    PendingQuery,
    PlannedQuestion,
)
from store.text_forms import fold, plain_text, plain_title

_SUPPORT_ORDER = {"strong": 0, "partial": 1, "weak": 2}


@dataclass(frozen=True, slots=True)
class ExtractiveOptions:
    # Evidence kept per sub-question per step.
    evidence_per_step: int = 6
    # Claims per sub-question, and documents one sub-question may cite.
    claims_per_question: int = 4
    documents_per_question: int = 3
    # A runner-up from an already cited document is kept if this close to the best.
    runner_up_margin: float = 0.15
    # Share of the key terms that partial quotes must carry together to answer.
    joint_coverage: float = 0.6
    # The second hop: names searched from this many best quotes, at most this many.
    hop_quotes: int = 2
    hop_names: int = 2


class ExtractiveReasoner:
    name = "extractive"

    def __init__(
        self,
        *,
        analyzer: QuestionAnalyzer,
        scorer: EvidenceScorer,
        options: ExtractiveOptions | None = None,
    ) -> None:
        self._analyzer = analyzer
        self._scorer = scorer
        self._options = options or ExtractiveOptions()

    async def route(self, goal: Goal) -> Route:
        question = goal.question
        if is_thanks(question):
            return Route("reply", question, reply="You're welcome.")
        if asks_for_shorter(question) and last_bot_turn(goal.history) is not None:
            return Route("from_thread", question)
        return Route("search", standalone(question, goal.history))

    async def decompose(self, question: str) -> list[PlannedQuestion]:
        parts: list[str] = []
        found = decompose(question)
        # The message's own sentences or clauses (not the sides of a comparison, which
        # each carry the rest of the question already).
        sentences = _are_sentences_of(found, question)
        for part in found:
            if parts and not self._analyzer.analyse(part).terms:
                # "…after parental leave? how long?", "what's in a CPF? like what are the
                # parts": a part with no words of its own asks more of the one before.
                parts[-1] = f"{parts[-1]} {part}"
            elif parts and sentences and not asks(part):
                # "do I have to attend every class? one conflicts with a project meeting":
                # a part that only tells is the scene of the question before it (searched
                # with it, read as its context), not a sub-question that needs an answer.
                parts[-1] = f"{parts[-1]} {part}"
            else:
                parts.append(part)
        if sentences:
            parts = [parts[0], *(self._with_subject(b, a) for a, b in itertools.pairwise(parts))]
        key = len(parts) == 1 or not is_choice(question)
        options = choice_options(question) if not key else []
        if len(options) != len(parts):
            options = [""] * len(parts)
        pairs = zip(parts, options, strict=True)
        return [PlannedQuestion(text, key, option) for text, option in pairs]

    def _with_subject(self, part: str, before: str) -> str:
        """`part` led by the subject of the part `before` when it refers back to it with
        few words of its own ("where's the chicago office and what floor are we on?",
        "how long is parental leave? who approves it?"): a chat message states its
        subject once, and the later part judged alone would be answered from any page
        (the floor of another office). The subject leads as a scene, so the part's own
        answer type and asking words stay its own."""
        own = self._analyzer.analyse(part).key_terms
        if not _REFERS_BACK.search(part) or len(own) > 2:
            return part
        subject = _surface_words(
            before, sorted(self._analyzer.analyse(before).key_terms - own), self._analyzer
        )
        return f"{subject}. {part}" if subject else part

    async def extract(
        self, sub_question: int, passages: Sequence[Passage], state: AgentState
    ) -> list[Evidence]:
        analysis = self._analysis(state, sub_question)
        heard = state.read_words.setdefault(sub_question, set())
        for p in passages:
            # The title and text apart: the scorer has their stems cached already.
            heard |= self._scorer.stems(p.title) | self._scorer.stems(p.text)
        bridges = state.bridges.get(sub_question, [])
        # The pages the question is about: those it names by title, and those a bridge was
        # read from in a quote naming all of its names.
        named = {p.title for p in passages if _named_by(analysis.text, p.title)}
        about = sorted(state.bridge_sources.get(sub_question, set()) | named)
        follow_ups = [
            r.query.text
            for r in state.queries
            if r.query.sub_question == sub_question and r.query.intent != "broad_recall"
        ]
        kept: list[ScoredUnit] = []
        if state.step == state.hop_step:
            # The second hop: only the pages titled by the names searched for.
            hops = [
                r.query.text
                for r in state.queries
                if r.step == state.step and r.query.sub_question == sub_question
            ]
            linked = {p.title for p in passages if any(_is_page_of(n, p.title) for n in hops)}
        else:
            scored = await self._scorer.score(
                analysis, passages, bridges=bridges, about=about, follow_ups=follow_ups
            )
            kept = [s for s in scored if s.support != "weak"][: self._options.evidence_per_step]
            _note_close_pages(state, [s for s in scored if self._scorer.close(s)])
            # Pages the evidence names by title are the second hop; pages the question
            # names by title are its own subjects' pages: both read in the same step.
            linked = _linked(kept, passages) | _named(state.goal.standalone, kept, passages)
        scored_pages: set[str] = set()
        for _ in range(2):  # the pages the evidence names, then the pages those name
            linked -= scored_pages
            if not linked:
                break
            scored_pages |= linked
            found = await self._linked_evidence(
                analysis,
                [p for p in passages if p.title in linked],
                bridges,
                about,
                follow_ups,
                kept,
                read=passages,
            )
            kept += found
            text = " ".join(s.unit.text for s in found)
            linked = _titles_in(text, kept, passages)
        return [_evidence(sub_question, s, state.step, self._companions(s, analysis)) for s in kept]

    def _companions(self, scored: ScoredUnit, analysis: QuestionAnalysis) -> tuple[Companion, ...]:
        units = self._scorer.units(scored.passage.text)
        return companions(units, scored.passage, scored.unit, analysis.answer_type, analysis.text)

    async def _linked_evidence(
        self,
        analysis: QuestionAnalysis,
        pages: Sequence[Passage],
        bridges: Sequence[str],
        about: Sequence[str],
        follow_ups: Sequence[str],
        kept: Sequence[ScoredUnit],
        *,
        read: Sequence[Passage],
    ) -> list[ScoredUnit]:
        """The best unit of each page the question or the evidence names (partial at
        least): what the page of a thing named says about it is part of the answer
        (each side of a comparison, the second hop), if not all of it."""
        titles = {plain_title(p.title) for p in pages}
        again = await self._scorer.score(
            analysis,
            pages,
            bridges=bridges,
            sides=list(titles),
            about=about,
            follow_ups=[*follow_ups, *(f"{t} {analysis.text}" for t in titles)],
            read=read,
        )
        known = {(s.chunk.chunk_id, s.unit.text) for s in kept}
        best: dict[str, ScoredUnit] = {}
        typed: dict[str, ScoredUnit] = {}  # and its best unit holding an answer's type
        for s in again:
            if (s.chunk.chunk_id, s.unit.text) in known:
                continue
            if s.support == "weak":
                s = dataclasses.replace(s, support="partial")
            if s.passage.title not in best:
                best[s.passage.title] = s
            elif s.typed and not best[s.passage.title].typed:
                typed.setdefault(s.passage.title, s)
        return [*best.values(), *typed.values()]

    async def second_hop(self, state: AgentState) -> list[PendingQuery]:
        """The names the best quotes hold in place of the question's words, searched for
        their own pages (read in the next step only if a page is titled by the name)."""
        queries = []
        for index in sorted(state.answered):
            question = state.sub_questions[index].text
            read = {fold(plain_title(e.title)) for e in state.evidence_for(index)}
            found = state.evidence_for(index)
            # The strong quotes lead on; with none, the partial ones that answered jointly.
            leading = [e for e in found if e.support == "strong"] or found
            best = sorted(leading, key=lambda e: -e.score)[: self._options.hop_quotes]
            names = [n for e in best for n in new_names(e.quote, question) if _is_name(n, e.quote)]
            fresh = [n for n in dict.fromkeys(names) if fold(n) not in read]
            for name in fresh[: self._options.hop_names]:
                state.bridges.setdefault(index, []).append(name)
                self._note_bridge_sources(state, index, best, [name])
                queries.append(PendingQuery(name, index, "targeted_follow_up"))
        return queries

    def _note_bridge_sources(
        self, state: AgentState, index: int, quotes: Sequence[Evidence], bridges: Sequence[str]
    ) -> None:
        """Record as pages the sub-question is about those of `quotes` that gave one of
        `bridges` and name every name of the sub-question ("TK - To Come" for "what does
        TK mean?"): such a quote speaks of the question's own subject, so the bridge it
        adds is said of that subject on its page. A quote naming only some ("West Memphis
        ... north of Southaven" for the Memphis Hustle) is about something else."""
        question = state.sub_questions[index].text
        names = set(self._analyzer.analyse(question).names)
        state.bridge_sources.setdefault(index, set()).update(
            e.title
            for e in quotes
            if names
            and set(bridges) & set(new_names(e.quote, question))
            and names <= set(self._analyzer.stems(e.quote))
        )

    async def judge(self, state: AgentState, undecided: Sequence[int]) -> Judgement:
        answered, gaps = set(), []
        for index in undecided:
            analysis = self._analysis(state, index)
            terms = analysis.key_terms
            found = _two_documents(state.evidence_for(index), terms)
            # The question's typos read as the quotes write them, as the scorer read them
            # when it judged each ("new grads" is the quotes' "new graduates").
            if found:
                read = [f"{e.title}\n{e.section}\n{e.quote}" for e in found]
                analysis = self._scorer.spelled_as_read(analysis, read)
                terms = analysis.key_terms
            covered = frozenset().union(*(e.covered for e in found)) if found else frozenset()
            # As the scorer judges a unit: a light verb no quote has is not held against
            # them ("who gets paged?" answered by "escalates to the secondary").
            terms -= analysis.light_verbs - covered
            # Nor a number the asker states that no quote bounds (agent/language/scenes.py).
            quoted = "\n".join(e.quote for e in found)
            stated = stated_quantities(terms, frozenset(analysis.names))
            bounds = self._scorer.stems(" ".join(bounded(analysis.quantities, quoted)))
            terms -= stated - covered - bounds
            # The scorer read the question's typos and equivalents as the pages write
            # them ("sabatical", "roll over"): the quotes' words stand for them here too.
            covered |= self._scorer.read_in(terms - covered, covered)
            # The phrasal verb or the payment a yes or a no is said of counts as a name.
            names = set(analysis.names) & terms | analysis.said_as_names & terms
            # Weighted as the scorer weighs a unit's coverage: a rare term counts more.
            weights = self._scorer.weights(terms, analysis)
            share = self._scorer.share(terms, covered, (), weights)
            typed = any(e.typed for e in found)
            # Quotes from several pages answer together only what the knowledge base
            # speaks of: a word asked that no page has ("paternity" where pages speak of
            # sick pay and on-call pay) is what none of them answers.
            spread = len({e.document_id for e in found}) > 1
            unheard = spread and bool(self._scorer.unheard(terms - covered))
            # Pages answer together through a hop that carries part of the question;
            # pages each saying one word of it are a collage ("Refer to OPM's Overtime
            # Fact Sheet" and a page on contractors' laptops for "who approves overtime
            # for contractors?").
            collage = spread and max(len(e.covered & terms) for e in found) <= 1
            if (
                found
                and typed
                and not collage
                and names <= covered
                and share >= self._options.joint_coverage
                and not unheard
            ):
                answered.add(index)
            else:
                # The most telling missing term first: the gap sentence names it.
                missing = tuple(sorted(terms - covered, key=lambda t: (-weights[t], t)))
                gaps.append(
                    GapState(
                        index,
                        "too_weak" if found else "no_results",
                        missing=missing,
                        unheard=None if found else self._unheard(state, index, analysis, missing),
                    )
                )
        return Judgement(not gaps, tuple(gaps), frozenset(answered), "joint coverage")

    def _unheard(
        self, state: AgentState, index: int, analysis: QuestionAnalysis, missing: Sequence[str]
    ) -> tuple[str, ...]:
        """Those of `missing` a gap may say no page found mentions: no passage read for
        the sub-question has them in any form ("hurt" only if no page read says "injured"
        either), and they may name something ("think" and "know" are how a question is
        put)."""
        heard = frozenset(state.read_words.get(index, ()))
        said = heard | self._scorer.read_in(frozenset(missing) - heard, heard)
        return self._scorer.naming(analysis, [t for t in missing if t not in said])

    async def rewrite(self, gap: GapState, state: AgentState) -> str | None:
        question = state.sub_questions[gap.sub_question].text
        analysis = self._analysis(state, gap.sub_question)
        missing = gap.missing or analysis.terms
        # A word no page has, which the pages write as two, is searched as they write it.
        words = " ".join(
            self._scorer.split_unknown(w)
            for w in _surface_words(question, missing, self._analyzer).split()
        )
        found = sorted(state.evidence_for(gap.sub_question), key=lambda e: -e.score)
        bridges = [n for e in found[:2] for n in new_names(e.quote, question)]
        keywords = " ".join(
            self._scorer.split_unknown(w)
            for w in _surface_words(question, analysis.terms, self._analyzer).split()
        )
        # The two best names together, then each alone: the search finds either page.
        named = list(dict.fromkeys(bridges))[:2]
        options = [named, *([n] for n in named[:2])] if named else []
        candidates = [(f"{' '.join(n)} {words}".strip(), n) for n in options]
        # A workplace word the pages may put another way, searched for as they would
        # ("can I carry over leave" for "can I roll over leave"), before the keywords.
        candidates.append((self._scorer.said_otherwise(question, missing), []))
        candidates.append((keywords, []))
        for candidate, used in candidates:
            if not candidate or state.ran(candidate):
                continue
            if normalise(candidate) == normalise(question):
                continue
            state.bridges.setdefault(gap.sub_question, []).extend(used)
            self._note_bridge_sources(state, gap.sub_question, found[:2], used)
            return candidate
        return None

    async def synthesize(self, state: AgentState) -> list[DraftClaim]:
        claims: list[DraftClaim] = []
        for index in range(len(state.sub_questions)):
            claims += self._claims_for(index, state)
        return claims

    def _claims_for(self, index: int, state: AgentState) -> list[DraftClaim]:
        found = sorted(
            state.evidence_for(index), key=lambda e: (_SUPPORT_ORDER[e.support], -e.score)
        )
        if not found:
            return []
        o = self._options
        best = found[0]
        chosen, covered, documents = [best], set(best.covered), {best.document_id}
        # Pages the question or the best quote names by title come first: the
        # supporting page of each hop, not whichever page scored next.
        named = f"{state.goal.standalone} {state.sub_questions[index].text} {best.quote}"
        # For steps asked, the answering page's steps before its other sentences
        # (agent/reasoners/steps_first.py); then the named pages.
        asked = self._analyzer.analyse(state.sub_questions[index].text).answer_type
        rest = sorted(
            found[1:],
            key=lambda e: (
                not steps_of_the_answering_page(e, best, asked),
                not _names_title(named, e.title),
            ),
        )
        any_named = any(
            _names_title(named, e.title) for e in found if e.document_id != best.document_id
        )
        questions = [q.text for q in state.sub_questions]
        for candidate in rest:
            if any(_overlaps(candidate.quote, c.quote) for c in chosen):
                continue
            new_document = candidate.document_id not in documents
            # Another source saying otherwise is shown, never silently left out: past the
            # claims' limit too (a page rewritten and its old copy rank side by side, the
            # copy often after the limit is reached by other pages).
            disagrees = new_document and bool(
                find_conflicts([*chosen, candidate], stems=self._stems, questions=questions)
            )
            if len(chosen) >= o.claims_per_question and not disagrees:
                continue
            room = not new_document or len(documents) < o.documents_per_question
            adds = bool(candidate.covered - covered)
            close = candidate.score >= best.score - o.runner_up_margin
            # The page of a thing the question or a chosen quote names is quoted: each
            # side of a comparison, the second hop.
            quoted = " ".join(c.quote for c in chosen)
            own_page = new_document and _names_title(f"{named} {quoted}", candidate.title)
            # A close runner-up from an unnamed page only when no named page is at hand.
            close = close and (not new_document or not any_named)
            steps = steps_of_the_answering_page(candidate, best, asked)
            if (room and (adds or close or own_page or steps)) or disagrees:
                chosen.append(candidate)
                covered |= candidate.covered
                documents.add(candidate.document_id)
        # Then, in the places left, other answers of the asked type on the pages cited: a
        # page often gives the answer in a sentence repeating no more of the question than
        # its best match does ("Ask Tech Operations before creating private repositories"
        # beside "include a link … that explains why it is private").
        for candidate in rest:
            if len(chosen) >= o.claims_per_question:
                break
            on_cited_page = candidate.document_id in documents and candidate not in chosen
            if candidate.typed and on_cited_page and not _overlaps_any(candidate, chosen):
                chosen.append(candidate)
        drafts = [
            DraftClaim(e.claim, e.quote, e.chunk_id, index, e.support, e.score, e.span)
            for e in chosen
        ]
        # The best quote's companions right after it (agent/reasoners/companions.py): the
        # point of its list item, the next sentence holding the answer.
        beside = [
            DraftClaim(c.text, c.text, c.chunk_id, index, "partial", best.score, c.span)
            for c in best.companions
            if not any(_overlaps(c.text, e.quote) for e in chosen)
        ]
        claims = [drafts[0], *beside, *drafts[1:]]
        # Of the quotes as strong as the best, the first holding an answer of the asked
        # type leads: the reply leads with the answer found ("An HRWL must be renewed every
        # 5 years."), not with the sentence repeating most of the question. Which quotes
        # are chosen does not change, only their order.
        lead = next((d for d in drafts if d.span and d.support == drafts[0].support), None)
        if lead is not None and lead is not drafts[0]:
            claims.remove(lead)
            claims.insert(0, lead)
        return claims

    def _stems(self, text: str) -> frozenset[str]:
        return frozenset(self._analyzer.stems(text))

    def _analysis(self, state: AgentState, index: int) -> QuestionAnalysis:
        # Judged on the key terms the scorer judged units on (a scene's particulars aside).
        return self._scorer.without_particulars(
            self._analyzer.analyse(state.sub_questions[index].text)
        )


def _note_close_pages(state: AgentState, units: Sequence[ScoredUnit]) -> None:
    """Keep, for each page, its closest unit read, as a page to point to when nothing
    answers the question (`Answer.closest_pages`)."""
    for s in units:
        state.note_close_page(s.passage, s.chunk.chunk_id, s.section, s.similarity)


def _evidence(
    sub_question: int, scored: ScoredUnit, step: int, beside: tuple[Companion, ...] = ()
) -> Evidence:
    passage = scored.passage
    return Evidence(
        sub_question=sub_question,
        claim=scored.unit.text,
        quote=scored.unit.text,
        chunk_id=scored.chunk.chunk_id,
        document_id=passage.document_id,
        title=passage.title,
        url=passage.url,
        uri=passage.uri,
        source=passage.source,
        collection=passage.collection,
        section=" > ".join(scored.chunk.heading_path) or scored.section,
        updated_at=passage.updated_at,
        score=scored.score,
        support=scored.support,
        covered=scored.covered,
        step=step,
        typed=scored.typed,
        span=scored.span,
        companions=beside,
    )


def _two_documents(evidence: Sequence[Evidence], terms: frozenset[str]) -> list[Evidence]:
    """The evidence of the one or two documents that together carry the most key terms:
    an answer joined from quotes is a hop and a second hop, not a collage of pages."""
    by_document: dict[int, list[Evidence]] = {}
    for e in evidence:
        by_document.setdefault(e.document_id, []).append(e)

    def carried(group: list[Evidence]) -> int:
        return len(terms & frozenset().union(*(e.covered for e in group)))

    groups = list(by_document.values())
    options = [g for g in groups] + [a + b for i, a in enumerate(groups) for b in groups[i + 1 :]]
    return max(options, key=carried, default=[])


def _linked(kept: Sequence[ScoredUnit], passages: Sequence[Passage]) -> set[str]:
    """Titles of passages that the evidence's units name, other than their own pages'."""
    text = " ".join(s.unit.text for s in kept)
    if kept:
        text += " " + kept[0].passage.text
    return _titles_in(text, kept, passages)


def _named(question: str, kept: Sequence[ScoredUnit], passages: Sequence[Passage]) -> set[str]:
    """Titles of passages that the question names, other than the evidence's own pages'."""
    return _titles_in(question, kept, passages)


def _titles_in(text: str, kept: Sequence[ScoredUnit], passages: Sequence[Passage]) -> set[str]:
    own = {s.passage.title for s in kept}
    return {p.title for p in passages if p.title not in own and _names_title(text, p.title)}


def _named_by(question: str, title: str) -> bool:
    """Whether `question` names the page `title`: its title, or the abbreviation the title
    gives in parentheses ("FITARA" for "Federal Information Technology Acquisition Reform
    Act (FITARA)"), which is how people ask about such a page."""
    if _names_title(question, title):
        return True
    short = _TITLE_ABBREVIATION.search(title)
    return short is not None and _names_title(question, short.group(1))


def _is_name(name: str, quote: str) -> bool:
    """Not a sentence's capitalised first word alone ("Later, many took up service…")."""
    return len(name.split()) > 1 or not quote.lstrip(" \"'(“‘").startswith(name)


def _is_page_of(name: str, title: str) -> bool:
    """Whether the page `title` is the page of `name` ("Great Movie Ride" and "The Great
    Movie Ride"; "USS Essex" and "USS Essex (CV-9)"; "Boston" and "Boston, Lincolnshire")."""
    if _names_title(name, title) or _names_title(name, title.split(",")[0]):
        return True  # "Boston" is the page "Boston, Lincolnshire"
    return len(name.split()) > 1 and _names_title(plain_title(title), name)


def _names_title(text: str, title: str) -> bool:
    """Whether `text` names the page `title` (its words in order, case and accents folded).

    Read as a reader reads it: a link's address is not prose, so ".../channels/tts-jobs"
    does not name a page "Channels" (in any knowledge base, URLs spell paths, hosts and
    slugs whose words say nothing of what the sentence is about)."""
    plain = plain_title(title)
    if len(plain) <= 2:
        return False
    words = f" {' '.join(_WORDS.findall(fold(plain)))} "
    return words in f" {' '.join(_WORDS.findall(fold(plain_text(text))))} "


_WORDS = re.compile(r"\w+")
# A title's trailing abbreviation in parentheses: two or more capitals ("(FITARA)", "(EAP)"),
# not a disambiguation ("(film)", "(2025)").
_TITLE_ABBREVIATION = re.compile(r"\(([A-Z][A-Za-z0-9&.-]*[A-Z0-9])\)\s*$")
# Words by which a later part of a message speaks of what an earlier part named.
_REFERS_BACK = re.compile(
    r"\b(?:it|its|they|them|their|we|us|our|there|that|this|those|these)\b", re.I
)


def _surface_words(question: str, stems: Sequence[str], analyzer: QuestionAnalyzer) -> str:
    """The question's own words whose stems are in `stems`, in the question's order."""
    wanted = set(stems)
    words = [
        w.strip(".,:;!\"'()")
        for w in question.replace("?", " ").split()
        if set(analyzer.stems(w)) & wanted
    ]
    return " ".join(dict.fromkeys(words))


def _overlaps_any(candidate: Evidence, chosen: Sequence[Evidence]) -> bool:
    return any(_overlaps(candidate.quote, c.quote) for c in chosen)


def _overlaps(a: str, b: str) -> bool:
    x, y = normalise(a), normalise(b)
    return x in y or y in x


def _are_sentences_of(parts: Sequence[str], question: str) -> bool:
    """Whether `parts` are pieces of `question` as written, from its start, in order."""
    text = " ".join(question.split())
    position = 0
    for part in parts:
        found = text.find(part.rstrip("?").strip(), position)
        if found < 0 or (position == 0 and found != 0):
            return False
        position = found + 1
    return len(parts) > 1
