"""The extractive reasoner's rule tables, in one place, each entry with why it is there.

Everything here is about how people write in general (English documents and questions),
never about one knowledge base or one benchmark question: a rule that only exists
because one question failed does not belong here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import MappingProxyType
from typing import NamedTuple

# --- Opposites (as stems): a unit that replaces a question word by its opposite is about
# the other thing, not a paraphrase. Each pair: (a, b, why).
OPPOSITE_PAIRS: tuple[tuple[str, str, str], ...] = (
    ("first", "last", "ordinal ends: 'first day' is not 'last day'"),
    ("north", "south", "compass directions name different places"),
    ("east", "west", "compass directions name different places"),
    ("northern", "southern", "compass adjectives name different regions"),
    ("western", "eastern", "compass adjectives name different regions"),
    ("befor", "after", "the order of two events is the answer itself"),
    ("begin", "end", "the start of a period is not its end"),
    ("start", "end", "the start of a period is not its end"),
    ("start", "finish", "the start of a task is not its finish"),
    ("larg", "small", "size comparisons"),
    ("largest", "smallest", "superlatives pick opposite members"),
    ("most", "least", "superlatives pick opposite members"),
    ("increas", "decreas", "a change's direction"),
    ("accept", "reject", "a decision's outcome"),
    ("win", "lose", "a contest's outcome"),
    ("won", "lost", "a contest's outcome, past tense"),
    ("earli", "late", "time comparisons"),
    ("earliest", "latest", "superlatives of time pick opposite ends"),
    ("maximum", "minimum", "a limit's direction: a minimum answers no 'maximum'"),
    ("high", "low", "level comparisons"),
    ("highest", "lowest", "superlatives of level"),
    ("abov", "below", "thresholds: above a limit is not below it"),
    ("insid", "outsid", "scope: inside a boundary is not outside it"),
    ("import", "export", "trade direction"),
    ("major", "minor", "degree"),
    ("success", "fail", "an outcome"),
    ("rise", "fall", "a change's direction"),
    ("gain", "loss", "a change's direction"),
    ("legal", "illeg", "permission by law"),
    ("support", "oppos", "a stance"),
    ("allow", "forbid", "permission"),
    ("allow", "prohibit", "permission"),
    ("open", "close", "a state or an action and its reverse"),
    ("strong", "weak", "degree"),
    ("upper", "lower", "position"),
    ("public", "privat", "visibility or ownership"),
    ("modern", "ancient", "period"),
    ("young", "old", "age"),
    ("youngest", "oldest", "superlatives of age"),
    ("synchron", "asynchron", "how work is done together"),
    ("direct", "indirect", "manner"),
    ("formal", "inform", "register or procedure"),
    ("intern", "extern", "inside or outside an organisation"),
    ("domest", "foreign", "inside or outside a country"),
    ("male", "femal", "sex"),
    ("birth", "death", "life events"),
    ("born", "die", "life events, as verbs"),
    ("born", "death", "life events, a verb and the other's noun ('born' asked, 'the death of')"),
    ("birth", "die", "life events, a noun and the other's verb"),
    ("add", "remov", "an action and its reverse"),
    ("creat", "destroy", "an action and its reverse"),
    ("includ", "exclud", "membership"),
    ("agre", "disagre", "a stance"),
    ("paid", "unpaid", "leave and work are paid or not: the difference is the answer"),
    ("full", "part", "full-time and part-time rules differ"),
    ("mandatori", "option", "obligation"),
    ("requir", "option", "obligation"),
    ("request", "cancel", "asking for something and withdrawing the request"),
    ("submit", "withdraw", "handing in and taking back"),
)


def _opposites() -> MappingProxyType[str, frozenset[str]]:
    table: dict[str, frozenset[str]] = {}
    for a, b, _why in OPPOSITE_PAIRS:
        table[a] = table.get(a, frozenset()) | {b}
        table[b] = table.get(b, frozenset()) | {a}
    return MappingProxyType(table)


OPPOSITE = _opposites()

# --- Prefixes that make a word its opposite: a question asking of the "non-local" or
# the "uncommon" asks of what a sentence of the "local" or the "common" is not about.
# Each: (prefix, why). The word left after it must be a word of four letters or more,
# so "under", "union" and "until" are no prefixed words (agent/language/prefixes.py).
NEGATING_PREFIXES: tuple[tuple[str, str], ...] = (
    ("non", "'non-local', 'non-exempt': the class outside the one named"),
    ("un", "'uncommon', 'unpaid', 'unestablished': the word's opposite state"),
)
# Words that begin with a negating prefix but are not the opposite of what follows it.
NOT_PREFIXED = frozenset(
    {
        "unless",  # a conjunction, not the opposite of "less"
    }
)

# --- A time told relative to the moment the asker writes ("floated to 4 east last night",
# "my ACLS expires next week", "working from Denver all next week"): when the asker's case
# happened or will, which no page can say (pages say "the shift", "before it expires").
# Read as ASKING_WORDS reads "tonight" and "yesterday": not a word a unit must repeat.
# Not "this year" or "last year": a period a page can name ("2026 holidays", "the
# previous calendar year") and a question's constraint.
RELATIVE_MOMENTS = re.compile(
    r"\b(?:last|this|next)\s+(?:night|week|weekend|morning|afternoon|evening)\b"
    # where the phrase ends: not "this night shift", "next week's rota" (a noun it names)
    r"(?=\s*(?:$|[,.;:!?)\-–—]|(?:from|to|and|or|but|so|i|i'm|im|we|my|at|in|on|for|when|"
    r"after|before|while|because|bc|if|then|already|again|too|is|was|will|the|a|an|do|"
    r"does|did|can|could|should|how|what|who|where|which)\b))",
    re.I,
)

# --- Money the asker gets back for a purchase ("do we get any money back for work shoes?",
# "where do I send the receipt to get paid back"): pages call it a reimbursement ("a shoe
# reimbursement of up to $75"), read so. Only money got back: money owed or paid back
# ("do I owe the money back?", "pay any of it back") is a repayment, the other way.
MONEY_GOT_BACK = re.compile(
    r"\b(get|gets|getting|got)\s+(?:(?:any|some|my|the|our|your)\s+)?"
    r"(?:money|cash|\$\$|paid)\s+back\b",
    re.I,
)

# Money the asker pays or owes back ("do I have to pay any of it back?", "how much do I owe
# back?") is the repayment pages state ("you repay 50%"). The asker's own: "does Harborline
# pay back safety boots?" is a reimbursement.
MONEY_OWED_BACK = re.compile(
    r"\b((?:i|we)\s+(?:\w+\s+){0,3}?)(?:pay|owe)\s+(?:(?:any|some|all|part|most)\s+of\s+)?"
    r"(?:(?:it|them|that|this|the\s+money|the\s+cost|the\s+fees?)\s+)?back\b",
    re.I,
)

# --- A vague amount the asker gives ("a few months after", "a couple of days late", "lots
# of overtime"): a page states its own bounds ("within 6 months"), never "a few". Read as
# "many" and "several" are: no word of the topic. "a lot" only with "of" ("parking lot").
VAGUE_AMOUNTS = re.compile(
    r"\ba\s+(?:few|couple(?:\s+of)?|lot\s+of|bunch\s+of)\b|\blots\s+of\b", re.I
)

# --- Words that say what kind of answer is wanted, not what it is about (stems): a
# unit need not repeat them to answer.
ASKING_WORDS = frozenset(
    # how a question asks for a name or a meaning ("what is it called", "what does X mean")
    "name call known refer term mean".split()
    # how it asks for a time ("what year", "which day", "when did it happen", "what's the
    # deadline", which the date answer type reads as "by when")
    + "happen year date day month centuri decad time era dure deadlin".split()
    # "when are timesheets due?" asks by when, as "deadline" does; pages say "must be
    # submitted by 12:00 noon every Monday"
    + "due".split()
    # times relative to the moment the asker writes ("fly out tonight"), and the place
    # where the asker is ("after 4 years here"): no page can say them
    + "today tonight tomorrow yesterday now here".split()
    # question words the stop list lacks ("whose approval do we need?")
    + "whose".split()
    # how it asks for a quantity ("how many", "what percentage")
    + "number mani much percentag percent amount".split()
    # how it asks for a kind ("what kind of", "in what way")
    + "kind type sort way".split()
    # hedges that narrow nothing ("exactly", "usually", "the main")
    + "also differ exact approxim estim typic usual general current main primari".split()
    + "particular specif major certain".split()
    # prepositions the stemmer keeps ("besides the leave request", "like $50M")
    + "within among upon via besid except despit toward along like".split()
    # "onto" is "on to" as one word ("how do I get onto the rota?"), which the stop list
    # drops when written apart
    + "onto".split()
    # how a chat message hedges or sets its tone, not its topic ("do I really have to",
    # "I just got", "can I actually"): Slack questions carry these, pages never answer them
    + "just realli actual got anyway pleas ani folk thank".split()
    # a negation, which the negation rule judges (agent/language/questions.py): "Can I
    # telework without approval?" is answered by "Telework requires approval"
    + "without".split()
    # how it asks for a span of time ("how far ahead", "how long", "how often", "how soon")
    + "far ahead long often soon onc".split()
    # determiners that say how much of the topic, not what it is ("for some time", "all
    # next week", "each employee"), and modals the stop list lacks beside its "should",
    # "can", "will" ("must I", "might we"): pages answer with "at least 12 weeks", "every
    # employee", "is required", as often as with the asker's word ("may" is also a month)
    + "some all each everi must might shall".split()
    # "split into several parts", "multiple weeks": how many, which the page gives as a
    # number ("up to three blocks")
    + "sever multipl".split()
    # indefinite pronouns, which stand for a person or thing without naming it ("swap a
    # shift with someone", "after buying something"): a page names who ("a teammate") or
    # what, never "someone"
    + "someon somebodi someth anyon anybodi anyth everyon everybodi everyth".split()
    # what a contraction leaves once the stemmer splits it off its verb ("didn't", "you've",
    # "we'll"): the negation is the negation rule's to judge, the rest says nothing
    + "didn doesn don isn aren wasn weren hasn haven hadn wouldn couldn shouldn ve ll".split()
    # "does the studio still cover it?" asks whether something holds yet, not about what
    + "still".split()
    # reflexive pronouns, of which the stop list has only "itself" ("lift it by myself"):
    # pages say "alone" or name no one
    + "myself yourself himself herself ourselv yourselv themselv".split()
    # placeholder nouns, which stand for what the page names as the indefinite pronouns
    # do ("the heaviest thing I may lift": "anything heavier than 50 pounds")
    + "thing stuff".split()
    # permission asked ("is it ok to"), which pages grant or refuse as "may", "can" and
    # "must not" do, words the stop list and this list already drop; "allowed to" is a
    # frame of agent/language/questions.py, since the stem "allow" is also "allowance"
    + "ok okay".split()
)


# --- Qualifiers: words of a question that narrow what counts as its answer ("the
# monthly maximum"), met only when the sentence, its heading path or its document's
# title says the same.
class Qualifier(NamedTuple):
    name: str  # how a gap sentence names what is missing ("monthly", "maximum")
    asked: re.Pattern[str]  # the question carries it
    met: re.Pattern[str]  # the context says it
    why: str
    # It narrows an amount or a period ("monthly maximum"): it constrains only answers
    # that are one (AMOUNT_ANSWERS); asking for steps past "the 40-minute limit", the
    # limit is the topic, not a figure the answer must give.
    amount: bool = False


# Answer types an amount qualifier constrains: a number or a period, a yes or no about one
# ("is there a yearly cap?"), or an answer of no stated type.
AMOUNT_ANSWERS = frozenset({"number", "date", "yes_no", "entity"})


def _re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


QUALIFIERS: tuple[Qualifier, ...] = (
    Qualifier(
        "maximum",
        _re(
            r"\b(?:max|maximum|cap|capped|limit|ceiling|at most|most i can)\b|"
            # a superlative of what one is let do asks for the cap ("the heaviest thing
            # I'm allowed to lift", "the longest I can work"): the page states a limit
            r"\b(?:heaviest|longest|furthest|farthest|biggest|largest|highest|latest|most)\b"
            r"(?=(?:\s+[\w']+){0,4}?\s+(?:allowed|permitted|can|may|could)\b)"
        ),
        _re(
            # plurals too: "these nightly limits" are caps as "the limit" is
            r"\b(?:max|maximums?|caps?|capped|limits?|limited|ceilings?|up to|no more than|at most|"
            r"not (?:to )?exceed|exceed|in excess|only|total)\b|"
            # a comparative bound: "nothing heavier than 23 kg", "no later than 10:00"
            r"\b(?:no|nothing|anything|never)\s+(?:\w+\s+)?[a-z]{3,}(?:ier|er) than\b|"
            # a prohibition of more: "No employee may work more than 12 hours", "you
            # cannot carry over more than 5 days" state a cap in any handbook (h22)
            r"\b(?:no (?:\w+ ){1,2}(?:may|can|shall|is allowed to)|(?:may|must|shall) not|"
            r"cannot|can't)\b[^.;]{0,40}?\bmore than\b"
        ),
        "a cap asked for is answered by a limit, not by any amount the page mentions",
        amount=True,
    ),
    Qualifier(
        "minimum",
        _re(r"\b(?:min|minimum|at least)\b"),
        _re(r"\b(?:min|minimums?|at least|no (?:fewer|less) than|or more)\b"),
        "a floor asked for is answered by a floor",
        amount=True,
    ),
    Qualifier(
        "monthly",
        _re(r"\b(?:monthly|per month|a month|each month|every month)\b"),
        _re(r"\bmonth"),
        "a monthly figure is not a yearly or per-trip one",
        amount=True,
    ),
    Qualifier(
        "yearly",
        _re(r"\b(?:yearly|per year|a year|each year|every year|annually|per annum)\b"),
        _re(r"\b(?:year|yearly|annual|annually|per annum)\b"),
        "a yearly figure is not a monthly or one-off one ('annual leave' is a name, not this)",
        amount=True,
    ),
    Qualifier(
        "weekly",
        _re(r"\b(?:weekly|per week|a week|each week|every week)\b"),
        _re(r"\bweek"),
        "a weekly figure is not a daily or yearly one",
        amount=True,
    ),
    Qualifier(
        "daily",
        _re(r"\b(?:daily|per day|a day|each day|every day)\b"),
        _re(r"\b(?:day|daily)\b"),
        "a daily rate is not a trip's total",
        amount=True,
    ),
    Qualifier(
        "per pay period",
        _re(r"\b(?:per|each|every) pay ?period\b"),
        _re(r"\bpay ?periods?\b"),
        "payroll figures are given per pay period",
        amount=True,
    ),
    Qualifier(
        "fewest",
        _re(r"\bfewest\b"),
        _re(r"\b(?:fewest|least|lowest|smallest|minimum)\b"),
        "a superlative picks one member of a set, whatever the answer's type",
    ),
    Qualifier(
        "part-time",
        _re(r"\bpart[- ]?time(?:rs?)?\b"),
        _re(r"\bpart[- ]?time"),
        "part-time rules differ from full-time ones",
    ),
    Qualifier(
        "full-time",
        _re(r"\bfull[- ]?time(?:rs?)?\b"),
        _re(r"\bfull[- ]?time"),
        "full-time rules differ from part-time ones",
    ),
    Qualifier(
        "first and last day",
        _re(r"\b(?:first|last) (?:and (?:first|last) )?days?\b"),
        _re(r"\b(?:first|last) (?:and (?:first|last) )?days?\b"),
        # Of a rate or a count only: "where is orientation held on the first day?" is
        # answered by the room, said of the first week.
        "travel and leave rules often treat the first and last day's rates apart",
        amount=True,
    ),
)

# --- Span finding (agent/language/spans.py).

# Nouns naming who does something in an organisation: "who approves X?" is answered by
# "your supervisor" as often as by a name.
ROLE_NOUNS = frozenset(
    """supervisor supervisors manager managers director directors lead leads coordinator
    coordinators officer officers approver approvers administrator administrators admin
    admins specialist specialists team teams chief head owner owners staff liaison
    representative representatives assistant assistants advisor advisors adviser
    counsel ombudsman steward stewards sponsor sponsors buddy mentor committee board
    desk hr""".split()
)
# Nouns naming a thing people use, not a person: a name right before one ("the Atlas
# pipeline", "the Workday portal") names a system, whoever a "who" question asks for.
THING_NOUNS = frozenset(
    """pipeline system tool app application portal platform service site website form
    page channel software dashboard database server network queue board repository repo
    wiki drive folder account workflow ledger module plugin api bot""".split()
)
# Words before a role noun that belong to the role ("immediate supervisor").
ROLE_MODIFIERS = frozenset(
    """immediate direct first-line second-line line hiring program project product team
    your their the an a his her business unit division branch office travel payroll
    finance security operations people talent""".split()
)
# Prepositions of place: a name right after one ("announced in Stockholm", "held at
# Harvard") is where something happened, not who did it, in any text. "from" is left out:
# it names a sender as often as an origin ("approval from Mirela Voss").
LOCATIVE_PREPOSITIONS = frozenset(
    """in at near inside outside across throughout within around""".split()
)
# Prepositions the stop list lacks: the word before a noun that is one of these ("the
# shuttle runs between Lot R and ...") is no modifier making another kind of the noun
# than the question's ("the remote lot").
PREPOSITIONS = frozenset(
    """between after before during under over within without across behind beyond near
    per via among amid upon toward towards against along around throughout until till
    since except besides past onto inside outside beneath below above beside""".split()
)
# Words of extent or standing the stop list lacks: "the full budget", "the whole
# allowance", "the standard rate" speak of the question's "training budget" or "overtime
# rate" itself, how much or which usual one of it, never of another kind of it.
EXTENT_WORDS = frozenset(
    """full whole entire total complete remaining same usual normal standard regular
    current overall""".split()
)
# Abbreviations a full stop ends inside a name ("Dr. Jane Smith", "St. Louis", "Acme
# Inc. Europe"): after any other word, ". " followed by a capital starts a sentence.
NAME_ABBREVIATIONS = frozenset(
    """dr mr mrs ms mx prof st mt ft jr sr rev gen col capt lt sgt inc co corp ltd no
    vol dept univ""".split()
)
# Nouns that make a capitalised phrase an organisation ("Office of Personnel Management").
ORGANISATION_NOUNS = frozenset(
    """office agency administration department division service services center centre
    bureau committee council commission board team group unit branch program programme
    company corporation inc llc ltd university institute foundation association union
    ministry directorate authority""".split()
)
# Verbs a step of a procedure opens with ("Submit the form", "Email your supervisor").
ACTION_VERBS = frozenset(
    """submit fill complete email send go visit open click select log sign request ask
    contact enter use add create book file make call post message update set follow read
    review check find talk attach upload download register apply notify tell let bring
    print return cancel reach schedule choose pick get put write record mark forward
    share turn install join enroll enrol save copy start change go fill take keep
    provide include approve note obtain confirm list""".split()
    # how a step says to look a thing up ("Search the IT Standards list in GEAR")
    + "search look browse".split()
    # how a step works a device or an app ("Press Control + Shift + Power", "Restart the
    # laptop", "Run the installer", "Lock your screen"): every IT page's steps
    # (not the words as often nouns or adjectives that open a table row: "clear", "close",
    # "type", "hold")
    + """press tap run enable disable restart reboot delete remove connect plug unplug drag
    lock unlock reset launch scan wait paste""".split()
)
# Words that open a clause's subject (pronouns, determiners, quantifiers, "there"): a
# main clause after "If …," opening with none of them has no subject, so it instructs.
SUBJECT_OPENERS = frozenset(
    """i you we they he she it one there this that these those the a an my your our
    their his her its each every all some any no none most many much both either neither
    such another other few several everyone everybody someone somebody anyone anybody
    nobody something anything nothing who which what then so""".split()
)
# Time units: "12 weeks", "3 business days", "two pay periods" are durations; so are
# "three consecutive working days" (two of the kind words, in either order).
TIME_UNITS = (
    r"(?:(?:business|calendar|working|work|consecutive) ){0,2}(?:seconds?|minutes?|hours?|"
    r"days?|weeks?|months?|years?|pay ?periods?|quarters?|semesters?|terms?|shifts?)"
)
MONTHS = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
WEEKDAYS = r"(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day"
NUMBER_WORDS = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
    r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|"
    r"sixty|seventy|eighty|ninety|hundred|thousand|half|a dozen)"
)
# Ordinals: "from the fourth consecutive day" says when, as a date does (h22).
ORDINALS = (
    r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|"
    r"twelfth|\d{1,3}(?:st|nd|rd|th))"
)
# Counts and ordinals before a noun, as the analyzer stems them ("fifth session", "seven
# year"): in any text, "the fourth Session" is another member of the series than "the
# fifth session" a question asks about, as "First Minister" is not "Second Minister".
# "one" (also a pronoun) and magnitudes ("hundred") are left out: they don't pick a member.
COUNT_STEM = re.compile(
    r"^(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|"
    r"twelfth|\d{1,3}(?:st|nd|rd|th)|two|three|four|five|six|seven|eight|nine|ten|eleven|"
    r"twelv)$"
)
# Words before a number that belong to the answer ("up to 24 credit hours").
NUMBER_LEADS = (
    r"(?:(?:up to|at least|at most|no more than|no less than|no fewer than|more than|"
    r"less than|fewer than|over|under|about|approximately|around|roughly|a maximum of|"
    r"a minimum of|maximum of|minimum of|a total of|an additional|another)\s+)"
)
# Clause words that give a yes/no question its answer ("requires", "may not", "are
# eligible"): a sentence without one states no yes or no.
POLARITY = re.compile(
    r"\b(?:must|may|can|cannot|can't|could|should|shall|will|won't|not|no|never|only|"
    r"required?|requires|need|needs|allowed|permitted|eligible|ineligible|entitled|"
    r"prohibited|forbidden|mandatory|optional|yes|are|is|counts?|covers?|includes?|"
    r"does|do|don't|doesn't|isn't|aren't)\b",
    re.I,
)
# What introduces a reason ("because", "so that").
CAUSE = re.compile(
    r"\b(?:because|due to|so that|in order to|to ensure|to make sure|since|as a result|"
    r"caused|led to|the reason|therefore|thus|so)\b",
    re.I,
)
# What introduces a definition ("X is …", "X means …", "X stands for …").
DEFINES = re.compile(
    r"\b(?:is|are|was|were|means|mean|refers to|refer to|stands for|stand for|is defined as|"
    r"is short for|is called|are called|is used (?:to|for)|describes)\s+",
    re.I,
)

# "How often?" asks for a frequency: "every three years", "twice a year", "monthly"; a
# duration the same sentence also holds ("a two-day course") is not one (h22).
FREQUENCY_ASKED = re.compile(r"\bhow often\b", re.I)

# --- Whether an amount is cut for someone ("is my training budget reduced?", "do
# part-timers get less leave?"): a yes or a no a page says by stating the amount's share
# ("Part-time employees receive the full budget, not a pro-rata amount", "the same 35
# hours", "pro rata to your hours"), seldom with the asker's verb.
AMOUNT_CUT_ASKED = re.compile(
    r"\b(?:reduced|reduce|cut|smaller|lower|fewer|less|prorated|pro-rated|pro[- ]rata)\b", re.I
)
AMOUNT_SHARE_SAID = re.compile(
    r"\b(?:full|same|pro[- ]rata|prorated|pro-rated|in proportion|proportionally|"
    r"regardless of|equal|reduced)\b",
    re.I,
)
FREQUENCY = re.compile(
    r"\b(?:every|each|per|once|twice|times|daily|weekly|fortnightly|biweekly|monthly|"
    r"quarterly|annually|yearly|a (?:day|week|month|year))\b",
    re.I,
)
# Verbs of doing a thing again: "how often do I redo the induction?" is answered by
# "Employees repeat the induction every 2 years" whichever of them either side uses, as a
# frequency is how often a thing is done again.
REPEAT_VERBS = frozenset(
    """redo repeat retake renew refresh recertify resit reapply requalify revalidate
    reattend""".split()
)

# Narrower kinds of number and time: a question that says which kind wants a span of that
# kind. Each: (the question asks, a span must match, why).
# What a percentage and a sum of money are written with (REFINEMENTS): a percentage
# asked of a sum ("what percentage is the service charge?") is the percentage alone.
PERCENT_WRITTEN = _re(r"%|\bpercent")
MONEY_WRITTEN = _re(r"[$€£]|\bdollars?\b|\bUSD\b|\bEUR\b|\bGBP\b|\bfree\b|\bno cost\b")
# "how much of the service charge goes to staff?", "how much of my salary goes into the
# pension?" ask a share of a sum: a percentage of it answers as a sum does.
SHARE_ASKED = _re(r"\bhow much of\b")
SHARE_WRITTEN = _re(f"{MONEY_WRITTEN.pattern}|{PERCENT_WRITTEN.pattern}")
REFINEMENTS: tuple[tuple[re.Pattern[str], re.Pattern[str], str], ...] = (
    (
        _re(r"\b(?:percent|percentage)|%"),
        PERCENT_WRITTEN,
        "a percentage is not a count: 'what percentage' is not answered by '1'",
    ),
    (
        _re(r"\b(?:what|which|at what) time\b"),
        _re(r"\d\s?[ap]\.?m\b|\d:\d\d|\bnoon\b|\bmidnight\b|o'clock"),
        "a time of day is a clock time, not 'today' or a duration",
    ),
    (
        _re(
            r"\b(?:cost|costs|price|budget|fee|fees|charge|charges|salary|billing rate|hourly rate|"
            r"how much money|dollars?|reimburse\w*|per diem)\b"
        ),
        MONEY_WRITTEN,
        "an amount of money is written with its currency",
    ),
)


# --- Words that only say how a question is put, in any knowledge base (issue 24): as key
# terms they make coverage depend on whether a corpus happens to use them, and a corpus
# that never does weighs them most (their idf is the highest of all).

# The adjective of a "how ADJ" question asks for a measure: "how big is the stipend?" is
# answered by "$500", which no page writes next to "big". Only right after "how": "big"
# elsewhere ("big data") is a topic.
HOW_ADJECTIVES = frozenset(
    "big large small tall high low old young fast deep wide heavy early late".split()
)

# Light verbs (surface forms): "how many days do staff get?", "how much notice do I need
# to give?" carry their topic in the nouns; the answering page says "receive", "are
# entitled to", "tell … 8 weeks before" in as many ways as there are writers. A unit
# lacking one is not judged on it; one sharing it ("get a message to all staff") still
# reads closer to the question.
LIGHT_VERBS = frozenset(
    "get gets getting got gotten give gives giving gave given need needs needed".split()
    # "where do new starters go?", "when do payslips come out?": the motion verbs carry no
    # topic either; pages say "report to", "are published" (h22)
    + "go goes going went gone come comes coming came".split()
    # "put in a claim", "take a sabbatical": the noun is the topic; pages say "submit a
    # claim", "you may have four weeks"
    + "put puts putting take takes taking took taken".split()
    # "bring a visitor" moves someone as "go" and "come" move oneself; pages say
    # "register visitors"
    + "bring brings bringing brought".split()
    # "what form do I fill out?", "fill in a work diary": the form is the topic; pages
    # say "complete a Vehicle Incident Report", "keep a Work Diary"
    + "fill fills filling filled".split()
    # "can the charge nurse make me take charge?", "make a claim": pages say "may ask
    # you to", "submit a claim"
    + "make makes making made".split()
    # "a school wants a storytime visit", "my parents want to stay": the wish is the
    # asker's, as "need" is; pages say "may request", "receive"
    + "want wants wanting wanted".split()
)

# Irregular past forms read as their verb (surface forms → the verb): the stemmer makes
# "lost" no "lose" and "paid" no "pay", so "before I lose it" missed "or it is lost" in
# any handbook. Forms that are also common words of another sense are left out ("left",
# "found", "saw", "felt", "lay", "fed", "bit", "rose", "spoke", "wound", "ground").
IRREGULAR_FORMS: MappingProxyType[str, str] = MappingProxyType(
    {
        form: verb
        for verb, forms in {
            "lose": "lost",
            "pay": "paid",
            "buy": "bought",
            "bring": "brought",
            "take": "took taken",
            "give": "gave given",
            "get": "got gotten",
            "keep": "kept",
            "send": "sent",
            "hold": "held",
            "meet": "met",
            "make": "made",
            "spend": "spent",
            "sell": "sold",
            "tell": "told",
            "think": "thought",
            "write": "wrote written",
            "choose": "chose chosen",
            "begin": "began begun",
            "know": "knew known",
            "show": "shown",
            "drive": "drove driven",
            "eat": "ate eaten",
            "go": "went gone",
            "come": "came",
            "become": "became",
            "run": "ran",
            "sit": "sat",
            "stand": "stood",
            "understand": "understood",
            "win": "won",
            "withdraw": "withdrew withdrawn",
            "forget": "forgot forgotten",
            "break": "broke broken",
            "steal": "stole stolen",
            "fall": "fell fallen",
            "fly": "flew flown",
            "hide": "hid hidden",
            "ride": "rode ridden",
            "teach": "taught",
            "catch": "caught",
            "seek": "sought",
            "lend": "lent",
            "build": "built",
            "deal": "dealt",
            "mean": "meant",
            "hear": "heard",
            "sleep": "slept",
            "wear": "wore worn",
            "tear": "tore torn",
            "shake": "shook shaken",
            "freeze": "froze frozen",
            "swear": "swore sworn",
        }.items()
        for form in forms.split()
    }
)

# Adverb particles that, right after a light verb, make one phrasal verb with it ("come
# out" = be published, "go over" = review, "give back" = return): the particle is part of
# how the verb is put, no topic of its own. As a key term it weighs most in a knowledge
# base that never writes it ("out", "up"), exactly like the verb (h22).
LIGHT_VERB_PARTICLES = frozenset("out up off back over down away through".split())
# Particles that make a phrasal verb of any verb ("find out", "pick up", "write up",
# "build up", "lose out", "paid back"): part of the verb, never the topic, which pages
# put with another verb ("are announced", "collect", "prescribe", "accrue"). "back"
# after a determiner is the body part ("my back"); "off", "over" and "down" name things
# too ("time off", "carry over", "the system is down"). Group 1 is the verb, group 2 the
# particle: a yes or a no is said of the whole phrasal verb ("paid out", not "pay period").
PARTICLES = "up|out|away|back"
PHRASAL_PARTICLES = re.compile(
    r"\b(?!(?:my|your|his|her|our|their|the|a|an|lower|upper|bad)\b)([A-Za-z]+)\s+"
    rf"({PARTICLES})\b",
    re.I,
)

# How chat spells a question word without its apostrophe ("whats the max?", "hows the
# rota set?"): read as written with it, so the question's type and asking words are
# seen as in "what's" (h22). (pattern, replacement, why)
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _day_name(match: re.Match[str]) -> str:
    day = next(i for i, part in enumerate(match.groups()[1:]) if part)
    return f"{match.group(1)} {_DAYS[day]}"


CHAT_SPELLINGS: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str], str], ...] = (
    (
        re.compile(r"\b(what|how|where|who|when|why)s\b", re.I),
        r"\1's",
        "'whats' is 'what's' with the apostrophe left out, as chat often writes it",
    ),
    (
        re.compile(r"\bincl\.?(?=\s|$|[?,;])", re.I),
        "including",
        "'incl' abbreviates 'including' in chat; as a word no page writes it weighs most",
    ),
    (
        re.compile(r"\b(?:pls|plz)\b", re.I),
        "please",
        "'pls' is 'please', which says how the asker asks, nothing of the topic",
    ),
    (
        re.compile(r"\bwfh\b", re.I),
        "work from home",
        "'wfh' is chat's 'work from home'; pages spell it out, and as a word no page writes "
        "it weighs most",
    ),
    (
        re.compile(r"(?<![\d,])\b(\d[\d,]*)\s?(?:quid)\b", re.I),
        r"£\1",
        "'800 quid' is '£800' (British chat): pages write the sign, and their thresholds "
        "('above £500') hold the sum",
    ),
    (
        re.compile(r"(?<![\d,])\b(\d[\d,]*)\s?(?:bucks|dollars)\b", re.I),
        r"$\1",
        "'40 bucks' is '$40' as pages write it ('pounds' is left: a weight as often)",
    ),
    (
        re.compile(r"(?<![\d,])\b(\d[\d,]*)\s?(?:euros)\b", re.I),
        r"€\1",
        "'50 euros' is '€50' as pages write it",
    ),
    (
        re.compile(r"\b(\d+)\s?(?:yrs?)\b", re.I),
        r"\1 years",
        "'7 yrs' is chat's '7 years': a page's band ('From 7 years of service') holds it",
    ),
    (
        re.compile(r"\b(\d+)\s?(?:hrs?)\b", re.I),
        r"\1 hours",
        "'8 hrs' is '8 hours' (only after a number: 'hr' alone is HR)",
    ),
    (
        re.compile(r"\b(\d+)\s?(?:wks?)\b", re.I),
        r"\1 weeks",
        "'2 wks' is '2 weeks'",
    ),
    (
        re.compile(r"\b(?:hrs|Hrs)\b"),
        "hours",
        "'how many hrs a week' is 'hours' (the plural, in lower case: 'HR' alone is HR)",
    ),
    (
        re.compile(r"\bmins\b", re.I),
        "minutes",
        "'mins' is 'minutes' ('min' alone is as often 'minimum')",
    ),
    (
        re.compile(r"\b(what|which)\s*%", re.I),
        r"\1 percentage",
        "'what % is the service charge' asks for a percentage, as 'what percentage' does",
    ),
    (
        re.compile(r"\bthru\b", re.I),
        "through",
        "'thru' is chat's 'through'",
    ),
    (
        re.compile(r"\btil\b", re.I),
        "until",
        "'til' is chat's 'until'",
    ),
    (
        re.compile(r"\bw(?= [a-z])"),
        "with",
        "'swap a shift w another nurse': a lower-case 'w' before a word is 'with' ('W' is a name)",
    ),
    (
        re.compile(r"\b(kick|kicks|kicked)\s+in\b", re.I),
        "start",
        "'when does my insurance kick in' asks when it starts, which pages say as 'begins'",
    ),
    (
        re.compile(r"\b(sign|signs|signed|signing)\s+off\b", re.I),
        r"\1",
        "'who signs off a course' asks who signs for it, which pages say as 'signs off', "
        "'sign-off' or 'approved by' (EQUIVALENT_WORDS): the particle says nothing more",
    ),
    (
        re.compile(r"\b(?:hang|hangs|hanging|hung)\s+on\s*to\b", re.I),
        "keep",
        "'how long do we hang on to lost property' asks how long it is kept",
    ),
    (
        re.compile(r"\b(?:pick|picks|picked|picking)\s+up\b", re.I),
        "get",
        "'where do I pick up a hard hat' asks where to get one, a light verb pages put as "
        "'collect', 'are issued' or 'from reception'",
    ),
    (
        re.compile(r"\b(?:chip|chips|chipped|chipping)\s+in\b", re.I),
        "pay",
        "'does the company chip in for a bus pass' asks whether it pays part",
    ),
    (
        re.compile(r"\bxmas\b", re.I),
        "Christmas",
        "'xmas' is 'Christmas'",
    ),
    (
        re.compile(r"\bot\b", re.I),
        "overtime",
        "'ot' is chat's 'overtime' ('do we get paid ot?'); pages spell it out",
    ),
    (
        re.compile(r"\bmgrs?\b", re.I),
        "manager",
        "'mgr' abbreviates 'manager' in chat; pages spell it out",
    ),
    (
        re.compile(r"\b(part|full)[- ]?timers?\b", re.I),
        r"\1-time staff",
        "a 'part-timer' is 'part-time staff' as pages write it; 'timer' alone is no page's word",
    ),
    (
        re.compile(r"\b(?:thx|thnx)\b", re.I),
        "thanks",
        "'thx' is 'thanks': politeness, not topic",
    ),
    (
        re.compile(r"\b(?:bc|b/c|cuz|coz)(?=\s)", re.I),
        "because",
        "'bc' is chat's 'because', which joins the asker's case to the question: as a word "
        "no page writes it weighed most",
    ),
    (
        re.compile(r"(?<!\w)w/o(?!\w)", re.I),
        "without",
        "'w/o' is chat's 'without'",
    ),
    (
        re.compile(r"(?<!\w)w/(?=\s)", re.I),
        "with",
        "'w/' is chat's 'with'",
    ),
    (
        re.compile(r"\b(?:tmrw|tmrow|tmw|tmr)\b", re.I),
        "tomorrow",
        "'tmrw' is chat's 'tomorrow'",
    ),
    (
        re.compile(r"\b(?:yr|yrs)\b", re.I),
        "year",
        "'this yr' is chat's 'this year' (after a number, '7 yrs', above)",
    ),
    (
        re.compile(
            r"\b(on|for|this|next|last|every)\s+"
            r"(?:(mon)|(tue)s?|(wed)|(thu)r?s?|(fri)|(sat)|(sun))\b(?!['’-])",
            re.I,
        ),
        _day_name,
        "'paid extra for sat?': chat clips a day after 'on', 'for', 'next' to its first "
        "letters; pages spell it ('sat' alone is also 'sit', 'sun' the sun)",
    ),
    (
        re.compile(r"\bppl\b", re.I),
        "people",
        "'ppl' is chat's 'people'",
    ),
    (
        re.compile(r"\bwen\b", re.I),
        "when",
        "'wen does pay go in' is chat's 'when': the question word decides what is asked",
    ),
    (
        re.compile(r"\b(?:wat|wot)\b", re.I),
        "what",
        "'wat'/'wot' are chat's 'what'",
    ),
    (
        re.compile(r"\bim\b"),
        "I'm",
        "'im' is 'I'm' with the apostrophe left out; as a word no page writes it weighed most",
    ),
    (
        re.compile(r"\b(?:btw|fyi|tbh|imo|idk)\b", re.I),
        "",
        "chat's asides ('btw', 'fyi', 'tbh') say how the asker talks, nothing of the topic",
    ),
    (
        re.compile(r"\bu\b(?![.&/-])"),
        "you",
        "'u' is chat's 'you' ('can u carry over leave?'); a capital U is a name ('Part U')",
    ),
    (
        re.compile(r"\bur\b"),
        "your",
        "'ur' is chat's 'your'",
    ),
)

# Words by which a "when" question asks for a start, and the words by which a unit says
# when something starts (agent/language/spans.py spells_its_type).
START_WORDS = frozenset("start starts begin begins".split())
STARTS = re.compile(
    r"\b(?:from|starting|starts|started|begins|beginning|began|opens|commences)\b", re.I
)

# Nouns that name the kind of answer asked (surface forms), per answer type: "who should
# I email about my pay?" is answered by "payroll@northwind.example", "what is the minimum
# password length?" by "at least 14 characters". A unit holding a span of that type
# carries them (agent/reasoners/evidence.py); one without is still judged on them.
TYPE_NOUNS: MappingProxyType[str, frozenset[str]] = MappingProxyType(
    {
        "contact": frozenset(
            "email emails e-mail address phone link url website channel contact reach".split()
        ),
        "number": frozenset("length size count total duration figure score".split()),
        # "when does the leave year start?" asks for the date it starts, which a page
        # gives as "runs from 1 April": a date span carries "start", as "timing"; "the
        # latest time to call in sick" asks for the bound a page gives as "no later than
        # one hour before your shift", as "the earliest" for "not before 6 am"
        "date": frozenset("schedule timing latest earliest".split()) | START_WORDS,
    }
)


# --- Words that workplaces use for one another (surface words, stemmed where read): a
# question's word that no page read has stands for the first of its equivalents that one
# has. Each: (words, why). Only pairs that name the same thing in any workplace's pages,
# not near relatives (a "bonus" is no "stipend"; "dental" is not "health"). An initialism is
# written in capitals: a page spelling it out ("Paid time off") says it (abbreviations.py).
EQUIVALENT_WORDS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("roll", "carry"), "unused days or budget 'roll over' or 'carry over' into the next year"),
    (("swap", "trade", "exchange"), "staff 'swap', 'trade' or 'exchange' a shift with a colleague"),
    (("PTO", "leave", "vacation", "holiday"), "PTO is paid time off: pages say annual leave"),
    (
        ("tell", "told", "report", "notify", "inform"),
        "'who do I tell?' is whom to report it to; pages say 'report to', 'notify'",
    ),
    (("release", "publish"), "a roster or a schedule is 'released' or 'published'"),
    (("fix", "correct", "amend"), "a punch or a claim is 'fixed', 'corrected' or 'amended'"),
    (("wrong", "incorrect", "incorrectly"), "'the wrong patient' is an 'incorrect' one"),
    (("hurt", "injured", "injury"), "'I hurt my hand' is an injury at work"),
    (("closure", "closed", "closing"), "'snow closures' are days a site is 'closed'"),
    (("muster", "assembly"), "staff 'muster' at the 'assembly point'"),
    (("pc", "pcs", "computer", "computers"), "a 'pc' is a computer"),
    (("sick", "ill", "illness"), "off 'sick' is off 'ill'"),
    (
        ("sign", "approve"),
        "'who signs off' a course asks who approves it; pages say either",
    ),
    (("big", "large"), "'big files' are the 'large files' a page sends by link"),
    (("raise", "increase"), "'a raise' is a salary 'increase'"),
    (("differential", "premium"), "extra pay for a shift is a 'differential' or 'premium'"),
    (("extra", "additional"), "'extra days' are 'additional days'"),
    (
        ("request", "ask"),
        "'how far ahead do they need to ask?' is when to request: pages say 'request'",
    ),
)

# --- Days named by their kind: a page's rule for "weekends" is its rule for the Saturday
# a question asks about, as "weekdays" is for a Monday. One way only: a page's rule for
# Saturdays says nothing of Sundays, so it answers no question about weekends.
DAY_KINDS: MappingProxyType[str, str] = MappingProxyType(
    {
        **dict.fromkeys(_DAYS[:5], "weekday"),
        **dict.fromkeys(_DAYS[5:], "weekend"),
    }
)

# --- Nouns that name a sum of money paid to staff: a unit stating an amount with its
# currency ("a wellness stipend of $60 per month, for a gym") carries any of them, as
# pages name the same payment by any ("is there a gym reimbursement?"). A "budget" is
# such a sum too: "the CPD budget" is the "CPD allowance: £1,200" a page states.
MONEY_NOUNS = frozenset("reimbursement stipend allowance subsidy budget".split())
