"""Rule-based decomposition: comparisons, "both" questions and multi-part questions.

"What is the difference between annual leave and sick leave?" asks two things, and an
answer that covers only one of them is incomplete; so does "Were Scott Derrickson and
Ed Wood of the same nationality?". Each side becomes a sub-question of its own, with the
rest of the question as its context. A question with two clauses ("What is X and how do
I Y?") splits at the second clause. Anything else stays one question.
"""

from __future__ import annotations

import re

_ENTITY = r"(?P<a>[^,?]+?)\s+(?:and|or|vs\.?|versus|with|to)\s+(?P<b>[^,?]+?)"
_DIFFERENCE = re.compile(
    r"\b(?:difference|differences|differ)\s+between\s+" + _ENTITY + r"(?=\s*(?:\?|$|,|\bfor\b))",
    re.I,
)
_COMPARE = re.compile(r"\bcompar(?:e|ing)\s+" + _ENTITY + r"(?=\s*(?:\?|$|,))", re.I)
_VERSUS = re.compile(
    r"(?P<a>[\w][\w '’-]*?)\s+(?:vs\.?|versus)\s+(?P<b>[\w][\w '’-]*?)(?=\s*(?:\?|$|,))", re.I
)
# "Which is older, The Ref or Vitamin?"  "Who was born first, A or B?"
# The last option may carry an appositive that says what it is ("… or Gimme Shelter, the
# 1970 documentary?"): in any English text a comma and an article after a name describe
# that name, so the choice is still between the two names, not unparsed (and answered by
# whatever the pages say of either).
_CHOICE = re.compile(
    r",\s*(?P<a>[^,?]+?)\s+or\s+(?P<b>[^,?]+?)(?P<described>,\s*(?:the|a|an)\s+[^,?]+?)?"
    r"\s*\??\s*$",
    re.I,
)
# "Are A and B both …?"  "Were A and B of the same nationality?"
_BOTH = re.compile(
    r"^(?P<head>(?:is|are|was|were|do|does|did|have|has|had)\s+)(?P<a>.+?)\s+and\s+"
    r"(?P<b>.+?)\s+(?P<tail>(?:both|each|of the same|the same|from the same|in the same|"
    r"located|from|based)\b.*)$",
    re.I,
)
# "What profession does A and B have in common?"
_COMMON = re.compile(
    r"^(?P<head>.*?\b(?:do|does|did)\s+)(?P<a>[A-Z][^,?]*?)\s+and\s+(?P<b>[A-Z][^,?]*?)\s+"
    r"(?:have|share)\b.*\bin common\b",
)
# "What is in both the Lithocarpus and Duranta species?"  "Both A and B had what role?"
_BOTH_INSIDE = re.compile(
    r"\bboth\s+(?:the\s+)?(?P<a>[^,?]+?)\s+and\s+(?:the\s+)?(?P<b>[^,?]+?)"
    r"(?=\s+(?:(?:is|are|was|were|have|has|had|did|do|does|fought|born|made|played|"
    r"located|from|species|genus|films?)\b)|\s*\?|\s*$)",
    re.I,
)
# "… vocalists Billie Joe Armstrong and Frank Iero …": two names of two words or more.
_NAME = r"[A-Z][\w'’.-]*(?:\s+(?:of\s+|de\s+|the\s+)?[A-Z][\w'’.-]*)+"
_TWO_NAMES = re.compile(rf"(?P<a>{_NAME})\s+and\s+(?P<b>{_NAME})")
_SECOND_CLAUSE = re.compile(
    r"\s*(?:,\s*)?\band\s+(?=(?:how|what|when|where|who|why|which|can|do|does|is|are|should)"
    r"\b"
    # an auxiliary that opens a question only with its subject after it ("… and will I
    # be charged?"), not a verb's ("… and was auto-enrolled")
    r"|(?:will|would|could|may|must|did|am)\s+(?:i|we|you|they|it|he|she)\b)",
    re.I,
)
_COMPARISON_WORDS = re.compile(r"\b(?:both|the same|same|each|either|respectively)\b", re.I)


def decompose(question: str) -> list[str]:
    """The sub-questions of `question`, in order (the question itself when it is simple)."""
    text = " ".join(question.split())
    for split in (
        _difference,
        _choice,
        _both,
        _both_inside,
        _in_common,
        _two_names,
        _versus,
        _clauses,
    ):
        parts = split(text)
        if len(parts) > 1:
            return parts
    return [text]


def _difference(text: str) -> list[str]:
    match = _DIFFERENCE.search(text) or _COMPARE.search(text)
    if not match:
        return []
    tail = text[match.end() :].strip(" ?,")
    return [_join(side, tail) for side in (match["a"], match["b"])]


def is_choice(question: str) -> bool:
    """Whether `question` asks to pick one of its options ("Which is older, A or B?"):
    then each option is a sub-question, and answering one of them answers it."""
    return len(_choice(" ".join(question.split()))) > 1


def choice_options(question: str) -> list[str]:
    """The options of a choice question, in order ("Which is older, A or B?": A, B)."""
    match = _CHOICE.search(" ".join(question.split()))
    return [match["a"].strip(), match["b"].strip()] if match else []


def _versus(text: str) -> list[str]:
    match = _VERSUS.search(text)
    if not match:
        return []
    head, tail = text[: match.start()].strip(), text[match.end() :].strip(" ?,")
    return [_join(f"{head} {side}".strip(), tail) for side in (match["a"], match["b"])]


def _choice(text: str) -> list[str]:
    match = _CHOICE.search(text)
    if not match:
        return []
    head = text[: match.start()].strip()
    described = f"{match['b'].strip()}{match['described'] or ''}"
    return [f"{head}: {side.strip()}?" for side in (match["a"], described)]


def _both(text: str) -> list[str]:
    match = _BOTH.match(text.rstrip("?"))
    if not match:
        return []
    tail = _COMPARISON_WORDS.sub(" ", match["tail"])
    return [" ".join(f"{match['head']}{match[side]} {tail}".split()) + "?" for side in "ab"]


def _both_inside(text: str) -> list[str]:
    match = _BOTH_INSIDE.search(text)
    if not match:
        return []
    head, tail = text[: match.start()], text[match.end() :]
    return [" ".join(f"{head}{match[side]}{tail}".split()) for side in "ab"]


def _two_names(text: str) -> list[str]:
    match = _TWO_NAMES.search(text)
    if not match:
        return []
    head, tail = text[: match.start()], text[match.end() :]
    return [" ".join(f"{head}{match[side]}{tail}".split()) for side in "ab"]


def _in_common(text: str) -> list[str]:
    match = _COMMON.search(text)
    if not match:
        return []
    return [f"{match['head'].strip()} {match[side].strip()}?" for side in "ab"]


def _clauses(text: str) -> list[str]:
    questions = [q.strip() for q in re.split(r"(?<=\?)\s+", text) if q.strip()]
    if len(questions) > 1:
        return questions
    parts = [p.strip(" ,") for p in _SECOND_CLAUSE.split(text) if p.strip(" ,")]
    if len(parts) < 2:
        return []
    return [p if p.endswith("?") else f"{p}?" for p in parts]


def _join(side: str, tail: str) -> str:
    side = side.strip()
    return f"{side} {tail}".strip() if tail else side
