"""What a question asks for: its key terms, the names it mentions, the answer type, negation.

The extractive reasoner judges a sentence by these, not by a similarity score alone: a
sentence answers "When did X happen?" only if it mentions X (the key terms, stemmed as
BM25 stems them) and holds a date that the question does not already hold. SQuAD 2.0's
unanswerable questions are written to look answerable, mostly by swapping an entity,
a number or a word for its antonym, or by adding a negation; a term the evidence lacks
or a negation it does not share is what gives them away.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Literal

from agent.language.kind_nouns import kind_nouns
from agent.language.ranges import AskedQuantity, asked_quantities, bounding_words
from agent.language.rules import (
    AMOUNT_ANSWERS,
    AMOUNT_CUT_ASKED,
    ASKING_WORDS,
    CHAT_SPELLINGS,
    HOW_ADJECTIVES,
    IRREGULAR_FORMS,
    LIGHT_VERB_PARTICLES,
    LIGHT_VERBS,
    MONEY_GOT_BACK,
    MONEY_NOUNS,
    MONEY_OWED_BACK,
    PHRASAL_PARTICLES,
    QUALIFIERS,
    RELATIVE_MOMENTS,
    TYPE_NOUNS,
    VAGUE_AMOUNTS,
)
from agent.language.scenes import points_back
from agent.language.typos import english
from store.text_analysis import CANDIDATE, TextAnalyzer
from store.text_forms import WORD, fold_accents

AnswerType = Literal[
    "yes_no",
    "number",  # a number, an amount, a rate, a percentage
    "date",  # a date, a time, a duration, a deadline
    "person",
    "organisation",
    "place",
    "contact",  # an email, a link, a channel, a phone number
    "procedure",
    "list",
    "definition",
    "reason",
    "entity",
]

_NEGATION = re.compile(r"\b(?:not|never|no longer|none|neither|nor|without)\b|n[’']t\b", re.I)
# Phrases that say how a question asks, not what about; none of their words is a term:
# "take place" says "happen" and "stand for" says "mean"; "words of wisdom" and "any
# tips" ask for advice; "what are the parts" asks for what something holds; "get past",
# "get around" a limit ask how to exceed it, which a page says as "request a larger
# capacity" or "up to 24 hours". Pages give the advice and the parts without naming them so.
_FRAMES = re.compile(
    r"\b(?:(?:take|takes|took|taken|taking)\s+place|stands?\s+for|words?\s+of\s+wisdom|"
    r"(?:any|some)\s+(?:advice|tips|pointers|suggestions)|"
    r"(?:get|gets|getting|got|go|goes|going)\s+(?:past|around|beyond)|"
    # "how much notice does X need?" asks how far ahead, which pages say as "at least 48
    # hours in advance" or "two weeks before", seldom with the word "notice"
    r"(?<=how much )(?:advance\s+)?notice|"
    # "am I allowed to lift it alone?" asks what "can I" and "may I" ask, which pages
    # answer as "may", "must not" or "do not", seldom with "allowed"
    r"(?:allowed|permitted)\s+to|"
    r"(?:what|which)\s+are\s+(?:the|its|their)\s+(?:parts|components|elements|pieces|contents))\b",
    re.I,
)
# A wait asked for ("how long do I need to be here before I can take a sabbatical?", "how
# long after buying something do I have to claim?"): "before" and "after" mark the point
# the wait is counted from or to, not an order of events, and the page states the wait
# either way ("After 10 years of service you may take ...", "within 30 days of spending").
_WAIT_POINT = re.compile(
    # (the gap bounded: a message of thousands of "how long"s is read in linear time)
    r"\b(how\s+(?:long|soon|many\s+(?:days|weeks|months|years))\b[^?.!]{0,120}?)\s+"
    r"(?:before|after|until|till)\b",
    re.I,
)
# "how long do share links last?" asks how long they are good for: "last" restates the
# duration asked, which pages say as "expire after 14 days" or "are valid for a year".
_HOW_LONG_LAST = re.compile(
    r"\b(how\s+long\s+(?:do|does|did|will|would|should|can)\b[^?.!]{1,120}?)\s+last"
    r"(?=\s*(?:$|[?.!,;]|\b(?:for|if|when|after|before|once|in|at|on|and|or)\b))",
    re.I,
)
# "how do pro deals work?", "how does the pension work?" ask for a description; "work"
# says how it is asked, not what about (the page says "you may buy gear at cost").
_HOW_IT_WORKS = re.compile(
    r"^(\s*how\s+(?:do|does|did)\b.+?)\s+works?\b((?:\s+(?:for|at|in|with)\b.*?)?)\s*\??\s*$",
    re.I,
)
# "come out", "go over": a light verb's particle is part of the verb (agent/language/rules.py).
_LIGHT_VERB_PARTICLE = re.compile(
    rf"\b({'|'.join(sorted(LIGHT_VERBS))})\s+(?:{'|'.join(sorted(LIGHT_VERB_PARTICLES))})\b",
    re.I,
)
# "how big", "how old": the adjective asks for a measure (agent/language/rules.py).
_HOW_ADJECTIVE = re.compile(rf"\b(how)\s+(?:{'|'.join(sorted(HOW_ADJECTIVES))})\b", re.I)
# A quantity given as an example or a guess: "like $50M", "say 20+ hours", "e.g. 8".
_EXAMPLE_QUANTITY = re.compile(
    r"\b(?:like|say|e\.g\.|eg|such as|for example|for instance|maybe|roughly|around)"
    r",?\s+(?:\$|£|€)?(?P<quantity>\d[\w,.%-]*)",
    re.I,
)
# What a term is asked to mean in ("what does TK mean in a draft doc?"): the setting the
# asker met it in, which the definition need not repeat.
_MEANING_SETTING = re.compile(
    r"\b(?:mean|means|stand for|stands for)\b(.+)$|^what(?:'s| is| are) \S+ ((?:in|on) .+)$",
    re.I,
)
# The auxiliaries that open a yes/no question ("is", "can", "should", …).
_AUXILIARIES = (
    r"(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|may|"
    r"might|must|shall)"
)
_AUXILIARY = re.compile(rf"^{_AUXILIARIES}\b", re.I)
# Checked in order: the first pattern that matches the question gives its answer type.
_TYPE_PATTERNS: tuple[tuple[AnswerType, re.Pattern[str]], ...] = (
    (
        "contact",
        re.compile(
            r"\b(?:(?:what|which)(?:'s| is| are)? (?:the |their |its |his |her |your )?"
            r"(?:e-?mail(?: address)?|url|link|website|web ?site|phone(?: number)?|"
            r"slack channel|channel|handle|address|contact)|"
            # "what's the number for facilities?" asks for a phone number, not a count
            r"what(?:'s| is) the number (?:for|to call|to ring)|"
            # "what number do I call?": the one to dial, not a count
            r"(?:what|which) (?:number|line|extension) (?:do|should|can|could|would|will|"
            r"must) (?:i|we|you) (?:call|ring|dial|phone|text)|"
            r"(?:who|where) (?:do|should|can|could) (?:i|we|you) (?:contact|email|e-mail|"
            r"reach|message|ask|call|ping)|"
            # "how do I reach the security team?" asks where to write, not for steps
            r"how (?:do|should|can|could) (?:i|we|you) (?:contact|reach|e-?mail|message|ping)|"
            # "is there a number I can call?" asks for the number, not for a yes (h22)
            r"(?:is there|are there|do (?:we|you|they) have) (?:an? |any )?(?:e-?mail(?: address)?|"
            r"phone(?: number)?|number|hotline|helpline|line|link|website|channel|address)e?s? "
            r"(?:(?:i|we|you) (?:can|could|should) |to )(?:call|ring|phone|text|e-?mail|"
            r"write(?: to)?|contact|reach|message|ping))\b",
            re.I,
        ),
    ),
    (
        "date",
        re.compile(
            r"\b(?:when|what (?:year|years|date|day|month|century|decade|time|era|period)|"
            r"which (?:year|years|date|day|month|century|decade)|in what (?:year|century|"
            r"decade|month)|how long ago|since when|(?:what|which)(?:'s| is) the deadline|"
            r"by when|how soon|how far in advance|"
            # "latest time to ring in sick?": the bound of a time, asked tersely
            r"(?:latest|earliest) (?:time|date|day)|"
            # a frequency is a period ("every three years"), as the date spans read it (h22)
            r"how often|"
            # a period named by its noun ("turnaround on atterberg limits?") is a duration
            r"turn-?around|lead time|processing time|wait(?:ing)? time)\b",
            re.I,
        ),
    ),
    (
        "number",
        re.compile(
            r"\b(?:how (?:many|much|long|old|far|big|large|tall|high|often|fast|deep|wide|"
            r"heavy)|what (?:number|percentage|percent|amount|proportion|fraction|size|"
            r"population|age|rate|cost|price|fee|score|"
            # a measure asked by its name ("what temp should the ovens be set at?") is a
            # number with its unit, never "checked every month"
            r"temperature|temp|weight|height|length|distance|speed|capacity|volume|depth|"
            r"width)|"
            r"what(?:'s| is) the (?:\w+ )?(?:number|amount|percentage|population|size|max|"
            r"maximum|min|minimum|limit|cap|rate|cost|price|fee|reimbursement|allowance)|"
            r"how much|how many)\b",
            re.I,
        ),
    ),
    (
        "organisation",
        re.compile(
            r"\b(?:what|which) (?:agency|agencies|office|team|organi[sz]ation|company|"
            r"department|division|vendor|provider|group|bureau|contractor)\b",
            re.I,
        ),
    ),
    ("person", re.compile(r"\b(?:who|whom|whose|which (?:person|people|man|woman))\b", re.I)),
    (
        "place",
        re.compile(
            r"\b(?:where|what (?:country|city|state|place|town|region|continent|county|"
            r"province|location|island|river)|which (?:country|city|state|place|town|"
            r"region|continent|county|province|island|river))\b",
            re.I,
        ),
    ),
    (
        # "how do pro deals work?", "how does vacation work for part-timers?" ask what
        # the thing is and how it runs, which a page describes: no steps to follow
        "definition",
        re.compile(r"^\W*how (?:do|does|did) .+? works?\b(?:\s+(?:for|at|in|with)\b.*)?\W*$", re.I),
    ),
    (
        "procedure",
        re.compile(
            r"\b(?:how (?:do|does|can|should|would|could|to|is|are)\b(?! (?:many|much))|"
            r"what (?:steps|is the process|is the procedure|do i need to do|should i do)|"
            r"what do i do)\b",
            re.I,
        ),
    ),
    ("reason", re.compile(r"\b(?:why|for what reason|what (?:caused|causes|led))\b", re.I)),
    (
        "list",
        re.compile(
            r"\b(?:what are (?:the )?(?:types|kinds|ways|options|steps|benefits|rules)|"
            r"which (?:types|kinds)|list (?:the|all))\b",
            re.I,
        ),
    ),
    (
        "definition",
        re.compile(
            r"\b(?:what (?:is|are|was|were) (?:an? |the )?\S+\??$|what(?:'s| is) (?:an? )?\S+"
            r"(?: \S+)?\??$|what (?:does|do) .+ (?:mean|stand for)|meaning of|define|"
            # a code or an acronym and where the asker met it ("what is INT-02 on
            # ledgerline?"): a definition asked in a setting, as "what does TK mean in …"
            r"what(?:'s| is| are) (?-i:[A-Z][A-Z0-9]*-?[A-Z0-9]+|[A-Za-z]+-?\d[\w-]*) "
            r"(?:in|on) .+$|"
            r"definition of|what(?:'s| is) meant by)",
            re.I,
        ),
    ),
)


@dataclass(frozen=True, slots=True)
class QuestionAnalysis:
    text: str
    # Stemmed content terms, in order, without repeats and without asking words.
    terms: tuple[str, ...]
    # Stems of the words written with a capital (past the first word) or with digits:
    # the names and numbers the evidence must share.
    names: tuple[str, ...]
    answer_type: AnswerType
    negated: bool
    # Adjacent content words ("annual leave"), as stems: the kinds of thing asked about.
    pairs: tuple[tuple[str, str], ...] = ()
    # Terms only the question's telling sentences hold ("My dad passed away last week." before
    # "How much sick leave can I use for bereavement?"): searched for, but an answer need
    # not repeat them.
    context: frozenset[str] = frozenset()
    # Words of the qualifiers it carries ("monthly", "maximum", "part-time"), which the
    # qualifier check judges against a quote's context (agent/language/spans.py).
    qualifiers: frozenset[str] = frozenset()
    # Light verbs among the terms ("get", "give"): a unit sharing one reads closer to the
    # question, one without is not judged on them (agent/language/rules.py LIGHT_VERBS).
    light_verbs: frozenset[str] = frozenset()
    # Terms that name the kind of answer asked ("email" in "who should I email?"): a unit
    # holding a span of that type carries them (agent/language/rules.py TYPE_NOUNS).
    type_nouns: frozenset[str] = frozenset()
    # The head noun of a "which/what NOUN …" phrase ("system" in "Which system must travel
    # be booked through?"): it names the answer's kind (agent/language/kind_nouns.py).
    kind_nouns: frozenset[str] = frozenset()
    # The scene's terms when the asking part is too thin to set them aside and does not
    # point back at them ("working from Denver next week - how should I let folks know?"):
    # those no page has are the asker's particulars (agent/language/scenes.py).
    scene: frozenset[str] = frozenset()
    # Quantities it states with a unit ("after 4 years"): a page's band that holds one
    # ("3 to 6 years") meets it (agent/language/ranges.py).
    quantities: tuple[AskedQuantity, ...] = ()
    # Stems of the words bounding them ("after" of "after 4 years"), said of the quantity.
    bounding: frozenset[str] = frozenset()
    # Terms only a circumstance clause of an asking sentence holds ("if we stay late for a
    # deadline" in "do we get paid overtime if we stay late for a deadline?"): the asker's
    # case, which a page's rule covers in its own words (see `ask_core`).
    circumstance: frozenset[str] = frozenset()
    # Nouns naming a payment to staff ("stipend", "reimbursement"): a unit stating an
    # amount of money carries them (agent/language/rules.py MONEY_NOUNS).
    money_nouns: frozenset[str] = frozenset()
    # Words asking whether an amount is cut ("reduced" of "is my budget reduced?"), which
    # a unit stating the amount's share says (agent/language/rules.py AMOUNT_CUT_ASKED).
    cut_words: frozenset[str] = frozenset()
    # Of a question whether a thing is one of a kind ("is juneteenth a federal holiday
    # here?"), the thing's stems: names, which a page must say itself; no page of the kind
    # stands in for them (agent/reasoners/evidence.py `_bridged`).
    subject: frozenset[str] = frozenset()
    # A term's verb and the particle the question puts after it ("pay", "out" of "paid
    # out"): a phrasal verb means more than its verb ("paid out" is not "pay period").
    particles: frozenset[tuple[str, str]] = frozenset()

    @property
    def key_terms(self) -> frozenset[str]:
        return frozenset(self.terms) - self.context - self.qualifiers

    @property
    def said_as_names(self) -> frozenset[str]:
        """Terms a yes or a no must say as it must a name: its phrasal verb ("paid out"
        is not "pay period") and the payment it asks of ("a gym membership stipend" is
        not "a gym membership")."""
        if self.answer_type != "yes_no":
            return frozenset()
        return frozenset(verb for verb, _particle in self.particles) | self.money_nouns


class QuestionAnalyzer:
    """Analyses questions with the same stemming as the keyword index."""

    def __init__(self, analyzer: TextAnalyzer) -> None:
        self._analyzer = analyzer
        self._stop_words = analyzer.options.stop_words
        self._light_verbs = frozenset(self._words(" ".join(sorted(LIGHT_VERBS))))
        self._money_nouns = frozenset(self._words(" ".join(sorted(MONEY_NOUNS))))
        # The keyword index stems "lost" as "lost", where these stems read "lose": what the
        # index calls each irregular form, by the verb's stem here.
        forms: dict[str, set[str]] = {}
        for form, verb in IRREGULAR_FORMS.items():
            for stem in self._words(verb):
                forms.setdefault(stem, set()).update(analyzer.analyse(form).words)
        self._index_forms = {stem: frozenset(found) for stem, found in forms.items()}

    def stems(self, text: str) -> list[str]:
        """Stemmed words, accents folded ("Rély" and "Rely" are one word to a reader), and
        without the lone letters a possessive leaves ("Rely's": "rely", "s")."""
        return self._words(fold_accents(text))

    def index_forms(self, stem: str) -> frozenset[str]:
        """The keyword index's stems of the irregular forms of the verb `stem` reads
        ("lost" for "lose"), none for any other stem."""
        return self._index_forms.get(stem, frozenset())

    def phrase_words(self, text: str) -> tuple[str | None, ...]:
        """The stems of `text` in reading order, with None wherever a stop word or
        punctuation stood: two stems side by side here were side by side in the text
        ("sick leave"), not merely around a dropped word ("signing of the Treaty")."""
        folded = fold_accents(text).casefold()
        sequence: list[str | None] = []
        run: list[str] = []
        end = 0
        for match in CANDIDATE.finditer(folded):
            token = match.group()
            if folded[end : match.start()].strip() or token in self._stop_words:
                sequence.extend([*self._words(" ".join(run)), None] if run else [None])
                run = []
            if token not in self._stop_words:
                run.append(token)
            end = match.end()
        sequence.extend(self._words(" ".join(run)))
        return tuple(sequence)

    def _words(self, folded: str) -> list[str]:
        """Stems of text whose accents are already folded, lone letters dropped, an
        irregular past read as its verb ("lost" is "lose"; agent/language/rules.py)."""
        words = self._analyzer.analyse(_IRREGULAR.sub(_base_verb, folded)).words
        return [w for w in words if len(w) > 1 or w.isdigit()]

    def analyse(self, question: str) -> QuestionAnalysis:
        text = chat_spelled(" ".join(question.split()))
        content = _WAIT_POINT.sub(r"\1", _HOW_IT_WORKS.sub(r"\1\2", text))
        content = _HOW_LONG_LAST.sub(r"\1", content)
        content = _HOW_ADJECTIVE.sub(r"\1", _FRAMES.sub(" ", content))
        content = _LIGHT_VERB_PARTICLE.sub(r"\1", content)
        content = RELATIVE_MOMENTS.sub(" ", content)  # when the asker's case happened
        content = VAGUE_AMOUNTS.sub(" ", content)
        content = MONEY_GOT_BACK.sub(r"\1 reimbursed", content)
        content = MONEY_OWED_BACK.sub(r"\1repay", content)
        # Of the part that asks only: "woke up with a fever, can i text my om?" asks of texting.
        particles = frozenset(
            (stem, m.group(2).casefold())
            for sentence in asking_sentences(content)
            for m in PHRASAL_PARTICLES.finditer(ask_core(sentence))
            for stem in self.stems(m.group(1))
        )
        content = PHRASAL_PARTICLES.sub(r"\1", content)
        words = [w for w in self.stems(content) if w not in ASKING_WORDS]
        terms = list(dict.fromkeys(words))
        how_put = ASKING_WORDS | self._light_verbs  # a verb names no kind of thing
        sequence = [w if w not in how_put else None for w in self.phrase_words(content)]
        pairs = [(a, b) for a, b in itertools.pairwise(sequence) if a and b]
        sentences = asking_sentences(content)
        asked = {w for s in sentences for w in self.stems(s)} & set(terms)
        # "Any words of wisdom?" or "What now?" ask about the scene itself: all of it is key.
        telling = frozenset(terms) - asked if len(asked) >= 3 else frozenset()
        asking = " ".join(sentences)
        core = " ".join(ask_core(s) for s in sentences)
        circumstance = asked - set(self.stems(core)) if not points_back(core) else frozenset()
        scene = (
            frozenset(terms) - asked
            if not telling and asking != " ".join(content.split()) and not points_back(asking)
            else frozenset()
        )
        # A quantity the asker offers as an example ("big contracts, like $50M") is a
        # premise the answering page weighs with its own figures, not a word it must
        # repeat; a quantity stated plainly ("earn more than $50,000") is a constraint.
        supplied = {
            s
            for m in _EXAMPLE_QUANTITY.finditer(text)
            if not _named(m["quantity"])
            for s in self.stems(m["quantity"])
        }
        kind = answer_type(text)
        setting = _MEANING_SETTING.search(text) if kind == "definition" else None
        if setting:
            supplied |= set(self.stems(setting.group(1) or setting.group(2)))
        quantities = asked_quantities(text)
        subject = self._subject(text)
        return QuestionAnalysis(
            text=text,
            terms=tuple(terms),
            names=tuple(
                t for t in dict.fromkeys([*self._name_stems(text), *subject]) if t in terms
            ),
            subject=frozenset(subject) & set(terms),
            answer_type=kind,
            # A negation in the scene ("my authorization never got approved. what now?")
            # tells the asker's situation; only one in the asking part says what is asked.
            negated=any(_NEGATION.search(s) for s in asking_sentences(text)),
            pairs=tuple(dict.fromkeys(pairs)),
            context=telling | (supplied & set(terms)),
            qualifiers=frozenset(
                w
                for q in QUALIFIERS
                if not q.amount or kind in AMOUNT_ANSWERS
                for m in q.asked.finditer(text)
                for w in self.stems(m.group())
            ),
            light_verbs=self._light_verbs & set(terms),
            type_nouns=frozenset(self.stems(" ".join(TYPE_NOUNS.get(kind, ())))) & set(terms),
            kind_nouns=frozenset(self.stems(" ".join(kind_nouns(content)))) & set(terms),
            scene=scene,
            quantities=quantities,
            bounding=frozenset(self.stems(" ".join(bounding_words(quantities, text)))),
            circumstance=frozenset(circumstance),
            # "allowed" is permission, no allowance, though both stem to "allow".
            money_nouns=frozenset(
                stem
                for word in WORD.findall(text)
                if not _PERMITTED.fullmatch(word)
                for stem in self.stems(word)
            )
            & self._money_nouns
            & set(terms),
            particles=frozenset((t, p) for t, p in particles if t in terms),
            cut_words=frozenset(
                t for m in AMOUNT_CUT_ASKED.finditer(text) for t in self.stems(m.group())
            )
            & set(terms),
        )

    def _name_stems(self, text: str) -> list[str]:
        words = WORD.findall(text)
        days = {m.group(1).casefold() for m in _DAY_OF_MONTH.finditer(text)}
        named = [
            w
            for i, w in enumerate(words)
            if (i > 0 and w[:1].isupper())
            or (
                _named(w)
                and not _counts_times(w, words[i + 1 : i + 2])
                and w.casefold() not in days
            )
        ]
        return self.stems(" ".join(named))

    def _subject(self, text: str) -> list[str]:
        """The stems of the thing an asking sentence asks is one of a kind ("juneteenth"
        of "is juneteenth a federal holiday here?")."""
        found = [m["subject"] for s in asking_sentences(text) if (m := _COPULAR_SUBJECT.match(s))]
        return self.stems(" ".join(found))


# "is juneteenth a federal holiday here?": a yes-or-no question whether a thing is one of
# a kind is about that thing, however it is written; a page of the kind that never names
# it ("Federal holidays are paid days off.") does not answer, just as it would not for
# "Juneteenth": the subject is a name. It is one to three words, not a pronoun or
# "there" ("is there a bonus?", "is it ok if ..."), before the indefinite article or
# "one of".
_COPULAR_SUBJECT = re.compile(
    r"^(?:is|are|was|were)\s+"
    r"(?!(?:there|it|this|that|these|those|they|we|i|you|he|she)\b)"
    r"(?P<subject>[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,2}?)\s+(?:an?|one\s+of)\s+\w",
    re.I,
)


_PERMITTED = re.compile(r"allow(?:s|ed|ing)?", re.I)


def asking_sentences(text: str) -> list[str]:
    """The sentences (and dash-joined clauses) of a message that ask (a question mark, or
    opening with a question word or an auxiliary), when it also has parts that only tell;
    else all of it. A Slack question often sets the scene first: "My dad passed away last
    week. How much of my sick leave can I use?" asks only in its second sentence, and "I'm
    resigning - how far ahead should I start?" only after its dash."""
    sentences = [
        c.strip()
        for s in _SENTENCE_END.split(text.strip())
        for c in _CLAUSE_DASH.split(s)
        if c.strip()
    ]
    asking = [s for s in sentences if s.rstrip().endswith("?") or _ASKS.match(s.strip())]
    if asking and len(asking) < len(sentences):
        return asking
    return sentences or ([text.strip()] if text.strip() else [])


