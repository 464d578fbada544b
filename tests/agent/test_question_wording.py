"""Words that say how a question is put, not what it is about (issue 24).

On a small knowledge base that never writes "big", "get" or "email", each of these words
was the rarest key term of all and kept the sentence that answers from covering the
question: "How big is the home office stipend?" escalated beside "the home office stipend
is $500". Each test fails with its rule removed; the near misses show the topic words
still count.
"""

from __future__ import annotations

from agent.language.questions import QuestionAnalyzer
from agent.language.spans import find_span
from agent.reasoners.evidence import EvidenceScorer
from agent.sentence_vectors import SentenceVectors
from agent.sentences import SentenceSplitter
from store.embedding import SentenceTransformerEmbedder
from tests.agent.conftest import KnownWords, judged_answered, partial_quote
from tests.agent.test_hops import MemoryVectors, passage


def test_the_adjective_of_how_big_asks_for_a_measure_and_is_no_topic(
    analyzer: QuestionAnalyzer,
) -> None:
    assert analyzer.analyse("How big is the home office stipend?").key_terms == {
        "home",
        "offic",
        "stipend",
    }
    # Elsewhere the adjective is what the question is about.
    assert "big" in analyzer.analyse("Is big data stored in the warehouse?").key_terms


async def test_a_light_verb_is_not_held_against_a_unit_but_the_kind_of_leave_still_is(
    scorer: EvidenceScorer, analyzer: QuestionAnalyzer
) -> None:
    answer = "Full-time staff receive 25 PTO days per year."
    asked = analyzer.analyse("How many PTO days do full-time staff get per year?")
    scored = await scorer.score(asked, [passage(1, "Time off", answer)])
    assert [(s.unit.text, s.coverage) for s in scored] == [(answer, 1.0)]
    # A near miss on a corpus of PTO only: the word that gives it away still counts.
    near_miss = analyzer.analyse("How many bereavement days do employees get?")
    scored = await scorer.score(near_miss, [passage(1, "Time off", answer)])
    assert all(s.coverage < 0.5 for s in scored)


async def test_an_email_address_carries_the_email_a_question_asks_for(
    scorer: EvidenceScorer, analyzer: QuestionAnalyzer
) -> None:
    answer = "Questions about your pay go to payroll@northwind.example."
    no_address = "Questions about your pay go to the payroll team."
    # A page that writes "email" elsewhere: the word is read as written, not as a typo.
    elsewhere = "Send an email to the IT desk for a new laptop."
    passages = [
        passage(1, "Payroll", answer),
        passage(2, "Payroll team", no_address),
        passage(3, "Laptops", elsewhere),
    ]
    scored = await scorer.score(analyzer.analyse("Who should I email about my pay?"), passages)
    coverage = {s.unit.text: s.coverage for s in scored}
    assert coverage[answer] == 1.0
    assert coverage[no_address] == 0.5  # no address: "email" is still unanswered
    # "email" names the topic of a procedure question, not its answer.
    steps = analyzer.analyse("What should I do with a phishing email?")
    assert "email" in steps.key_terms and not steps.type_nouns


async def test_a_figure_carries_the_score_a_question_asks_for(
    scorer: EvidenceScorer, analyzer: QuestionAnalyzer
) -> None:
    """ "what score do you need to pass?" is answered by "The pass mark is 80%.", which no
    page need write with "score": a number answers it in any knowledge base."""
    answer = "The pass mark for the induction quiz is 80%."
    no_figure = "If you do not pass the induction quiz, the trainer goes through it with you."
    passages = [passage(1, "Safety induction", answer), passage(2, "Retakes", no_figure)]
    asked = analyzer.analyse("what score do u need to pass the induction quiz")
    assert asked.type_nouns == {"score"}
    coverage = {s.unit.text: s.coverage for s in await scorer.score(asked, passages)}
    assert coverage[answer] == 1.0
    assert coverage[no_figure] < 1.0  # no figure: "score" is still unanswered


