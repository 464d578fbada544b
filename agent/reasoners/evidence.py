"""Scoring the quotable units of passages against one sub-question (extractive reasoner).

A unit's support is decided by checks a reader would make, and only ranked by scores:
- it must not contradict the question: a negation the question has and it lacks, a
  question word it replaces by its opposite (south/north, first/last), or a kind of
  thing it replaces by another: when the passages read speak of "annual leave" and the
  question asks about annual leave, a unit about "sick leave" without "annual" is about
  something else;
- it must name what the question names: a capitalised word or a number of the question
  missing from the unit, its section and its document title, and from the rest of the
  passage, rules it out (a name only elsewhere in the passage, as with "he", weakens it);
- it must hold an answer of the expected type that the question does not (a date for
  "when", a number for "how many", a name for "who");
- it must carry enough of the question's key terms, counted with its title and section.
Meaning (cosine similarity of the embedded unit and question) ranks what passes and
sets the floor below which a unit is too far from the question to count.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from agent.answer import Support
from agent.language.abbreviations import (
    defined_abbreviations,
    implied_abbreviations,
    used_abbreviations,
)
from agent.language.everyday import EverydayWeights
from agent.language.kind_nouns import carries_kind
from agent.language.prefixes import says_the_opposite
from agent.language.questions import AnswerType, QuestionAnalysis, QuestionAnalyzer, is_negated
from agent.language.ranges import AskedQuantity, bounded, held, tightest
from agent.language.rules import (
    AMOUNT_SHARE_SAID,
    COUNT_STEM,
    DAY_KINDS,
    EQUIVALENT_WORDS,
    EXTENT_WORDS,
    FREQUENCY,
    FREQUENCY_ASKED,
    OPPOSITE,
    PREPOSITIONS,
    REPEAT_VERBS,
)
from agent.language.scenes import cased, particulars, stated_quantities
from agent.language.spans import (
    constraints_met,
    find_span,
    names_an_answer,
    spelled_out,
    spells_its_type,
)
from agent.language.typos import (
    CorpusTerms,
    apply,
    clipped,
    clipped_in_phrase,
    corrections,
    degree_forms,
    edit_distance,
    english,
    rare_word_fix,
    split_alphanumeric,
    split_compound,
    written_as_two,
)
from agent.retrieval.reading import Passage
from agent.sentence_vectors import SentenceVectors
from agent.sentences import Sentence, SentenceSplitter
from store.corpus import ChunkSpan
from store.text_forms import WORD

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class EvidenceOptions:
    # Share of the key terms (names count double) a unit must carry, with its context.
    strong_coverage: float = 0.6
    partial_coverage: float = 0.4
    # What one hop of a question naming several entities must carry (see `anchored`).
    hop_coverage: float = 0.25
    # Cosine floors for strong and partial support; below `floor` a unit is too far off.
    strong_similarity: float = 0.45
    floor: float = 0.35
    # Meaning close enough to stand in for words the unit puts differently ("banked" for
    # "accrued"): a typed unit this similar needs only partial coverage to be strong.
    paraphrase_similarity: float = 0.6
    # Key terms weighted by their rarity in the knowledge base (see `weights`).
    rarity_weights: bool = True
    # A word no page has weighs less as it is more everyday English (see `weights`).
    everyday: EverydayWeights = dataclasses.field(default_factory=EverydayWeights)
    # A word no page has stands for a word of the passages read that embeds at least
    # this close to it alone ("tries" for "attempts", "bike" for "bicycles"): measured
    # on the check sets' words, synonyms sat at 0.79-0.88 and the siblings a near miss
    # asks about at 0.77 and below ("weekend"/"weekday", "breakfast"/"lunch"); see
    # bench/results/answer_eval.md.
    synonym_similarity: float = 0.8
    # Units per sub-question embedded and kept after lexical ranking.
    shortlist: int = 8


@dataclass(frozen=True, slots=True)
class ScoredUnit:
    passage: Passage
    unit: Sentence
    chunk: ChunkSpan
    section: str
    covered: frozenset[str]
    coverage: float
    similarity: float
    score: float
    support: Support
    typed: bool
    span: str = ""  # the answer inside the unit (agent/language/spans.py)


@dataclass(frozen=True, slots=True)
class _Lexical:
    passage: Passage
    unit: Sentence
    chunk: ChunkSpan
    section: str
    covered: frozenset[str]
    coverage: float  # weighted by rarity: how much of the question it answers
    blocked: bool
    typed: bool
    bridged: bool = False
    complete: bool = True  # every name of the question is in it, its page or the bridge
    anchored: bool = False  # it names, in its own words, an entity the question names
    span: str = ""
    # Unweighted share of the key terms: how much of the question's topic it is on. A
    # word no page uses ("hang on to receipts") weighs most, so weighted coverage alone
    # would leave nothing to show; the pages on topic are still what was found.
    reach: float = 0.0
    # The list's lead-in and the one item naming what is asked, if any (`_asked_item`).
    item: str = ""
    # Its lines spell out the acronym asked about ("HEART": "Hear", "Empathize", …).
    spells_out: bool = False


class EvidenceScorer:
    def __init__(
        self,
        *,
        analyzer: QuestionAnalyzer,
        splitter: SentenceSplitter,
        vectors: SentenceVectors,
        options: EvidenceOptions | None = None,
        corpus_terms: CorpusTerms | None = None,
    ) -> None:
        self._analyzer = analyzer
        self._splitter = splitter
        self._vectors = vectors
        self._options = options or EvidenceOptions()
        self._corpus_terms = corpus_terms
        # Words before a noun that make no other kind of it (a preposition, an extent).
        self._not_kinds = frozenset(analyzer.stems(" ".join(sorted(PREPOSITIONS | EXTENT_WORDS))))
        self._repeat_stems = frozenset(analyzer.stems(" ".join(sorted(REPEAT_VERBS))))
        self._stems: OrderedDict[str, tuple[str, ...]] = OrderedDict()
        self._phrases: OrderedDict[str, tuple[str | None, ...]] = OrderedDict()
        # The same passages come back question after question: their definitions too.
        self._aliases: OrderedDict[str, tuple[tuple[frozenset[str], frozenset[str]], ...]] = (
            OrderedDict()
        )
        # Words no page has, each with the word of the passages last read that stands
        # for it (None when none embeds close enough): see `_read_synonyms`.
        self._said_as: OrderedDict[str, str | None] = OrderedDict()
        # EQUIVALENT_WORDS as (words, their stems), stemmed once.
        self._equivalents = tuple(
            (words, tuple(next(iter(self.stems(w)), "") for w in words))
            for words, _why in EQUIVALENT_WORDS
        )
        # DAY_KINDS stemmed: the stem of a day, the stem of the kind of day it is.
        self._day_kinds = {
            day: kind
            for name, kind_name in DAY_KINDS.items()
            for day in self.stems(name)
            for kind in self.stems(kind_name)
        }
        self._days = frozenset(self._day_kinds) | frozenset(self._day_kinds.values())

    async def score(
        self,
        question: QuestionAnalysis,
        passages: Sequence[Passage],
        *,
        bridges: Sequence[str] = (),
        sides: Sequence[str] = (),
        about: Sequence[str] = (),
        follow_ups: Sequence[str] = (),
        read: Sequence[Passage] = (),
    ) -> list[ScoredUnit]:
        """The passages' units that are not ruled out, best first, with their support.

        `bridges` are names the first hop led to: a passage titled by one (a page about
        the bridge) stands in for the question's own names (its units answer the question
        through it), and its units are as close to the question as they are to the
        `follow_ups` (the queries that searched for the bridge). A page that only mentions
        the bridge in passing is about something else: its "26,245" is another place's
        population. `about` are the titles of the pages the question is about (those it
        names by title, and a page a bridge was read from in a quote naming all of the
        question's names, "TK - To Come" in the glossary): there the bridge is said of the
        question's own subject, so naming it anywhere stands in too. `sides` are the titles
        of pages the question or the evidence names (each side of a comparison): a passage
        naming one anywhere stands in too. `read`
        are the other passages read with these (a page named by the evidence is scored
        alone, but read among them)."""
        question = self.without_particulars(question)
        texts = [f"{p.title}\n{p.text}" for p in (*passages, *read)]
        await self._read_synonyms(question, texts)
        question = self.spelled_as_read(question, texts)
        weights = self.weights(question.terms, question)
        # The question's word pairs the pages read use as phrases ("annual leave"): judged
        # on every page read, so a page scored alone ("Advanced sick leave", linked from
        # "Leave types") is still held to them and its "sick leave" is another kind.
        phrases = {
            p for p in question.pairs if any(p in self._pairs(x.text) for x in (*passages, *read))
        }
        pages = _page_texts([*passages, *read])
        lexical = [
            u
            for p in passages
            for u in self._lexical(
                question,
                p,
                phrases,
                self._bridged(question, p, bridges, sides, about),
                weights,
                pages[p.document_id],
            )
        ]
        shortlist = sorted(
            (u for u in lexical if not u.blocked),
            key=lambda u: -(u.coverage + 0.2 * u.passage.score + 0.1 * u.typed),
        )[: self._options.shortlist]
        if not shortlist:
            return []
        asked = [question.text, *follow_ups]
        vectors = await self._vectors.vectors([*asked, *(u.unit.text for u in shortlist)])
        against = np.asarray(vectors[len(asked) :] @ vectors[: len(asked)].T)
        similarity = [
            float(row.max() if u.bridged else row[0])
            for u, row in zip(shortlist, against, strict=True)
        ]
        await self._read_under_headings(question, shortlist, similarity)
        await self._read_items(question, shortlist, similarity)
        self._spelled_codes(question, shortlist, similarity)
        scored = [self._scored(u, s) for u, s in zip(shortlist, similarity, strict=True)]
        return sorted(scored, key=lambda s: -s.score)

    async def _read_under_headings(
        self, question: QuestionAnalysis, shortlist: list[_Lexical], similarity: list[float]
    ) -> None:
        """Lift, in place, the similarity of a unit that answers the whole question only
        with its heading ("## Core hours" > "Everyone is available between 10:00 and
        15:00" for "what are core hours?"): embedded alone it reads as off topic. Read as
        "heading: sentence", only when the heading supplies a key term the sentence lacks
        and, with it, every key term is covered and a span of the asked type found: an
        on-topic near miss lacks a term, so it is not lifted (read under its heading for
        every unit, near misses crossed the floor as readily as answers)."""
        lifted = [
            i
            for i, u in enumerate(shortlist)
            if similarity[i] < self._options.floor
            and u.typed
            and u.complete
            and u.covered >= question.key_terms
            and self._heading_adds(question, u)
        ]
        if not lifted:
            return
        texts = [
            question.text,
            *(f"{shortlist[i].section}: {shortlist[i].unit.text}" for i in lifted),
        ]
        vectors = await self._vectors.vectors(texts)
        for i, row in zip(lifted, np.asarray(vectors[1:] @ vectors[0]), strict=True):
            similarity[i] = max(similarity[i], float(row))

    async def _read_items(
        self, question: QuestionAnalysis, shortlist: list[_Lexical], similarity: list[float]
    ) -> None:
        """Lift, in place, the similarity of a list to that of its lead-in with the one
        item naming what is asked (`_asked_item`, `_held_item`): embedded whole, a list of
        six hotel caps or lab turnarounds reads as far from a question about one of them as
        from any, and fell under the floor with every key term covered. Under a heading
        that names what the list is of ("## How PTO accrues" over "Staff accrue at these
        rates:"), read with it, as `_read_under_headings` reads a sentence."""
        lifted = [i for i, u in enumerate(shortlist) if u.item]
        if not lifted:
            return
        texts = [
            f"{u.section}: {u.item}" if self._heading_adds(question, u) else u.item
            for u in (shortlist[i] for i in lifted)
        ]
        vectors = await self._vectors.vectors([question.text, *texts])
        for i, row in zip(lifted, np.asarray(vectors[1:] @ vectors[0]), strict=True):
            similarity[i] = max(similarity[i], float(row))

    def _heading_adds(self, question: QuestionAnalysis, unit: _Lexical) -> bool:
        """Whether the unit's heading names a key term its own text lacks."""
        return bool((self.stems(unit.section) & question.key_terms) - self.stems(unit.unit.text))

    def _spelled_codes(
        self, question: QuestionAnalysis, shortlist: list[_Lexical], similarity: list[float]
    ) -> None:
        """Lift, in place, to the strong similarity a unit that writes every code the
        question names ("INT-02", "QS-24117") as the question writes it, and covers every
        key term with a span of the asked type: an embedding reads a code as noise ("what
        is INT-02?" and "INT-01 (studio admin), INT-02 (bids and competitions)" measure
        0.27), so only its spelling can say the unit is about it."""
        codes = _CODE.findall(question.text)
        if not codes:
            return
        for i, u in enumerate(shortlist):
            if (
                u.typed
                and u.complete
                and u.covered >= question.key_terms
                and all(
                    re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])", u.unit.text, re.I)
                    for c in codes
                )
            ):
                similarity[i] = max(similarity[i], self._options.strong_similarity)

    def close(self, unit: ScoredUnit) -> bool:
        """Whether `unit` reads as close to the question as a quote must (the similarity
        floor), whatever its support: a weak one that does points to where to look."""
        return unit.similarity >= self._options.floor

    def units(self, text: str) -> list[Sentence]:
        """`text` split into sentences, list items and lists (cached per block)."""
        return self._splitter.split(text)

    def without_particulars(self, question: QuestionAnalysis) -> QuestionAnalysis:
        """The question with the words of its scene that no page has ("Denver" in "working
        from Denver next week - how should I let folks know?") read as context, not as key
        terms (agent/language/scenes.py)."""
        if not (question.scene or question.circumstance) or self._corpus_terms is None:
            return question
        names = frozenset(question.names)
        known = self._corpus_terms.known(question.scene | question.circumstance)
        aside = particulars(question.scene, question.key_terms, known, names)
        # The words of a circumstance clause no page has ("stay late" in "paid overtime if
        # we stay late?"): the asker's case, which the answering page puts in its own
        # words. Its quantities and names stay: "once I've been here 7 years" is a bound.
        aside |= cased(question.circumstance, question.key_terms - aside, known, names)
        if not aside:
            return question
        return dataclasses.replace(question, context=question.context | aside)

    def _unknown(self, question: QuestionAnalysis, vocabulary: frozenset[str]) -> list[str]:
        """The question's terms that neither the `vocabulary` read nor the knowledge base
        has, names and context aside (what a typo, a clip or a synonym may stand for)."""
        unread = [
            t
            for t in question.terms
            if t not in vocabulary and t not in question.names and t not in question.context
        ]
        known = self._corpus_terms.known(unread) if self._corpus_terms else set()
        return [t for t in unread if t not in known]

    async def _read_synonyms(self, question: QuestionAnalysis, texts: Sequence[str]) -> None:
        """Remember, for each word of the question that no page has, the word of `texts`
        that embeds closest to it alone, if close enough to be the same thing said
        otherwise ("bike" for "bicycles", "tries" for "attempts"). A word's vector is
        embedded once and kept (agent/sentence_vectors.py), and a question every word of
        which the pages have embeds nothing here."""
        vocabulary = frozenset().union(*(self.stems(t) for t in texts))
        unknown = set(self._unknown(question, vocabulary))
        asked = list(
            dict.fromkeys(
                w.casefold()
                for w in WORD.findall(question.text)
                if w.isalpha() and len(w) > 2 and set(self.stems(w)) & unknown
            )
        )
        if not asked:
            return
        words = sorted(
            {
                w.casefold()
                for t in texts
                for w in WORD.findall(t)
                if w.isalpha() and len(w) > 2 and self.stems(w)
            }
        )
        if not words:
            return
        vectors = await self._vectors.vectors([*asked, *words])
        closeness = np.asarray(vectors[: len(asked)] @ vectors[len(asked) :].T)
        for word, row in zip(asked, closeness, strict=True):
            best = int(row.argmax())
            close = float(row[best]) >= self._options.synonym_similarity
            self._said_as[word] = words[best] if close else None
            self._said_as.move_to_end(word)
        while len(self._said_as) > 10_000:
            self._said_as.popitem(last=False)

    def spelled_as_read(self, question: QuestionAnalysis, texts: Sequence[str]) -> QuestionAnalysis:
        """The question with its typos replaced by the words of the `texts` read (each a
        passage's title and text, agent/language/typos.py): "credit hourz" covers
        "credit hours"."""
        vocabulary = frozenset().union(*(self.stems(t) for t in texts))
        # A name ("Calendly") is written as meant: never "corrected" into a word the pages
        # have ("calendar"); nor is a word the knowledge base has elsewhere.
        # Nor is a word read as context ("fail" in "if I fail part 2, ..."): a page need
        # not have it, so there is no typo of a page's word to mend ("fall").
        unknown = self._unknown(question, vocabulary)
        # A word of the language is written as meant ("parental" is no typo of "part",
        # nor "fail" of "fall"), or as another form of a page's word: one edit past the
        # four letters they share, a letter changed ("forgot" is the "forget" a page
        # writes); a letter added makes another word of the family ("driver", "drive").
        words = {s for w in WORD.findall(question.text) if english(w) for s in self.stems(w)}
        fixes = corrections([t for t in unknown if t not in words], vocabulary)
        fixes |= {
            t: fix
            for t, fix in corrections([t for t in unknown if t in words], vocabulary).items()
            if len(t) > 4
            and len(fix) == len(t)
            and fix[:4] == t[:4]
            and edit_distance(t, fix, 1) <= 1
        }
        # A dictionary word too rare for everyday use ("manger", "hods") one edit from a
        # common word of the passages ("manager", "holds") is that word mistyped.
        written = {t: w.casefold() for w in WORD.findall(question.text) for t in self.stems(w)}
        page_words: set[str] | None = None
        for term in unknown:
            word = written.get(term, "")
            if term in fixes or not english(word):
                continue
            page_words = page_words or {w.casefold() for t in texts for w in WORD.findall(t)}
            meant = rare_word_fix(word, page_words)
            stems = self.stems(meant) if meant else frozenset()
            if stems:
                fixes[term] = next(iter(stems))
        # A degree of an adjective ("heaviest") is said by another the passages write
        # ("anything heavier than 50 pounds").
        for term in unknown:
            # (not "latest", a type noun the date answer reads as asked)
            skip = term in fixes or term in question.type_nouns
            degrees = set() if skip else degree_forms(written.get(term, ""))
            said = {s for form in degrees for s in self.stems(form)} & vocabulary
            if len(said) == 1:
                fixes[term] = said.pop()
        # A clipped word ("certs" for "certifications") stands for the word it begins (h22).
        for term in unknown:
            whole = None if term in fixes else clipped(term, vocabulary)
            if whole:
                fixes[term] = whole
        # Shorter, in a phrase the pages write ("bank hol" for "bank holiday").
        read = "\n".join(texts)
        for term in unknown:
            word = written.get(term, term)
            whole = None if term in fixes else clipped_in_phrase(word, question.text, read)
            stems = self.stems(whole) if whole else frozenset()
            if stems:
                fixes[term] = next(iter(stems))
        # A word the pages write as two ("under-performing") stands for its second part,
        # split as the asker wrote it (the stem of "oncall" is "oncal", no split of which
        # the pages have).
        for term in unknown:
            word = written.get(term, term)
            parts = None if term in fixes else split_compound(word, self._part_of(vocabulary))
            # However short its first part, if the pages write the two side by side
            # ("on-call" for "oncall", "help desk" for "helpdesk").
            parts = parts or (None if term in fixes else written_as_two(word, read))
            stems = self.stems(parts[1]) or self.stems(parts[0]) if parts else frozenset()
            if stems:  # "underperform" is said of the "perform" the pages have
                fixes[term] = next(iter(stems))
        # A word no page has stands for the word of the pages it embeds closest to, when
        # that is the same thing said otherwise ("bike" for the pages' "bicycles").
        # Never a day or a kind of day, either way: "saturday" embeds close to "weekday"
        # and "tuesday" to "monday", siblings a page tells apart (DAY_KINDS reads them).
        for term in unknown:
            synonym = (
                None
                if term in fixes or term in self._days
                else self._said_as.get(written.get(term, ""))
            )
            stems = self.stems(synonym) if synonym else frozenset()
            if stems and stems <= vocabulary and not stems & self._days:
                fixes[term] = next(iter(stems))
        # A letters-and-digits word ("bsl2", "401k") stands for the part the pages write
        # apart from the other ("BSL-2", "401(k)"): a name too, written as meant but run
        # together ("BSL2").
        run_together = [t for t in question.terms if t not in vocabulary and t not in fixes]
        known_too = self._corpus_terms.known(run_together) if self._corpus_terms else set()
        sequences = [self._sequence(t) for t in texts]

        def written_apart(parts: list[str]) -> bool:
            wanted = self._sequence(" ".join(parts))
            return bool(wanted) and any(_holds_run(s, wanted) for s in sequences)

        for term in run_together:
            part = None if term in known_too else split_alphanumeric(term, written_apart)
            if part:
                fixes[term] = part
        if not fixes:
            return question
        return dataclasses.replace(
            question,
            terms=apply(question.terms, fixes),
            names=apply(question.names, fixes),
            subject=frozenset(apply(question.subject, fixes)),
            pairs=tuple((fixes.get(a, a), fixes.get(b, b)) for a, b in question.pairs),
        )

    def unheard(self, terms: Iterable[str]) -> frozenset[str]:
        """Those of `terms` no page of the knowledge base has (none without an index)."""
        terms = frozenset(terms)
        if self._corpus_terms is None:
            return frozenset()
        forms = {t: self._analyzer.index_forms(t) for t in terms}
        known = self._corpus_terms.known(terms.union(*forms.values()))
        return frozenset(t for t in terms if t not in known and not forms[t] & known)

    def read_in(self, terms: Iterable[str], vocabulary: frozenset[str]) -> frozenset[str]:
        """Those of `terms` that `vocabulary` holds as an equivalent ("roll" for "carry")."""
        return frozenset(t for t in terms if self._equivalent(t, vocabulary))

    def said_otherwise(self, question: str, missing: Sequence[str]) -> str:
        """`question` with the first of the `missing` terms (stems, the most telling
        first) that has equivalents put as the first other one ("can I carry over
        leave" for "can I roll over leave"); "" when none has."""
        for term in missing:
            for words, stems in self._equivalents:
                if term in stems:
                    other = next(w for w, s in zip(words, stems, strict=True) if s != term)
                    said = [other if term in self.stems(w) else w for w in question.split()]
                    return " ".join(said)
        return ""

    def _initialisms_for(self, terms: Iterable[str]) -> list[str]:
        """The initialisms among the equivalents of `terms` ("PTO" for "vacation"), as
        EQUIVALENT_WORDS writes them: in capitals."""
        found = set(terms)
        return [
            word
            for words, stems in self._equivalents
            if found.intersection(stems)
            for word in words
            if word.isupper()
        ]

    def _with_equivalents(self, terms: Iterable[str]) -> frozenset[str]:
        """`terms` with the stems of every equivalent of each."""
        found = set(terms)
        for _words, stems in self._equivalents:
            if found.intersection(stems):
                found.update(stems)
        return frozenset(found)

    def _days_said_by_kind(self, terms: Iterable[str], words: frozenset[str]) -> frozenset[str]:
        """Those of `terms` that are days `words` speak of by their kind ("saturday" by
        "weekend": agent/language/rules.py DAY_KINDS)."""
        return frozenset(t for t in terms if self._day_kinds.get(t) in words)

    def _equivalent(self, term: str, vocabulary: frozenset[str]) -> str | None:
        """The first stem of `vocabulary` that is an equivalent of `term`
        (agent/language/rules.py EQUIVALENT_WORDS), or None."""
        for _words, stems in self._equivalents:
            if term in stems:
                return next((s for s in stems if s != term and s in vocabulary), None)
        return None

    def _part_of(self, vocabulary: frozenset[str]) -> Callable[[str], bool]:
        """Whether a piece of a word is a word of `vocabulary` or a stop word (no stems)."""

        def is_word(piece: str) -> bool:
            stems = self.stems(piece)
            return not stems or (len(piece) >= 3 and stems <= vocabulary)

        return is_word

    def split_unknown(self, word: str) -> str:
        """`word` as the knowledge base writes it: "under performing" for "underperforming"
        when no page has the one word and pages have the second part; else `word`."""
        stems = self.stems(word)
        if self._corpus_terms is None or not stems or self._corpus_terms.known(stems):
            return word
        corpus = self._corpus_terms

        def is_word(piece: str) -> bool:
            pieces = self.stems(piece)
            return not pieces or (len(piece) >= 3 and corpus.known(pieces) == set(pieces))

        parts = split_compound(word.casefold(), is_word)
        return " ".join(parts) if parts else word

    def _scored(self, unit: _Lexical, similarity: float) -> ScoredUnit:
        o = self._options
        support: Support = "weak"
        if unit.spells_out and unit.coverage >= o.strong_coverage:
            # A list spelling out the acronym asked about answers "what does it stand
            # for?" however little its sentences read like the question.
            support = "strong"
        elif similarity >= o.floor:
            paraphrased = similarity >= o.paraphrase_similarity and unit.complete
            if unit.typed and unit.coverage >= o.strong_coverage:
                strong = similarity >= o.strong_similarity and unit.complete
                support = "strong" if strong else "partial"
            elif unit.typed and paraphrased and unit.coverage >= o.partial_coverage:
                support = "strong"
            elif max(unit.coverage, unit.reach) >= (
                o.partial_coverage if unit.typed else o.strong_coverage
            ):
                # Untyped, it answers nothing alone but may lead to what does. Partial
                # quotes are what was found; whether together they answer is the
                # judge's call, on weighted coverage.
                support = "partial"
            elif unit.anchored and unit.coverage >= o.hop_coverage:
                # One hop of a long question: it names one of the question's entities
                # and carries part of it; the judge needs the other part elsewhere.
                support = "partial"
        score = similarity + 0.5 * unit.coverage + 0.2 * unit.passage.score + 0.1 * unit.typed
        return ScoredUnit(
            unit.passage,
            unit.unit,
            unit.chunk,
            unit.section,
            unit.covered,
            unit.coverage,
            similarity,
            round(score, 4),
            support,
            unit.typed,
            unit.span,
        )

    def _bridged(
        self,
        question: QuestionAnalysis,
        passage: Passage,
        bridges: Sequence[str],
        sides: Sequence[str],
        about: Sequence[str],
    ) -> frozenset[str]:
        title = passage.title.casefold()
        text = f"{title}\n{passage.text}".casefold()
        # A bridge counts anywhere in the text of a page the question is about; on any
        # other page only in its title (a page about the bridge).
        where = text if passage.title in about else title
        if any(b.casefold() in where for b in bridges) or any(s.casefold() in text for s in sides):
            # Not for the thing a question asks is one of a kind: the page "Holidays", which
            # "is Black Friday a holiday?" names, says nothing of Black Friday unless it
            # names it.
            return frozenset(question.names) - question.subject
        return frozenset()

    def _lexical(
        self,
        question: QuestionAnalysis,
        passage: Passage,
        phrases: set[tuple[str, str]],
        bridged: frozenset[str],
        weights: dict[str, float],
        page: str,
    ) -> list[_Lexical]:
        """The units of `passage`, judged; `page` is what was read of its document (its
        title and passages), where an abbreviation is defined for all of them."""
        passage_stems = self.stems(passage.text) | self.stems(passage.title) | bridged
        # "after 4 years" asked of a page of bands ("3 to 6 years"): the band holding it
        # says the asker's number (agent/language/ranges.py).
        passage_stems |= self._held(question, f"{passage.title}\n{passage.text}")
        # A page defines an abbreviation once for all its passages: "PD" beside
        # "professional development" in one, a budget for it spelled out in another.
        # Keyed by what was read of the page, which varies question by question: a
        # small cache, so a long-running bot does not keep every combination's text.
        aliases = _remembered(self._aliases, page, self._aliases_of, limit=2_000)
        # "PTO" asked of a page that spells out "paid time off" (agent/language/abbreviations.py);
        # asked as an equivalent too: "vacation days" of a page titled "Paid time off".
        asked = " ".join([question.text, *self._initialisms_for(question.terms)])
        aliases += tuple(
            (self.stems(name), self.stems(short))
            for short, name in implied_abbreviations(asked, page, is_word=english).items()
        )
        found = []
        for unit in quotable_units(self._splitter, passage.text):
            chunk = _chunk_of(passage, unit)
            if chunk is None:
                continue  # crosses a chunk boundary: no chunk would verify it
            found.append(
                self._judge_unit(
                    question,
                    passage,
                    unit,
                    chunk,
                    passage_stems,
                    phrases,
                    bridged,
                    weights,
                    aliases,
                )
            )
        return found

    def _judge_unit(
        self,
        question: QuestionAnalysis,
        passage: Passage,
        unit: Sentence,
        chunk: ChunkSpan,
        passage_stems: frozenset[str],
        phrases: set[tuple[str, str]],
        bridged: frozenset[str],
        weights: dict[str, float],
        aliases: tuple[tuple[frozenset[str], frozenset[str]], ...] = (),
    ) -> _Lexical:
        section = unit.heading or (chunk.heading_path[-1] if chunk.heading_path else "")
        # A list's numbering is layout, no number of the unit's: "4. Part-time nurses"
        # says nothing of the "4 east" a question names.
        own = self.stems(_ITEM_NUMBER.sub("", unit.text))
        context = own | self.stems(passage.title) | self.stems(section) | bridged
        held_here = self._held(question, f"{unit.text}\n{section}")
        # The word bounding the asker's quantity ("after" of "after 10 yrs") is said of that
        # quantity: a band holding the quantity answers for it ("10 or more years of
        # service"), and the same word bounding another quantity ("You may begin using PTO
        # after 90 days of employment") carries nothing of the question.
        context |= held_here
        unheld = frozenset() if held_here else question.bounding
        # An abbreviation the passage defines stands for its full name and back: under
        # "Employee Assistance Program", a sentence speaks of the EAP a question names.
        for name, short in aliases:
            if not name or not short:
                continue  # a stop word ("AM", "IT" folded) stands for nothing
            if name <= context:
                context |= short
            elif short <= context:
                context |= name
        terms = question.key_terms
        # A light verb the unit lacks is not held against it: pages say "receive" for
        # "get" in as many ways as there are writers (agent/language/rules.py).
        terms -= question.light_verbs - context
        if held_here:
            terms -= question.bounding  # held with the quantity it bounds
        # Nor a number the asker states ("for the 2nd time", "paged at 2am"): their case,
        # which a page answers by its own bounds: a band holding it covers it, one in its
        # unit that does not ("up to £500" for "£800") is held against the unit.
        where = f"{unit.text}\n{section}"
        stated = stated_quantities(terms, frozenset(question.names))
        terms -= stated - self.stems(" ".join(bounded(question.quantities, where))) - context
        covered = terms & context - unheld
        # "will sick leave be paid out?" is not said by "per pay period": a yes or a no is
        # said of the phrasal verb asked, with its particle, as of a name asked.
        unsaid = (
            self._unsaid_verbs(question.particles, f"{unit.text}\n{section}")
            if question.answer_type == "yes_no"
            else frozenset()
        )
        # A workplace word the unit puts another way ("roll over" for "carry over").
        covered |= self.read_in(terms - covered, context)
        # A rule the unit states for weekends is its rule for the Saturday asked about; in
        # its own words, not under a heading ("## Weekend and evening rotation" over "work
        # every third Saturday" says nothing of Sundays).
        covered |= self._days_said_by_kind(terms - covered, own)
        covered -= unsaid
        names = set(question.names) & terms
        missing = terms - context
        # A unit opening with the opposite of what the question asks ("Cancel a request"
        # for "How do I request leave?") is about the other action, unless the question
        # names that word itself ("How do I cancel a leave request?" names both).
        # The question's words and their equivalents: "carry over" is no other kind of
        # "over" than the "roll over" asked.
        asked = self._with_equivalents(question.terms)
        opening = self._sequence(unit.text)[:1]
        reversed_action = any(
            w not in terms and OPPOSITE.get(w, frozenset()) & terms for w in opening
        )
        contradicted = (
            reversed_action
            # Only an opposite the question does not name itself contradicts it.
            or any((OPPOSITE.get(t, frozenset()) & own) - terms for t in missing)
            # "What marriage became uncommon?" is not answered by "… became common"; a
            # yes/no question is, by either ("Is leave unpaid?" "Leave is paid.": no).
            or (question.answer_type != "yes_no" and says_the_opposite(question.text, unit.text))
            or any(
                modifier not in own
                and _other_kind(
                    head, modifier, self._phrase_words(unit.text), asked | self._not_kinds
                )
                for modifier, head in phrases
                if not bridged  # a bridge's page describes the bridge, not the question
            )
            # "the fourth Session" for "the fifth session": another member of the series
            # (a yes/no question is answered by either: "Do I get two weeks?" "One week.";
            # a bridge's page is about the bridge: "the brother of this first round pick").
            or (
                question.answer_type != "yes_no"
                and not bridged
                and _another_count(self._phrase_words(question.text), self._phrase_words(unit.text))
            )
        )
        unnamed = (names - context) - passage_stems
        # Naming none of the question's names, it is about something else; naming some,
        # it may answer part of a question whose names span two pages (multi-hop).
        off_topic = bool(names) and not names & (context | passage_stems)
        # "What is not covered?" is answered by what is not; but a yes/no question is
        # answered by either polarity ("Can I telework without approval?" by "Telework
        # requires supervisor approval.": the answer is no).
        negation = (
            question.negated and question.answer_type != "yes_no" and not is_negated(unit.text)
        )
        item = (
            _held_item(question.quantities, unit.text, question.answer_type)
            if question.quantities
            else self._asked_item(terms, unit.text, question.answer_type)
        )
        # The item naming what the question asks of ("Toronto and Vancouver: $250" for
        # the Vancouver hotel cap) answers it, not the list's first figure.
        # (A band's line is found by the span finder itself, from the whole list.)
        span = (
            find_span(item[1], question.answer_type, question.text)
            if item and not question.quantities
            else ""
        )
        span = span or find_span(unit.text, question.answer_type, question.text)
        if (
            not span
            and question.answer_type == "yes_no"
            and self._states_all(terms, own)
            and not unsaid
        ):
            # "do new grads get any extra cpd days?" "New graduates get an extra 2 paid
            # CPD days in their first year.": a sentence that says, in its own words,
            # every key term of a yes/no question states the yes (or, negated, the no).
            span = unit.text
        where = f"{unit.text}\n{' > '.join(chunk.heading_path)}\n{section}\n{passage.title}"
        # Answered only by a span of the asked type, in a context meeting the question's
        # qualifiers ("monthly maximum", "part-time").
        typed = bool(span) and constraints_met(question.text, where, question.answer_type)
        if (
            typed
            and question.type_nouns & terms - covered
            and spells_its_type(
                span,
                question.answer_type,
                unit=unit.text,
                start=bool(question.type_nouns & terms - covered & _START_STEMS),
                nouns=question.type_nouns & terms - covered,
                whom=bool(_WHOM.search(question.text)),
            )
        ):
            # A span of the asked type carries the nouns naming that type ("email" in
            # "who should I email?", "length" in "what is the minimum length?"): an address
            # or a measure answers them in any knowledge base, whatever words it uses.
            covered |= question.type_nouns & terms
        cut = question.cut_words & terms
        if (
            question.answer_type == "yes_no"
            and cut - covered
            and AMOUNT_SHARE_SAID.search(unit.text)
        ):
            # "is my budget reduced?" is said by "the full budget, not a pro-rata amount"
            # (agent/language/rules.py AMOUNT_CUT_ASKED).
            covered |= cut
        again = self._repeat_stems & terms - covered
        if typed and again and FREQUENCY_ASKED.search(question.text) and FREQUENCY.search(span):
            # "how often do I redo it?" asks how often it is done again; a frequency
            # ("every 2 years") is that, whichever verb of repeating either side uses.
            covered |= again
        money = question.money_nouns & terms - covered
        if typed and money and _CURRENCY.search(span) and terms - covered <= money:
            # "a wellness stipend of $60 per month" is the gym reimbursement asked about:
            # an amount of what the question names, every other word of it said ("$195
            # per person" for recruiting is no "training budget per person").
            covered |= money
        # "do we get a gym membership stipend?" is not answered by "You do not need a gym
        # membership": a yes or a no of a payment is said of the payment or its sum.
        unpaid = question.answer_type == "yes_no" and bool(money - covered)
        kind = question.kind_nouns
        if typed and carries_kind(
            kind, terms, frozenset(covered), names_an_answer(unit.text, question.text)
        ):
            # "Travel must be booked through Concur." names the system a "which system"
            # question asks for without calling it one (agent/language/kind_nouns.py).
            covered |= kind & terms
        # Weighted as the question's terms are: a rare one counts more (see `weights`).
        coverage = self.share(terms, covered, names, weights)
        reach = self.share(terms, covered, names, {})
        if names - context:
            coverage *= 0.75  # a name only elsewhere in the passage ("he"): weaker
            reach *= 0.75
        return _Lexical(
            passage=passage,
            unit=unit,
            chunk=chunk,
            section=section,
            covered=frozenset(covered),
            coverage=coverage,
            blocked=contradicted or off_topic or negation,
            typed=typed,
            bridged=bool(bridged),
            complete=not unnamed and not unsaid and not unpaid,
            anchored=bool(names & own),
            span=span if typed else "",
            reach=reach,
            item="\n".join(item) if item else "",
            spells_out=question.answer_type == "definition"
            and typed
            and span == spelled_out(unit.text, question.text),
        )

    def _asked_item(
        self, terms: frozenset[str], text: str, kind: AnswerType
    ) -> tuple[str, str] | None:
        """(lead-in, item) for the one item of the list `text` that names the most key
        `terms` its lead-in does not ("- Atterberg limits: 5 business days" for the
        Atterberg turnaround), or None: no list, no such item, or a tie. A list or steps
        asked for, or a yes/no (being listed is the yes), is answered by the whole list; so
        is an open question ("password requirement?"), which one item naming a word of
        it ("… is required") need not answer. A question stating a quantity is answered
        on the line whose band holds it (agent/language/spans.py)."""
        if kind not in _ONE_ITEM_ANSWERS or (parts := _list_parts(text)) is None:
            return None
        lead, items = parts
        said = self.stems(lead)
        named = [len((self.stems(line) & terms) - said) for line in items]
        most = max(named)
        if not most or named.count(most) > 1:
            return None
        return lead, items[named.index(most)]

    def _states_all(self, terms: frozenset[str], own: frozenset[str]) -> bool:
        """Whether a unit's `own` words hold every one of two or more key `terms` (an
        equivalent a page uses standing for its word, a kind of day for a day)."""
        said = own | self.read_in(terms - own, own) | self._days_said_by_kind(terms - own, own)
        return len(terms) >= 2 and terms <= said

    def _unsaid_verbs(self, particles: frozenset[tuple[str, str]], text: str) -> frozenset[str]:
        """The verb stems of `particles` ((verb stem, particle) pairs) that `text` does
        not say with their particle, next to it or a word after it: "paid out", "paid it
        out" and "payout" say ("pay", "out"); "per pay period" does not."""
        if not particles:
            return frozenset()
        words = [w.casefold() for w in WORD.findall(text)]
        return frozenset(
            stem
            for stem, particle in particles
            if not any(
                (self.stems(w) == {stem} and particle in words[i + 1 : i + 3])
                or (w.endswith(particle) and self.stems(w[: -len(particle)]) == {stem})
                for i, w in enumerate(words)
            )
        )

    def _held(self, question: QuestionAnalysis, text: str) -> frozenset[str]:
        """Stems of the question's quantities that a range or bound in `text` holds."""
        if not question.quantities:
            return frozenset()
        return self.stems(" ".join(held(question.quantities, text)))

    def _aliases_of(self, text: str) -> tuple[tuple[frozenset[str], frozenset[str]], ...]:
        """(full name, abbreviation) stem sets for each abbreviation `text` defines."""
        return tuple(
            (self.stems(name), self.stems(short))
            # "PD" a page writes beside the "professional development" it spells out.
            for short, name in (used_abbreviations(text) | defined_abbreviations(text)).items()
        )

    def weights(
        self, terms: Iterable[str], asked: QuestionAnalysis | None = None
    ) -> dict[str, float]:
        """Each term's weight in coverage: how rare it is in the knowledge base. "Is
        Juneteenth a paid holiday?" is about Juneteenth, which few pages or none mention,
        more than about "paid" and "holiday", which many do: a sentence of paid holidays
        without it covers little of the question.

        A term no page has is the rarest of all, unless the `asked` question wrote it as
        an everyday English word that is not a name: "i think i emailed the wrong
        patient", "do hourly people get paid extra" ask in words a page need not use, so
        "think", "people" and "extra" weigh less (agent/language/everyday.py)."""
        terms = list(terms)
        if self._corpus_terms is None or not self._options.rarity_weights:
            return dict.fromkeys(terms, 1.0)
        # A verb weighs as its commonest form the index has ("lose" as "lost").
        forms = {t: self._analyzer.index_forms(t) for t in terms}
        every = set(terms).union(*forms.values())
        rarity = self._corpus_terms.rarity(every)
        weights = {t: min(rarity[x] for x in {t, *forms[t]}) for t in terms}
        if asked is not None:
            known = self._corpus_terms.known(every)
            # A word before one the pages have names a kind of it ("sick leave" where
            # pages have only annual leave): the thing asked about, however everyday.
            kinds = {first for first, second in asked.pairs if second in known}
            phrasing = [
                t
                for t in terms
                if not {t, *forms[t]} & known and t not in asked.names and t not in kinds
            ]
            for term, weight in self._everyday(asked.text, phrasing).items():
                weights[term] *= weight
        return weights

    def naming(self, question: QuestionAnalysis, terms: Sequence[str]) -> tuple[str, ...]:
        """Those of `terms` that may name what a question is about: its names, and words
        less common than the commonest of English ("think", "know", "see"), which are
        how any question is put (agent/language/everyday.py)."""
        everyday = self._everyday(question.text, terms)
        commonest = self._options.everyday.commonest_weight
        return tuple(t for t in terms if t in question.names or everyday.get(t, 1.0) > commonest)

    def _everyday(self, question: str, terms: Sequence[str]) -> dict[str, float]:
        """The everyday weight of each of `terms` as `question` wrote it (the rarest of
        its words of that stem: "parental" is rarer than "parents")."""
        found: dict[str, float] = {}
        everyday = self._options.everyday
        wanted = set(terms)
        for word in WORD.findall(question):
            for term in wanted & self.stems(word):
                found[term] = max(found.get(term, 0.0), everyday.weight(word.casefold()))
        return found

    @staticmethod
    def share(
        terms: frozenset[str],
        covered: Iterable[str],
        names: Iterable[str],
        weights: dict[str, float],
    ) -> float:
        """The weighted share of `terms` that `covered` holds, `names` counting twice."""
        held = set(covered)
        named = set(names) & terms

        def weight(term: str) -> float:
            return weights.get(term, 1.0) * (2 if term in named else 1)

        total = sum(weight(t) for t in terms)
        return sum(weight(t) for t in terms & held) / total if total else 1.0

    def stems(self, text: str) -> frozenset[str]:
        return frozenset(self._sequence(text))

    def _pairs(self, text: str) -> set[tuple[str, str]]:
        return {(a, b) for a, b in itertools.pairwise(self._phrase_words(text)) if a and b}

    def _phrase_words(self, text: str) -> tuple[str | None, ...]:
        return _remembered(self._phrases, text, self._analyzer.phrase_words)

    def _sequence(self, text: str) -> tuple[str, ...]:
        return _remembered(self._stems, text, lambda t: tuple(self._analyzer.stems(t)))


_START_STEMS = frozenset({"start", "begin"})
_WHOM = re.compile(r"\bwhom?\b", re.I)
_CURRENCY = re.compile(r"[$€£]\s?\d|\d\s?(?:dollars|euros|pounds)\b", re.I)
# A code: letters and digits joined by a hyphen ("INT-02", "GS-13", "QS-24117").
_CODE = re.compile(r"(?<![\w-])[A-Za-z]{1,6}-\d{1,6}(?![\w-])")


def _remembered(
    cache: OrderedDict[str, T], text: str, compute: Callable[[str], T], limit: int = 100_000
) -> T:
    """`compute(text)`, kept in `cache` (the oldest of `limit` entries dropped first)."""
    found = cache.get(text)
    if found is None:
        found = compute(text)
        cache[text] = found
        if len(cache) > limit:
            cache.popitem(last=False)
    return found


def _page_texts(passages: Sequence[Passage]) -> dict[int, str]:
    """Each document's title and the text of its passages read, in document order."""
    by_page: dict[int, list[Passage]] = {}
    for p in passages:
        by_page.setdefault(p.document_id, []).append(p)
    texts = {
        page: dict.fromkeys(p.text for p in sorted(read, key=lambda p: p.char_start))
        for page, read in by_page.items()
    }
    return {page: "\n".join([by_page[page][0].title, *found]) for page, found in texts.items()}


def quotable_units(splitter: SentenceSplitter, text: str) -> list[Sentence]:
    """The units of `text` a quote can be: sentences (with the sentence they refer back
    to), list items, lead-ins with their lists; a lead-in or an item alone is quoted with
    its list instead. A question the page asks stays quotable: in a Slack thread or an
    FAQ it is where the answer's topic is named, and an escalated reply may show it as
    what was found (it is never a companion, agent/reasoners/companions.py). What the
    scorer embeds, and what agent/sentence_warmup.py embeds
    ahead of the questions."""
    units = _with_antecedents(splitter.split(text), text)
    listed = [(u.start, u.end) for u in units if u.kind == "list"]
    return [u for u in units if not u.lead_in and not _inside_list(u, listed)]


# A line of a list: a bullet or a number opens it.
_ITEM_LINE = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_ITEM_NUMBER = re.compile(r"^\s*\d+[.)](?=\s)", re.M)  # "4. " numbering an item


def _held_item(
    asked: tuple[AskedQuantity, ...], text: str, kind: AnswerType
) -> tuple[str, str] | None:
    """(lead-in, item) for the item of the list `text` whose band holds a quantity the
    question states ("10 or more years of service: about 30 days" for "how many pto days
    after 10 yrs?"), the tightest if several hold it; None if there is no list or no such
    item. Embedded whole, an accrual table reads as far from the question as any list;
    its lead-in and the asker's line read as close as the one sentence that answers."""
    if kind not in _ONE_ITEM_ANSWERS or (parts := _list_parts(text)) is None:
        return None
    lead, items = parts
    holding = [line for line in items if held(asked, line)]
    if not holding:
        return None
    return lead, min(holding, key=lambda line: tightest(asked, line))


def _list_parts(text: str) -> tuple[str, list[str]] | None:
    """(lead-in, items) of a list of two or more items, else None."""
    lines = [line for line in text.splitlines() if line.strip()]
    items = [line for line in lines if _ITEM_LINE.match(line)]
    if len(items) < 2:
        return None
    return "\n".join(line for line in lines if not _ITEM_LINE.match(line)), items


# Answer types one item of a list answers: a value ("Toronto and Vancouver: $250").
_ONE_ITEM_ANSWERS: frozenset[AnswerType] = frozenset(
    {"number", "date", "contact", "person", "place", "organisation"}
)

# A sentence opening with one of these speaks of what the sentence before it named.
_ANAPHORIC = re.compile(r"^(?:It|Its|He|His|She|Her|They|Their|This|These|Those|There)\b")


def _with_antecedents(units: list[Sentence], text: str) -> list[Sentence]:
    """Each sentence that opens with a pronoun quoted together with the sentence before
    it ("The CSNET was … . Its purpose was …"): alone it would not say what it is about."""
    joined = list(units)
    for i in range(1, len(units)):
        before, unit = units[i - 1], units[i]
        if unit.kind != "sentence" or before.kind != "sentence" or before.lead_in:
            continue
        if not _refers_back(unit.text, before.text) or text[before.end : unit.start].strip():
            continue
        joined[i] = dataclasses.replace(
            unit, text=text[before.start : unit.end], start=before.start
        )
    return joined


def _refers_back(sentence: str, before: str) -> bool:
    """Opens with a pronoun, a preposition and a demonstrative ("Outside those hours,
    call …", "In that case …"), or with "The" and a word of the sentence before ("…
    known as the Wars of Religion. The wars finally ended with …")."""
    if _ANAPHORIC.match(sentence) or _POINTS_BACK.match(sentence):
        return True
    match = _THE_WORD.match(sentence)
    return match is not None and match.group(1).casefold() in before.casefold().split()


_THE_WORD = re.compile(r"^The\s+(\w+)\b")
# A preposition and a demonstrative: the hours, the case or the period the sentence
# before named ("Outside those hours, call the after-hours line").
_POINTS_BACK = re.compile(
    r"^(?:In|Outside|Inside|During|After|Before|For|With|Under|At|On|Beyond|Within|"
    r"Between|Besides|Unlike|Like|Until|Apart from)\s+(?:this|that|these|those|such)\b"
)


def _other_kind(
    head: str, modifier: str, words: tuple[str | None, ...], no_modifiers: Iterable[str] = ()
) -> bool:
    """Whether `words` name `head` with a modifier other than `modifier` ("sick leave"):
    a word right before it in the text, not one a stop word stands between, nor one of
    `no_modifiers`: another word of the question ("unused budget" for "unused learning
    budget" is the same one) or a preposition ("runs between Lot R")."""
    no_modifiers = frozenset(no_modifiers)
    return any(
        w == head
        and i > 0
        and words[i - 1] is not None
        and words[i - 1] != modifier
        and words[i - 1] not in no_modifiers
        for i, w in enumerate(words)
    )


def _another_count(asked: tuple[str | None, ...], words: tuple[str | None, ...]) -> bool:
    """Whether `words` name what a count or ordinal of the question counts ("session" of
    "the fourth safety training session", the words after it) only with another count or
    ordinal right before it ("The second session"), and never the question's own."""
    for i, count in enumerate(asked):
        if not count or not COUNT_STEM.match(count):
            continue
        counted = set(itertools.takewhile(bool, asked[i + 1 : i + 4]))
        before = {a for a, b in itertools.pairwise(words) if b in counted}
        # Naming the question's own anywhere ("the late 17th and early 18th centuries"),
        # the unit may speak of it too.
        if count not in words and any(a and COUNT_STEM.match(a) for a in before):
            return True
    return False


def _holds_run(sequence: tuple[str, ...], run: tuple[str, ...]) -> bool:
    """Whether `run` stands in `sequence`, its words side by side and in order."""
    n = len(run)
    return any(sequence[i : i + n] == run for i in range(len(sequence) - n + 1))


def _inside_list(unit: Sentence, listed: list[tuple[int, int]]) -> bool:
    return unit.kind != "list" and any(a <= unit.start and unit.end <= b for a, b in listed)


def _chunk_of(passage: Passage, unit: Sentence) -> ChunkSpan | None:
    """The stored chunk holding the unit whole (document offsets), if any."""
    start, end = passage.char_start + unit.start, passage.char_start + unit.end
    for span in passage.spans:
        if span.char_start <= start and end <= span.char_end:
            return span
    return None