def ask_core(sentence: str) -> str:
    """The part of an asking sentence that asks, without the clauses that set out the
    asker's case: a leading condition ("if I fail part 2 and have to resit, does the
    studio still cover the fee?"), a leading statement ("cut my hand on a box cutter, do I
    need to report it?") or a trailing condition ("do we get paid overtime if we stay late
    for a deadline?"). A condition is the asker's circumstance; the page that answers
    states its rule in its own words ("does not pay overtime"), seldom the asker's."""
    core = sentence.strip()
    leading = _LEADING_CASE.match(core)
    # "When I leave, will …?" opens with a condition, not the question word it shares
    # with "When is the deadline, roughly?"
    case = leading and (not asks(leading.group()) or _CONDITION_OPENS.match(leading.group()))
    if leading and case and asks(core[leading.end() :]):
        core = core[leading.end() :]
    trailing = _TRAILING_CONDITION.search(core)
    if trailing and len(WORD.findall(core[: trailing.start()])) >= 3:
        core = core[: trailing.start()]
    return core.strip() or sentence.strip()


def asks(sentence: str) -> bool:
    """Whether `sentence` asks (a question mark, or opening with a question word or an
    auxiliary) rather than tells ("one conflicts with a project meeting")."""
    return sentence.rstrip().endswith("?") or bool(_ASKS.match(sentence.strip()))