async def test_when_the_askers_case_happened_is_no_word_a_page_must_say(
    scorer: EvidenceScorer, analyzer: QuestionAnalyzer
) -> None:
    """ "floated off my home unit last night" tells when the asker's case happened; the
    page's rule for being floated answers it without saying "last night"."""
    rule = "Unit nurses who are floated off their home unit receive $2.00 per hour."
    asked = analyzer.analyse("got floated off my home unit last night, how much do i get?")
    assert not {"last", "night"} & set(asked.terms)
    coverage = {
        s.unit.text: s.coverage for s in await scorer.score(asked, [passage(1, "Float", rule)])
    }
    assert coverage[rule] == 1.0
    # A period a page can name stays a constraint: the weekend, a night shift.
    assert "weekend" in analyzer.analyse("is there a higher rate for the weekend?").terms
    assert "night" in analyzer.analyse("what is the night shift differential?").terms
    assert "night" in analyzer.analyse("do I get extra for working this night shift?").terms


async def test_money_got_back_is_a_reimbursement_and_money_owed_back_a_repayment(
    scorer: EvidenceScorer, analyzer: QuestionAnalyzer
) -> None:
    rule = "Staff may claim a reimbursement of up to $75 for work shoes every 12 months."
    asked = analyzer.analyse("do we get any money back for work shoes? mine are falling apart")
    coverage = {
        s.unit.text: s.coverage for s in await scorer.score(asked, [passage(1, "Uniforms", rule)])
    }
    assert coverage[rule] == 1.0
    assert "reimburs" in analyzer.analyse("where do i send my receipt to get paid back").terms
    # Money owed or paid back is a repayment, which pages say as "repay".
    repay = "If you leave within 12 months of receiving reimbursement, you must repay 100% of it."
    owing = analyzer.analyse("if I quit after they paid for my course how much do i owe back")
    assert "reimburs" not in owing.terms
    assert (
        "repay"
        in {
            s.unit.text: s.covered
            for s in await scorer.score(owing, [passage(1, "Courses", repay)])
        }[repay]
    )
    for owed in ("do i owe the money back", "do i have to pay any of it back"):
        assert "repay" in analyzer.analyse(owed).terms
    # The company paying back is the reimbursement again.
    assert "repay" not in analyzer.analyse("does the company pay back safety boots?").terms


async def test_vacation_is_the_paid_time_off_a_page_spells_out(
    scorer: EvidenceScorer, analyzer: QuestionAnalyzer
) -> None:
    """ "vacation" is "PTO" (EQUIVALENT_WORDS), which a page titled "Paid time off" says
    spelled out: its rule for carrying days over answers "how many vacation days"."""
    carry = "Up to 5 unused days carry over into the next calendar year."
    text = f"Employees accrue 1.75 days of paid time off per month. {carry}"
    asked = analyzer.analyse("How many vacation days can I carry over?")
    scored = await scorer.score(asked, [passage(1, "Paid time off", text)])
    assert {s.unit.text: s.coverage for s in scored}[carry] == 1.0
    # Not of another page's days: a training budget's carry-over is no vacation.
    budget = "Up to 5 unused days carry over into the next calendar year. Budgets reset in April."
    scored = await scorer.score(asked, [passage(1, "Training budget", budget)])
    assert all("vacat" not in s.covered for s in scored)


async def test_asking_for_a_thing_is_the_request_a_page_describes(
    embedder: SentenceTransformerEmbedder, analyzer: QuestionAnalyzer
) -> None:
    # "ask" is a word of the knowledge base (another page has it): read as written, no
    # typo or synonym of the "request" this page writes.
    scorer = _scorer(
        embedder, analyzer, KnownWords({"ask", "request", "school", "visit", "storytim", "arriv"})
    )
    deadline = "Requests must arrive at least 4 weeks before the event date."
    asked = analyzer.analyse("a school wants a storytime visit, how far ahead do they need to ask")
    scored = await scorer.score(asked, [passage(1, "Outreach visits", deadline)])
    assert "ask" in {s.unit.text: s.covered for s in scored}[deadline]


