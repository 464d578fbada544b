"""For a procedure or list question, the steps come first (extractive reasoner).

"How do I order captioning?" is answered by "To access captioning services: - Send an
email at least 12 hours prior … to …", a lead-in with its steps; a sentence of the same
page that only points elsewhere ("Visit the documentation page for further details.")
shares as many of the question's words and may score higher. Issue 24 asks that
procedures and lists be answered by the steps or items quoted with their lead-in, so a
strong quote of the answering page (the best quote's) that holds them takes a place
before the sentences that do not, even when it scores less close to the best than a
runner-up must. This holds in any knowledge base that writes procedures as lists.
"""

from __future__ import annotations

import re

from agent.language.questions import AnswerType
from agent.state import Evidence

STEPS_ASKED: frozenset[AnswerType] = frozenset({"procedure", "list"})

# A lead-in line ending in ':' followed (after blank lines) by a list item.
_LEAD_IN_WITH_LIST = re.compile(r":[ \t]*\n(?:[ \t]*\n)*[ \t]*(?:[-*+•]|\d+[.)])[ \t]+\S")


def holds_steps(quote: str) -> bool:
    """Whether `quote` is a lead-in with its list of steps or items."""
    return bool(_LEAD_IN_WITH_LIST.search(quote))


def steps_of_the_answering_page(candidate: Evidence, best: Evidence, asked: AnswerType) -> bool:
    """Whether `candidate` is a strong quote of steps on the best quote's page, for a
    question asking for steps or items."""
    return (
        asked in STEPS_ASKED
        and candidate.support == "strong"
        and candidate.document_id == best.document_id
        and holds_steps(candidate.quote)
    )