# A sentence ends at ".", "!" or "?" before a space (not inside "e.g." or "3.5").
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
# A dash between spaces joins a scene to its question as a full stop would ("I'm
# resigning - how far ahead should I start offboarding?"); a hyphen inside a word
# ("part-time", "follow-up") is not one.
_CLAUSE_DASH = re.compile(r"\s+(?:-{1,2}|\u2013|\u2014)\s+|\s*\u2014\s*")
# A clause before a comma that sets out the case, when the rest asks: a condition ("if
# I fail part 2, ...") or a statement ("cut my hand on a box cutter, do I ...").
_LEADING_CASE = re.compile(r"^(?:[^,?]*?),\s+(?=\S)")
# A condition opens with its conjunction and a subject, not an auxiliary ("when I leave",
# never "when is", "when am").
_CONDITION_OPENS = re.compile(
    rf"^(?:if|when|whenever|once|after|before)\s+(?!(?:am|{_AUXILIARIES})\b)", re.I
)
# A condition after what is asked ("... if we stay late for a deadline?"). Not "after"
# or "before": "how long after buying something" asks how long from it.
_TRAILING_CONDITION = re.compile(
    r"\s+(?:if|when|whenever|once|while|unless|in case)\b[^?]*\??$", re.I
)
_ASKS = re.compile(
    r"(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|"
    r"could|has|have|had|will|would|should|may|might|must|shall|any)\b",
    re.I,
)