def test_a_vague_amount_the_asker_gives_is_no_topic(analyzer: QuestionAnalyzer) -> None:
    asked = analyzer.analyse("if i leave a few months after a course do i have to pay it back")
    assert "few" not in asked.terms and "cours" in asked.key_terms
    assert not {"coupl", "lot", "bunch"} & set(analyzer.analyse("a couple of days late?").terms)
    assert "lot" in analyzer.analyse("which parking lot do night staff use?").terms


async def test_a_lists_numbering_is_no_number_of_the_question(
    scorer: EvidenceScorer, analyzer: QuestionAnalyzer
) -> None:
    """ "4." numbering a list's fourth item says nothing of the ward "4 east" a question
    names: the sentence about being floated, not the numbered list, covers more of it."""
    order = (
        "When a unit has more nurses than it needs, the charge nurse floats staff in this order:"
        "\n\n1. Agency nurses\n2. Per diem nurses\n3. Part-time nurses\n4. Full-time nurses"
    )
    asked = analyzer.analyse("floated to 4 east from my home unit, how much do i get for that?")
    scored = await scorer.score(asked, [passage(1, "Float pool", order)])
    assert all("4" not in s.covered for s in scored)
    # A number the unit writes in its own words still counts.
    ward = "Nurses floated to 4 East receive an orientation on arrival."
    scored = await scorer.score(asked, [passage(1, "Float pool", ward)])
    assert any("4" in s.covered for s in scored)


async def test_whether_an_amount_is_cut_is_said_by_its_share(
    scorer: EvidenceScorer, analyzer: QuestionAnalyzer
) -> None:
    """ "is my training budget reduced?" is answered no by "the full budget, not a pro-rata
    amount": a page says whether an amount is cut by stating its share."""
    full = "Part-time employees receive the full training budget, not a pro-rata amount."
    other = "Part-time employees can book training through the learning portal."
    asked = analyzer.analyse("I'm part time (3 days) - is my training budget reduced?")
    scored = await scorer.score(asked, [passage(1, "Training", f"{full} {other}")])
    covered = {s.unit.text: s.covered for s in scored}
    assert "reduc" in covered[full]
    assert "reduc" not in covered[other]  # no share stated: the cut is still unanswered


async def test_a_pages_rule_for_weekends_is_its_rule_for_a_saturday(
    scorer: EvidenceScorer, analyzer: QuestionAnalyzer
) -> None:
    weekend = "First aid courses held on a weekend are paid at the regular rate, not overtime."
    weekday = "First aid courses held on a weekday are paid at the regular rate, not overtime."
    asked = analyzer.analyse("first aid course is on a saturday - is that paid at overtime?")
    passages = [passage(1, "Training", weekend), passage(2, "Courses", weekday)]
    coverage = {s.unit.text: s.coverage for s in await scorer.score(asked, passages)}
    assert coverage[weekend] == 1.0
    assert coverage[weekday] < 1.0  # a Saturday is no weekday
    # One way only: a rule for Saturdays says nothing of Sundays, so not of weekends.
    saturday = "First aid courses held on a Saturday are paid at the regular rate."
    weekends = analyzer.analyse("are first aid courses on weekends paid at the regular rate?")
    scored = await scorer.score(weekends, [passage(1, "Training", saturday)])
    assert all(s.coverage < 1.0 for s in scored)
    # In the unit's own words: a title or heading of weekends over a rule for Saturdays
    # says nothing of Sundays.
    rotation = passage(1, "Weekend rotation", "Staff at all branches work every third Saturday.")
    sundays = analyzer.analyse("which branches are open on sundays?")
    assert all("sunday" not in s.covered for s in await scorer.score(sundays, [rotation]))


async def test_a_contact_in_another_medium_does_not_carry_the_medium_asked(
    scorer: EvidenceScorer, analyzer: QuestionAnalyzer
) -> None:
    phone = "Call the Resource Nursing Office at ext. 4420 before accepting."
    address = "Write to the Resource Nursing Office at rno@kestrel.example."
    passages = [passage(1, "Floating", phone), passage(2, "Staffing", address)]
    email = analyzer.analyse("what's the email for the resource nursing office")
    coverage = {s.unit.text: s.coverage for s in await scorer.score(email, passages)}
    assert coverage[address] == 1.0
    assert coverage[phone] < 1.0  # an extension is no email address
    number = analyzer.analyse("phone number for the resource nursing office?")
    coverage = {s.unit.text: s.coverage for s in await scorer.score(number, passages)}
    assert coverage[phone] == 1.0
    assert coverage[address] < 1.0


