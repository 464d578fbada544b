"""The routes that skip the search, held to what they are for.

"reply" is for small talk and requests about the thread itself ("thanks", "shorter
please"): nothing grounds its text, so it may not state a fact. A reply that carries a
number, a link or address, a name (a capitalised word inside a sentence) or more than a
couple of short sentences is taken as an answer in disguise, and the question is
searched instead. "from_thread" restates the previous answer; with no earlier answer
in the thread (no bot turn with claims) there is nothing to restate, so it searches.
"""

from __future__ import annotations

import dataclasses
import re

from agent.followups import last_bot_turn
from agent.reasoners.base import Route
from agent.state import Goal

# Longer than this is no longer "You're welcome!" but an explanation.
MAX_REPLY_WORDS = 25
_NUMBER = re.compile(r"\d")
_LINK = re.compile(r"(?:https?://|www\.|\S@\S|\.(?:com|gov|org|net|io)\b)", re.I)
_WORD = re.compile(r"[A-Za-z][\w'’-]*")
# Capitalised at any place in a sentence without being a name.
_ALWAYS_CAPITAL = frozenset({"I", "I'm", "I’m", "I'll", "I’ll", "I've", "I’ve", "I'd", "I’d"})
_SENTENCE_END = re.compile(r"[.!?:]\s*$")


def states_facts(reply: str) -> bool:
    """Whether a small-talk reply says something only a document could ground."""
    if _NUMBER.search(reply) or _LINK.search(reply):
        return True
    words = reply.split()
    if len(words) > MAX_REPLY_WORDS:
        return True
    previous = ""
    for token in words:
        word = _WORD.search(token)
        starts_sentence = not previous or bool(_SENTENCE_END.search(previous))
        previous = token
        if word is None or starts_sentence or word.group() in _ALWAYS_CAPITAL:
            continue
        if word.group()[0].isupper():
            return True
    return False


def checked_route(route: Route, goal: Goal) -> tuple[Route, str | None]:
    """The route to take, and a note when the reasoner's was overruled."""
    if route.action == "reply" and states_facts(route.reply or ""):
        note = "the reply route stated a fact; searched instead"
        return _search(route, goal), note
    if route.action == "from_thread" and last_bot_turn(goal.history) is None:
        note = "nothing earlier in the thread to restate; searched instead"
        return _search(route, goal), note
    return route, None


def _search(route: Route, goal: Goal) -> Route:
    standalone = route.standalone.strip() or goal.question
    return dataclasses.replace(route, action="search", standalone=standalone, reply=None)