def chat_spelled(text: str) -> str:
    """`text` with chat's spellings of question words written out ("whats" → "what's",
    "incl" → "including"; agent/language/rules.py CHAT_SPELLINGS)."""
    for pattern, replacement, _why in CHAT_SPELLINGS:
        text = pattern.sub(replacement, text)
    return text


def answer_type(question: str) -> AnswerType:
    """The kind of answer `question` expects (yes/no only when no wh-word says otherwise),
    read from the part that asks: "quick q - do we get paid overtime?" and "if I fail,
    does the studio still cover the fee?" ask yes or no."""
    question = chat_spelled(question)
    core = " ".join(ask_core(s) for s in asking_sentences(question))
    # The whole question decides when its asking part names no type ("In what year was
    # the Regiment No. 13 established?" splits at "No.").
    kind = _kind_of(core)
    return kind if kind != "entity" else _kind_of(question)


def _kind_of(question: str) -> AnswerType:
    for kind, pattern in _TYPE_PATTERNS:
        found = pattern.search(question)
        if found and not (kind in ("date", "place") and _subordinate_when(question, found)):
            return kind
    if _AUXILIARY.match(question.strip()):
        return "yes_no"
    # A terse chat question with no question word ("min password length for our
    # accounts?", "max hours per week?") asks for what its words name: a bound ("min",
    # "max", "limit") or a measure noun ("length", "size") is a number (h22).
    # So is a contact noun ("IT helpdesk email?", "payroll phone number?", "HR contact?",
    # "helpdesk after hours number?"): an address or a number to call, as "what's the
    # email for IT?" asks.
    if not _WH_WORD.search(question):
        if _TERSE_NUMBER.search(question):
            return "number"
        if _TERSE_CONTACT.search(question):
            return "contact"
    return "entity"