async def test_whom_to_contact_is_answered_by_a_role_but_an_email_by_an_address(
    scorer: EvidenceScorer, analyzer: QuestionAnalyzer
) -> None:
    role = "If a pool was split incorrectly, raise it with your outlet manager in 14 days."
    passages = [passage(1, "Tip pools", role)]
    whom = analyzer.analyse("who do i contact if a tip pool was split incorrectly")
    (scored,) = await scorer.score(whom, passages)
    assert scored.coverage == 1.0
    email = analyzer.analyse("what's the email if a tip pool was split incorrectly")
    (scored,) = await scorer.score(email, passages)
    assert scored.coverage < 1.0  # a manager is no email address


async def test_how_often_to_redo_is_answered_by_how_often_it_is_repeated(
    scorer: EvidenceScorer, analyzer: QuestionAnalyzer
) -> None:
    every = "Employees repeat the safety induction every 2 years."
    once = "Employees repeat the safety induction within 2 weeks of a site transfer."
    passages = [passage(1, "Inductions", every), passage(2, "Transfers", once)]
    asked = analyzer.analyse("how often do we have to redo the safety induction")
    coverage = {s.unit.text: s.coverage for s in await scorer.score(asked, passages)}
    assert coverage[every] == 1.0
    assert coverage[once] < 1.0  # a deadline is no frequency: "redo" is not carried


async def test_the_latest_time_is_the_bound_a_page_gives(
    scorer: EvidenceScorer, analyzer: QuestionAnalyzer
) -> None:
    call = "Phone your manager no later than one hour before your shift starts."
    latest = analyzer.analyse("latest time to phone in sick before a shift")
    (scored,) = await scorer.score(latest, [passage(1, "Sickness", call)])
    assert scored.coverage == 1.0


async def test_a_measure_answers_the_length_it_is_asked_for(
    scorer: EvidenceScorer, analyzer: QuestionAnalyzer
) -> None:
    answer = "Passwords must be at least 14 characters long and are stored in 1Password."
    scored = await scorer.score(
        analyzer.analyse("What is the minimum password length?"), [passage(1, "Security", answer)]
    )
    assert [(s.unit.text, s.coverage, s.span) for s in scored] == [
        (answer, 1.0, "at least 14 characters long")
    ]


def test_a_question_asking_when_salary_is_paid_wants_a_date_not_an_amount() -> None:
    quote = "Salaries are paid monthly, on the last working day of the month."
    assert find_span(quote, "date", "When is salary paid?") == "monthly"
    # Asked for an amount, salary still wants its currency.
    assert find_span("The salary is 5 per month.", "number", "What is the salary?") == ""
    assert find_span("Lunch is at noon daily.", "date", "At what time is lunch?") == "noon"


def test_determiners_and_modals_say_how_much_or_how_strongly_not_what(
    analyzer: QuestionAnalyzer,
) -> None:
    # "for some time", "must": the page says "at least 12 weeks", "you will need to".
    asked = analyzer.analyse("must I commit to staying for some time after parental leave?")
    assert asked.key_terms == {"commit", "stay", "after", "parent", "leav"}
    assert not {"all", "each"} & analyzer.analyse("Do all staff get a laptop each year?").key_terms


def test_getting_past_a_limit_asks_how_to_exceed_it_and_past_elsewhere_is_a_topic(
    analyzer: QuestionAnalyzer,
) -> None:
    asked = analyzer.analyse("how do I get past the 40-minute limit?")
    assert asked.key_terms == {"40", "minut", "limit"}
    assert "past" in analyzer.analyse("Where are past newsletters kept?").key_terms


