"""The answer inside a quote: a span of the asked type, not in the question, its qualifiers
met; else a gap said in one sentence (agent/language/spans.py, agent/language/typos.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.language.questions import AnswerType, answer_type
from agent.language.spans import constraints_met, find_span, gap_sentence, spelled_out
from agent.language.typos import corrections, edit_distance


@pytest.mark.parametrize(
    ("question", "quote", "kind"),
    [
        # A link's address is no expansion in parentheses, nor a "term: meaning".
        ("what is Trello?", "Track your work in [Trello](https://trello.com/).", "definition"),
        # Nor are its digits a number, in a link or bare.
        (
            "how many projects are open?",
            "See the [tracker](https://trello.com/b/b1xsDX88) for open projects.",
            "number",
        ),
        ("how many projects are open?", "Open projects: see https://t.test/b/x88 too.", "number"),
        # Nor an email address's.
        ("how long does a badge take?", "Email hspd12.security@gsa.gov for badges.", "number"),
    ],
)
def test_an_address_holds_no_span(question: str, quote: str, kind: AnswerType) -> None:
    assert answer_type(question) == kind
    assert find_span(quote, kind, question) == ""


@pytest.mark.parametrize(
    ("question", "quote", "kind", "span"),
    [
        (
            "how many credit hours can I have banked at once?",
            "You may carry over up to 24 credit hours into the next pay period.",
            "number",
            "up to 24 credit hours",
        ),
        (
            "How much sick leave can I use for bereavement?",
            "You can use up to 13 days (104 hours) per year of sick leave for bereavement.",
            "number",
            "up to 13 days (104 hours) per year",
        ),
        (
            "What percentage does the agency match on retirement contributions?",
            "The agency matches contributions up to 5% of your basic pay.",
            "number",
            "up to 5% of your basic pay",
        ),
        (
            "When is my timesheet due?",
            "Timesheets are due by 5 p.m. on the last Friday of each pay period.",
            "date",
            "5 p.m.",
        ),
        (
            "How soon after the trip must I file the voucher?",
            "File your voucher within 5 business days of returning.",
            "date",
            "within 5 business days of returning",
        ),
        (
            "need about 3 weeks of LWOP, whose approval do I need?",
            "LWOP needs approval from your immediate supervisor and Business Unit Director.",
            "person",
            "your immediate supervisor and Business Unit Director",
        ),
        (
            "Which office runs the travel card program?",
            "Travel cards are issued by the Office of Travel Services.",
            "organisation",
            "Office of Travel Services",
        ),
        (
            # A name ends where its sentence does: not "Acme Payroll. Payroll".
            "Which office issues the travel cards?",
            "Travel cards are issued by the Office of Travel Services. Payroll repays the fees.",
            "organisation",
            "Office of Travel Services",
        ),
        (
            # ... but a title's full stop is inside the name.
            "Who signs the travel voucher?",
            "Vouchers are signed by Dr. Mirela Voss. Keep a copy for your records.",
            "person",
            "Dr. Mirela Voss",
        ),
        (
            "What's the email for travel questions?",
            "Send travel questions to travel@example.gov or ask in #admins-travel.",
            "contact",
            "travel@example.gov",
        ),
        (
            # an internal line is a number to call
            "who do i call to call out sick?",
            "If you are sick, call the staffing office at ext. 4410 at least 2 hours before.",
            "contact",
            "ext. 4410",
        ),
        (
            # "the number for" someone is a phone number, not a count
            "water is dripping thru the ceiling, whats the number for facilities",
            "For leaks, call the Facilities hotline at 312-555-0147 at any hour.",
            "contact",
            "312-555-0147",
        ),
        (
            # "what %" asks for a percentage
            "what % is the service charge we add on weddings",
            "At Saltmarsh the event service charge is 22% of the food and beverage total.",
            "number",
            "22% of the food",
        ),
        (
            # "how much of" a sum asks a share of it: a percentage answers as a sum does
            "how much of the service charge goes to the servers who worked the event?",
            "Of the charge, 15 percentage points are paid to the servers who worked it.",
            "number",
            "15 percentage points",
        ),
        (
            "how much of the parking fee does the firm cover?",
            "The firm covers 50% of your monthly parking permit, or $60 at most.",
            "number",
            "50% of your monthly parking",
        ),
        (
            "Can I telework without approval?",
            "Telework requires supervisor approval.",
            "yes_no",
            "Telework requires supervisor approval.",
        ),
        (
            "How do I cancel a leave request?",
            "Cancel an absence request when you no longer wish to use any leave.",
            "procedure",
            "Cancel an absence request when you no longer wish to use any leave.",
        ),
        (
            "what does TK mean in a draft doc?",
            "Write TK (to come) where content is still missing.",
            "definition",
            "to come",
        ),
        (
            "What can I use sick leave for?",
            "You can use Sick Leave for:\n\n- Mental health care\n- Doctor appointments",
            "entity",
            "You can use Sick Leave for:\n\n- Mental health care\n- Doctor appointments",
        ),
    ],
)
def test_a_quote_holding_an_answer_of_the_asked_type_leads_with_it(
    question: str, quote: str, kind: str, span: str
) -> None:
    assert answer_type(question) == kind
    assert find_span(quote, answer_type(question), question) == span


@pytest.mark.parametrize(
    ("question", "quote"),
    [
        # on topic, but no amount
        (
            "What is the monthly maximum for the transit subsidy?",
            "The transit subsidy helps pay for commuting by train or bus.",
        ),
        # the only number is the question's own
        ("Is 3 weeks of LWOP allowed?", "3 weeks"),
        # no date or duration at all
        ("When does award leave expire?", "Award leave is granted by your supervisor."),
        # no person, role or name
        ("Who approves my timesheet?", "timesheets are approved every pay period."),
        # no email, link or channel
        ("What's the email for travel questions?", "Travel questions are answered quickly."),
        # a count for a percentage, a day for a clock time, a number for money
        ("What percentage does the agency match?", "There is 1 match per employee."),
        ("What time does orientation start?", "Orientation starts today."),
        ("What is the hourly billing rate?", "We bill 8 hours a day."),
        # a number inside a name is no number
        ("How many people work at 18F?", "18F is an office."),
        # "one of" picks a member, it counts nothing
        ("How many projects can a manager handle?", "Managers lead one of our teams."),
    ],
)
def test_a_quote_without_an_answer_of_the_asked_type_holds_no_span(
    question: str, quote: str
) -> None:
    assert find_span(quote, answer_type(question), question) == ""


def test_a_qualifier_of_the_question_must_be_met_in_the_quote_its_heading_or_its_title() -> None:
    question = "What is the monthly maximum for the transit subsidy?"
    kind = answer_type(question)
    assert not constraints_met(question, "The transit subsidy pays $300 per trip.", kind)
    assert not constraints_met(question, "The transit subsidy is at most $300.", kind)
    assert constraints_met(question, "The transit subsidy pays up to $300 per month.", kind)
    # the heading path counts as context too
    assert constraints_met(question, "Up to $300.\nBenefits > Transit subsidy (monthly)", kind)
    part_time = "How much annual leave do part-time employees earn?"
    kind = answer_type(part_time)
    assert not constraints_met(part_time, "Employees earn 4 hours per pay period.", kind)
    assert constraints_met(part_time, "Part-time employees earn 1 hour for every 20 hours.", kind)


def test_an_instruction_answers_a_yes_no_question() -> None:
    # "Can I …?" is answered by what one must do first, though no "must" or "can" says so.
    question = "can I just create a private repo for my project?"
    quote = "Ask Tech Operations before creating private repositories."
    assert find_span(quote, answer_type(question), question) == quote
    assert find_span("Private repositories cost money.", "yes_no", question) == ""


def test_an_amount_qualifier_does_not_constrain_the_steps_a_question_asks_for() -> None:
    # The limit is what the steps get past, not a figure the answer must give; a question
    # asking for the figure is still held to it, and part-time narrows steps as well.
    steps = "How do I get past the 40-minute limit on Zoom?"
    quote = "Submit a request to be upgraded to a Licensed user."
    assert constraints_met(steps, quote, answer_type(steps))
    figure = "What is the meeting limit on Zoom?"
    assert not constraints_met(figure, "Meetings of a Basic user end on their own.", "number")
    # "fewest" picks one member of a set: it narrows a place as much as a number.
    fewest = "Where are there the fewest offices?"
    kind = answer_type(fewest)
    assert not constraints_met(fewest, "About one million people work in offices in France.", kind)
    assert constraints_met(fewest, "Lyon has the fewest offices.", kind)
    part_time = "How do part-time employees request leave?"
    assert not constraints_met(part_time, "Submit a leave request.", answer_type(part_time))


def test_a_gap_is_said_in_one_plain_sentence() -> None:
    question = "What is the monthly maximum for the transit subsidy?"
    sentence = gap_sentence(
        question,
        answer_type(question),
        "Transit benefits",
        "The transit subsidy helps pay for commuting by train or bus.",
    )
    assert sentence == "“Transit benefits” mentions transit subsidy but gives no monthly maximum."
    when = "When does award leave expire?"
    assert gap_sentence(when, answer_type(when), "Leave", "Award leave is granted.") == (
        "“Leave” mentions award leave but gives no date, time or period."
    )


def test_a_typo_is_matched_to_the_one_word_of_the_passages_an_edit_or_two_away() -> None:
    vocabulary = frozenset({"reimburs", "voucher", "credit", "hour", "accru", "account"})
    # "acru" is the stem of "acrue", as the question analyser hands it over.
    assert corrections(["reimbur", "vouchr", "credit", "acru"], vocabulary) == {
        "reimbur": "reimburs",
        "vouchr": "voucher",
        "acru": "accru",
    }
    # two edits from 6 letters on: "benifet" for "benefit"
    assert corrections(["benifet"], frozenset({"benefit"})) == {"benifet": "benefit"}
    # short words and ties are left alone, not guessed
    assert corrections(["hor", "acount"], frozenset({"hour", "account", "amend"})) == {
        "acount": "account"
    }
    assert corrections(["acount"], frozenset({"account", "amount"})) == {}
    assert corrections(["cat"], frozenset({"cap", "car"})) == {}
    assert edit_distance("vouchre", "voucher", 2) == 1  # a transposition is one edit


def test_a_short_word_two_edits_from_a_page_word_is_another_word_not_a_typo() -> None:
    # A near miss about "staff" on pages that only say "start" (two edits, 5 letters):
    # read as written, its topic stays missing and the question is not answered.
    assert corrections(["staff", "acrue"], frozenset({"start", "accru"})) == {}
    assert corrections(["stuf"], frozenset({"stuff"})) == {"stuf": "stuff"}  # one edit


def test_a_word_far_from_every_word_of_the_passages_is_not_corrected() -> None:
    # Three edits away is "too far" for each candidate, not a tie to break.
    assert corrections(["underperform"], frozenset({"unnecessari"})) == {}


@pytest.mark.parametrize(
    ("quote", "span"),
    [
        ("Temujin was proclaimed Genghis Khan in 1206, after uniting the tribes.", "1206"),
        ("In 1450 the city fell to the siege.", "1450"),
        ("The dynasty ruled the north until 1368.", "1368"),
    ],
)
def test_a_year_before_1500_is_a_date_where_a_year_word_introduces_it(
    quote: str, span: str
) -> None:
    assert find_span(quote, "date", "When did it happen?") == span


@pytest.mark.parametrize(
    "quote",
    ["The chain opened in 1200 stores nationwide.", "There were 1400 soldiers at the fort."],
)
def test_a_count_of_things_is_not_an_early_year(quote: str) -> None:
    assert find_span(quote, "date", "When did it happen?") == ""


@pytest.mark.parametrize(
    ("quote", "span"),
    [
        (
            "Their identity emerged in the first half of the 10th century, and it evolved.",
            "10th century",
        ),
        (
            "The mill was built in the late eighteenth century by the founders.",
            "late eighteenth century",
        ),
    ],
)
def test_a_century_answers_what_century(quote: str, span: str) -> None:
    question = "What century did it begin?"
    assert find_span(quote, answer_type(question), question) == span


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How did the council react when the plan was announced?", "entity"),
        ("Who led the army when the war began?", "person"),
        ("what happens when I'm sick for more than three days?", "entity"),
        ("When did the war begin?", "date"),
        ("when does open enrollment start?", "date"),
        ("how should I let folks know where I am?", "procedure"),
        ("Who decides where the new office goes?", "person"),
        ("where do I pick up my badge?", "place"),
        ("quick q - where is the bike room?", "place"),
    ],
)
def test_a_when_or_where_opening_a_clause_does_not_make_its_question(
    question: str, kind: str
) -> None:
    assert answer_type(question) == kind


@pytest.mark.parametrize(
    ("quote", "span"),
    [
        ("Today, January 25th, 2022, you have 182 hours of annual leave available.",
         "182 hours of annual leave"),
        ("Keller (born 1920) directed 14 feature films.", "14 feature films"),
        ("In 2019 the office had 2000 employees.", "2000 employees"),
        ("The policy was last revised in 2021.", ""),
        ("On 31 December 1687 the first group set sail.", ""),
        ("They switched languages in 1806-07.", ""),
        ("Requests close on 15 May; up to 5 days carry over.", "up to 5 days carry over"),
        ("You may carry 3 days; 2 may be paid out.", "3 days"),
        ("The 3 Marketing staff share 2 desks.", "3 Marketing staff share"),
        ("Decisions are posted on the staff information line, 555-0142.", ""),
        ("Call the card hotline, 1800 555 017, for a new card.", ""),
        ("Call 555-0199 to carry over up to 5 days.", "up to 5 days"),
    ],
)  # fmt: skip
def test_a_number_written_in_a_date_or_a_phone_number_counts_nothing(quote: str, span: str) -> None:
    assert find_span(quote, "number", "how many days can I carry over?") == span


@pytest.mark.parametrize(
    ("quote", "kind", "question", "span"),
    [
        (
            "Everyone is expected to be available between 10:00 and 15:00 Eastern time.",
            "entity",
            "what are core hours",
            "10:00",
        ),
        ("It opens at 9:30 and 42 people attend.", "number", "how many people attend?",
         "42 people attend"),
    ],
)  # fmt: skip
def test_a_clock_time_is_not_a_count(
    quote: str, kind: AnswerType, question: str, span: str
) -> None:
    assert find_span(quote, kind, question) == span


@pytest.mark.parametrize(
    ("quote", "span"),
    [
        # a weekday says when, never where; the room is named with what it is
        (
            "Your first week starts with orientation on Monday at 9:30 am in the Atlas room.",
            "the Atlas room",
        ),
        (
            "Drop used coats in the blue bins by the east stairwell on Mondays.",
            "the blue bins by the east stairwell",
        ),
        # a bare name is still a place when nothing names one with its kind
        ("Orientation is held in Rotterdam.", "Rotterdam"),
        ("Orientation is on 4 October.", ""),
    ],
)
def test_a_place_is_named_with_what_it_is_and_a_date_is_no_place(quote: str, span: str) -> None:
    assert find_span(quote, "place", "where is orientation held?") == span


def test_the_first_day_constrains_a_rate_not_a_place() -> None:
    quote = "Your first week starts with orientation on Monday in the Atlas room."
    assert constraints_met("Where is orientation held on the first day?", quote, "place")
    rate = "You receive 75% of the M&IE rate."
    assert not constraints_met("per diem for meals on the first day?", rate, "number")


def test_a_name_with_a_number_is_no_person() -> None:
    street = "Fenwick Branch – 2201 County Road 6, Fenwick."
    assert find_span(street, "person", "who's the branch manager at fenwick") == ""
    named = "Fenwick Branch is run by Dana Obi."
    assert find_span(named, "person", "who's the branch manager at fenwick") == "Dana Obi"


@pytest.mark.parametrize(
    ("quote", "span"),
    [
        ("Later approvals roll into the following month.", "the following month"),
        ("Unused hours carry into the next pay period.", "the next pay period"),
        ("Claims approved by the 20th of the month are paid that month.", "the 20th of the month"),
        (
            "The rota is published by the 15th of the previous month.",
            "the 15th of the previous month",
        ),
        ("Send the claim to the finance team.", ""),
    ],
)
def test_a_period_named_from_another_and_a_day_of_every_month_are_dates(
    quote: str, span: str
) -> None:
    assert find_span(quote, "date", "when do expenses get paid?") == span


def test_the_person_a_role_names_leads_with_the_role() -> None:
    def who(quote: str, question: str = "who do I report it to?") -> str:
        return find_span(quote, "person", question)

    assert who("Report it to the privacy officer Tom Brannigan.") == "officer Tom Brannigan"
    assert who("Ask the WHS manager, Dana Ortiz, first.") == "the WHS manager, Dana Ortiz"
    # A capital that only opens the sentence is no name; a day after a role is no person.
    assert who("Contact the payroll officer.") == "the payroll officer"
    assert who("Tell your line manager On Monday mornings.") == "your line manager"
    # A titled role's department is part of its name.
    assert who("It is approved by the Head of Learning.") == "the Head of Learning"


_WORDS = st.from_regex(r"[A-Za-z][a-z]{1,8}", fullmatch=True)


@given(
    st.lists(_WORDS, min_size=3, max_size=6),
    st.lists(st.sampled_from(["- ", "1. ", "* ", "", "**"]), min_size=6, max_size=6),
    st.text(max_size=60),
)
def test_an_acronym_is_spelled_out_only_by_its_lines_first_words(
    words: list[str], markers: list[str], noise: str
) -> None:
    acronym = "".join(w[0].upper() for w in words)
    lines = [f"{marker}{word} and more" for marker, word in zip(markers, words, strict=False)]
    quote = f"{noise}\nRemember {acronym}:\n" + "\n".join(lines)
    found = spelled_out(quote, f"what does {acronym} stand for?")
    assert found and "".join(w[0].upper() for w in found.split(", ")) == acronym
    # Out of order, the lines spell something else.
    swapped = "\n".join(reversed(lines))
    if acronym != acronym[::-1]:
        found = spelled_out(f"Remember {acronym}:\n{swapped}", f"what does {acronym} stand for?")
        assert not found or "".join(w[0].upper() for w in found.split(", ")) == acronym


@pytest.mark.parametrize(
    ("quote", "kind", "question", "span"),
    [
        ("Shift workers who work a seven-day rotating roster accrue 5 weeks per year.",
         "number", "how much leave do shift workers on the 7 day roster get", "5 weeks per year"),
        ("Part-time staff get 3 days.", "number", "how many days do part time staff get?",
         "3 days"),
    ],
)  # fmt: skip
def test_a_word_the_question_says_otherwise_spelled_is_no_answer(
    quote: str, kind: AnswerType, question: str, span: str
) -> None:
    assert find_span(quote, kind, question) == span


def test_a_preposition_opening_a_sentence_names_nothing() -> None:
    # Capitalised only because it opens the sentence: "Within 36" is no name to contact.
    quote = "Within 36 hours of the phone call, send the signed form."
    assert find_span(quote, "contact", "who do i send the signed form to?") == ""
    assert find_span(quote + " HR files it.", "contact", "who do i send it to?") == "HR"


def test_a_huge_word_gets_no_definition_and_no_hang() -> None:
    # A minified blob or a long address is one "word" of 100,000 characters: the finder
    # of "word (expansion)" once retried from inside it at every character, taking
    # minutes; it answers at once, with nothing.
    quote = "https://x.test/" + "9" * 100_000
    assert find_span(quote, "definition", "what is x?") == ""
    # Nor does the email-address pattern try every character of a huge word.
    assert find_span("Call " + "a" * 100_000 + " today.", "number", "how long?") == ""
    # Nor is a clause break sought from every space of a huge run of them.
    spaced = "Press" + " " * 100_000 + "the button."
    assert find_span(spaced, "procedure", "how do i start?").startswith("Press")


def test_where_a_thing_is_sent_is_a_place() -> None:
    quote = "Your laptop and phone will be shipped to your home address on file."
    assert find_span(quote, "place", "where does my laptop get shipped?") == "your home address"
    # a bare "address" may be a speech
    speech = "He spoke of it in his annual address to the staff."
    assert find_span(speech, "place", "where did he say it?") == ""


@pytest.mark.parametrize(
    ("question", "quote", "span"),
    [
        # a step that works a device is a step ("press", "restart" are verbs of any IT page)
        (
            "how do i lock my screen?",
            "Press Control + Shift + Power to lock the screen.",
            "Press Control + Shift + Power to lock the screen.",
        ),
        # a full stop ends its clause after Markdown's closing emphasis too, and the
        # emphasis is no part of the span
        (
            "how do i update my mac?",
            "**Back up your files first.** Restart from the Apple menu.",
            "Restart from the Apple menu.",
        ),
        (
            "what do i do before leaving my desk?",
            "**Lock your computer before leaving it.** It keeps the data safe.",
            "Lock your computer before leaving it",
        ),
    ],
)
def test_steps_are_found_as_pages_write_them(question: str, quote: str, span: str) -> None:
    assert find_span(quote, "procedure", question) == span


def test_a_yes_no_question_in_its_own_words_with_not_is_answered() -> None:
    quote = "Your Sick Leave **will not** be paid out; however, you will not lose it."
    question = "will my sick leave be paid out when i leave?"
    assert find_span(quote, "yes_no", question) == "Your Sick Leave **will not** be paid out"
    # Asked with "not", the same words add nothing to it.
    said = "Sick leave is not paid out."
    assert find_span(said, "yes_no", "is sick leave not paid out?") == ""
    assert find_span(said, "yes_no", "is sick leave paid out?") == "Sick leave is not paid out."


@pytest.mark.parametrize(
    ("quote", "span"),
    [
        # an email address's digits count nothing; the rough length of time answers
        (
            "Email hspd12.security@gsa.gov to start this process, which usually takes a few days.",
            "a few days",
        ),
        ("Approval takes several weeks.", "several weeks"),
        ("Expect a couple of days for the card.", "a couple of days"),
        # "a few" of anything but time is no length of time
        ("A few of us carry several laptops.", ""),
    ],
)
def test_how_long_is_answered_by_a_rough_length_of_time(quote: str, span: str) -> None:
    assert find_span(quote, "number", "how long does it take to get my badge?") == span


def test_of_two_clauses_the_one_saying_the_questions_predicate_answers_yes_or_no() -> None:
    quote = "The hours will rollover from one pay period to the next, and they never expire."
    assert find_span(quote, "yes_no", "do credit hours expire?") == "they never expire."
    # as many of the question's words, said otherwise: the first clause still leads
    assert find_span(quote, "yes_no", "do credit hours roll over?") == (
        "The hours will rollover from one pay period to the next"
    )