def _subordinate_when(question: str, found: re.Match[str]) -> bool:
    """Whether the date or place pattern matched only a "when" or "where" that opens a
    clause of a question another question word asks ("How did Vaudreuil react when
    Johnson was seen as the larger threat?", "Who led the army when the war began?", "how
    should I let folks know where I am?"): the first question word decides what is asked,
    in any knowledge base."""
    if found.group().casefold() not in ("when", "where"):
        return False
    first = _WH_WORD.search(question)
    return first is not None and first.start() < found.start()


_WH_WORD = re.compile(r"\b(?:what|which|who|whom|whose|when|where|why|how)\b", re.I)
_TERSE_NUMBER = re.compile(
    r"\b(?:max|maximum|min|minimum|limit|cap|length|size|duration|count|total)\b", re.I
)
# "number" only as the last word: "helpdesk number?" is one to call, "number of days
# off?" a count.
_TERSE_CONTACT = re.compile(
    r"\b(?:e-?mail|phone|telephone|extension|hotline|helpline|contact|url|website)\b|"
    r"\bnumber\W*$",
    re.I,
)


def is_negated(text: str) -> bool:
    """Whether `text` says "not": a negation word, or a participle negated by its prefix
    ("unused leave" is leave not used, "unpaid" is not paid; "United" is no "ited")."""
    return bool(_NEGATION.search(text)) or any(
        english(m.group(1)) for m in _NEGATED_PARTICIPLE.finditer(text)
    )