async def test_how_do_i_reach_a_team_asks_where_to_write_and_a_channel_carries_it(
    embedder: SentenceTransformerEmbedder, analyzer: QuestionAnalyzer
) -> None:
    scorer = _scorer(embedder, analyzer)
    asked = analyzer.analyse("How do I reach the security team during an incident?")
    assert asked.answer_type == "contact" and asked.type_nouns == {"reach"}
    answer = "Page the security team through #sec-incidents at any hour."
    scored = await scorer.score(asked, [passage(1, "Security incidents", answer)])
    assert [(s.unit.text, s.coverage, s.span) for s in scored] == [(answer, 1.0, "#sec-incidents")]
    # Asking for steps is still a procedure.
    assert analyzer.analyse("How do I reset my password?").answer_type == "procedure"


async def test_a_yes_or_no_is_said_of_the_phrasal_verb_asked(
    scorer: EvidenceScorer, analyzer: QuestionAnalyzer
) -> None:
    asked = analyzer.analyse("will my sick leave be paid out when i leave?")
    assert asked.particles == {("pay", "out")}
    # Only the part that asks: waking up is the asker's case, not what is asked.
    assert not analyzer.analyse("woke up with a fever, can i just text my manager?").particles
    period = "You earn 4 sick leave hours per pay period."
    paid_out = "Your sick leave will not be paid out when you leave."
    passages = [passage(1, "Sick leave", period), passage(2, "Offboarding", paid_out)]
    scored = {s.unit.text: s for s in await scorer.score(asked, passages)}
    # "pay period" says every word asked, but not the "paid out" a yes or a no is of.
    assert "pay" not in scored[period].covered
    assert scored[period].support != "strong"
    assert scored[paid_out].support == "strong"
    # Asked how much, "pay" is read as before: the particle is how the verb is put.
    how_much = analyzer.analyse("how much sick leave is paid out?")
    scored = {s.unit.text: s for s in await scorer.score(how_much, passages)}
    assert "pay" in scored[period].covered


async def test_quotes_answer_a_yes_or_no_together_only_saying_its_phrasal_verb() -> None:
    words = KnownWords({"sick", "leav", "pay", "hour"})
    period = partial_quote("You earn 4 sick leave hours per pay period.", {"sick", "leav"})
    assert not await judged_answered("will my sick leave be paid out?", [period], words)
    paid_out = partial_quote("Sick leave is paid out at half rate.", {"sick", "leav", "pay"})
    assert await judged_answered("will my sick leave be paid out?", [paid_out], words)


async def test_a_yes_or_no_of_a_payment_is_said_of_the_payment_or_its_sum(
    scorer: EvidenceScorer, analyzer: QuestionAnalyzer
) -> None:
    # "allowed" is permission, not the allowance it shares a stem with
    assert not analyzer.analyse("quick q - are managers allowed in the tip pool?").money_nouns
    assert analyzer.analyse("do lab techs get field allowance?").money_nouns == {"allow"}
    asked = analyzer.analyse("do we get a gym membership stipend?")
    no_need = "You do not need a gym membership to use the basement gym."
    stipend = "Staff get a gym membership stipend of $40 a month."
    passages = [passage(1, "The office", no_need), passage(2, "Benefits", stipend)]
    scored = {s.unit.text: s for s in await scorer.score(asked, passages)}
    assert scored[no_need].support != "strong"
    assert scored[stipend].support == "strong"
    words = KnownWords({"gym", "membership", "stipend", "need"})
    quote = partial_quote(no_need, {"gym", "membership"})
    assert not await judged_answered("do we get a gym membership stipend?", [quote], words)


def _scorer(
    embedder: SentenceTransformerEmbedder,
    analyzer: QuestionAnalyzer,
    corpus_terms: KnownWords | None = None,
) -> EvidenceScorer:
    """A scorer over in-memory sentence vectors; with `corpus_terms`, the knowledge base's
    words as the keyword index would tell them."""
    return EvidenceScorer(
        analyzer=analyzer,
        splitter=SentenceSplitter(),
        vectors=SentenceVectors(embedder=embedder, store=MemoryVectors()),
        corpus_terms=corpus_terms,
    )
