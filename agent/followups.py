"""Thread memory: follow-ups rewritten to stand alone, and history kept within a budget.

"and for contractors?" after "How much annual leave do I earn?" is searched as "How much
annual leave do I earn for contractors?"; "what about sick leave?" swaps the phrase it
replaces ("annual leave" → "sick leave"); "the second one" names the second source of
the bot's last answer. Older turns beyond the budget are reduced to their questions and
the claims the bot cited.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from agent.answer import Turn

_FOLLOW_UP_START = re.compile(
    r"^(?:and|also|but|so|or|what about|how about|and what about|what if|same for|"
    r"and for|and in|and if)\b[\s,]*",
    re.I,
)
_ORDINAL = re.compile(
    r"\bthe (first|second|third|fourth|fifth|last|other|latter|former) (?:one|source|link|"
    r"page|option|item)\b",
    re.I,
)
_REFERENCE = re.compile(r"\b(?:it|that|this|those|these|them|they|one)\b", re.I)
_THANKS = re.compile(
    r"^\s*(?:thanks?(?: you)?(?: so much| a lot)?|thx|ty|cheers|great|perfect|ok(?:ay)?|"
    r"got it|awesome|nice|cool)[\s!.]*(?:thanks?[\s!.]*)?$",
    re.I,
)
_SHORTER = re.compile(
    r"^\s*(?:shorter|make it shorter|shorter please|tl;?dr|summari[sz]e(?: it| that)?|"
    r"in short|briefly|one line)[\s!.?]*(?:please)?[\s!.]*$",
    re.I,
)
_ORDINALS = {"first": 0, "second": 1, "third": 2, "fourth": 3, "fifth": 4, "last": -1}
_WORD = re.compile(r"\w+")


def is_thanks(text: str) -> bool:
    return bool(_THANKS.match(text))


def asks_for_shorter(text: str) -> bool:
    return bool(_SHORTER.match(text))


def last_bot_turn(history: Sequence[Turn]) -> Turn | None:
    return next((t for t in reversed(history) if t.role == "bot" and t.claims), None)


def standalone(question: str, history: Sequence[Turn]) -> str:
    """`question` rewritten to stand alone, given the thread's earlier turns."""
    previous = _previous_question(history)
    text = " ".join(question.split())
    if previous is None or not _is_follow_up(text):
        return text
    ordinal = _ORDINAL.search(text)
    bot = last_bot_turn(history)
    if ordinal and bot is not None and bot.citations:
        index = _ORDINALS.get(ordinal.group(1).casefold(), 0)
        index = min(index, len(bot.citations) - 1) if index >= 0 else index
        title = bot.citations[index].title
        text = text[: ordinal.start()] + title + text[ordinal.end() :]
        return f"{_strip_start(text).rstrip('?')} ({previous.rstrip('?')})?"
    fragment = _strip_start(text).rstrip(" ?")
    return _merge(previous, fragment)


def compress(history: Sequence[Turn], *, budget_words: int = 400) -> tuple[Turn, ...]:
    """The thread within `budget_words`: the newest turns whole, older ones reduced to the
    asker's question and the bot's cited claims."""
    kept: list[Turn] = []
    used = 0
    for turn in reversed(history):
        size = _words(turn)
        if used + size > budget_words and kept:
            turn = _reduced(turn)
            size = _words(turn)
            if used + size > budget_words:
                break
        kept.append(turn)
        used += size
    return tuple(reversed(kept))


def _previous_question(history: Sequence[Turn]) -> str | None:
    """The last question of the thread, itself made standalone from the turns before it."""
    users = [i for i, t in enumerate(history) if t.role == "user" and t.text.strip()]
    if not users:
        return None
    last = users[-1]
    return standalone(history[last].text, history[:last])


def _is_follow_up(text: str) -> bool:
    words = _WORD.findall(text)
    if _FOLLOW_UP_START.match(text) or _ORDINAL.search(text):
        return True
    return len(words) <= 4 and bool(_REFERENCE.search(text))


def _strip_start(text: str) -> str:
    return _FOLLOW_UP_START.sub("", text, count=1).strip()


def _merge(previous: str, fragment: str) -> str:
    """The previous question with the fragment swapped in for the phrase it replaces
    ("sick leave" for "annual leave"), or added to it ("… for contractors")."""
    base = previous.rstrip(" ?")
    words = fragment.split()
    if words:
        head = words[-1].casefold()
        match = re.search(rf"(?:\b\w+\s+)?\b{re.escape(head)}\b", base, re.I)
        if match and len(words) > 1:
            return f"{base[: match.start()]}{fragment}{base[match.end() :]}?"
    return f"{base} {fragment}?"


def _reduced(turn: Turn) -> Turn:
    if turn.role == "user":
        return turn
    quotes = "; ".join(c.quote for c in turn.claims)
    return dataclasses.replace(turn, text=quotes)


def _words(turn: Turn) -> int:
    return len(turn.text.split()) + sum(len(c.quote.split()) for c in turn.claims)