# "unused", "unpaid", "unapproved": un- before a past participle.
_NEGATED_PARTICIPLE = re.compile(r"\bun([a-z]{2,}(?:ed|en|id))\b", re.I)


def _digit(word: str) -> bool:
    return any(c.isdigit() for c in word)


def _named(word: str) -> bool:
    """A word with digits that names something the answer must be about: a year ("1066",
    "2024"), an identifier ("GS-13", "18F", "P2"); not a quantity the asker supplies as an
    example or a premise ("like $50M", "20+ hours", "a 2-hour webinar", "8 of us"), which
    the page answering need not repeat."""
    if not _digit(word):
        return False
    return bool(_YEAR.match(word)) or not _QUANTITY.match(word)


_IRREGULAR = re.compile(r"\b(?:" + "|".join(sorted(IRREGULAR_FORMS)) + r")\b", re.I)


def _base_verb(match: re.Match[str]) -> str:
    return IRREGULAR_FORMS[match.group().casefold()]


def _counts_times(word: str, after: list[str]) -> bool:
    """An ordinal counting the asker's occasions ("for the 2nd time"): a quantity they
    state. Before any other noun an ordinal names something ("the 9th century", "the 3rd
    floor")."""
    return bool(_ORDINAL.match(word)) and [w.casefold() for w in after] in (["time"], ["times"])


_ORDINAL = re.compile(r"^\d+(?:st|nd|rd|th)$", re.I)
# An ordinal standing alone ("approved on the 25th - when ...", "by the 3rd?", "the 1st
# of the month") is a day of the month the asker states: a quantity, as "the 2nd time"
# is. Before a noun it names something ("the 9th century", "the 3rd floor").
_DAY_OF_MONTH = re.compile(
    r"\b(\d{1,2}(?:st|nd|rd|th))\b(?=\s*(?:[-\u2013\u2014,;:.!?)]|$)|\s+of\s+(?:the|each|every)\s+month)",
    re.I,
)
_YEAR = re.compile(r"^(?:1[0-9]|20)\d\d$")
_QUANTITY = re.compile(
    r"^\d[\d,.]*(?:k|m|bn|%|x|-?(?:hours?|hrs?|minutes?|mins?|days?|weeks?|months?|years?|"
    # a clock time the asker states ("paged at 2am")
    r"people|persons?|am|pm))?$",
    re.I,
)
