"""Is a reply in the bot's thread meant for the bot? A pure decision on the reply's text.

People keep talking in a thread after the bot answered: they thank it, tag a colleague,
tell each other what they will do. Answering all of that is noise, so a reply (without
a mention of the bot) is answered only when its author asked the bot in this thread and
it reads as a question or a request: a question mark, a question word first ("how",
"can", "is"…), an imperative ("show me", "list"…) or a follow-up opener ("what about",
"and for"…). A thank-you from the asker gets a reaction, not a message. Measured on
tests/fixtures/slack_followups.json (README "Follow-ups in a thread").
"""

from __future__ import annotations

import re
from enum import Enum

_PERSON = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
# @here, @channel, @everyone and user groups call people, never the bot.
_BROADCAST = re.compile(r"<!(?:here|channel|everyone|subteam\^[A-Z0-9]+)[^>]*>")
_WORD = re.compile(r"[a-z0-9']+")

# First words that make a question even without its mark ("how do I carry days over").
_QUESTION_WORDS = frozenset(
    "what whats what's how hows how's where wheres where's when why who whos who's which "
    "whose whom can could would will should shall do does did is isnt isn't are arent "
    "aren't was were has have had may might must am".split()
)
# First words of a request to the bot ("show me the form", "explain the carry-over rule").
_IMPERATIVES = frozenset(
    "show tell give find list explain summarize summarise send share link point check "
    "look search describe clarify compare define elaborate expand remind walk quote cite "
    "repeat rephrase translate detail outline fetch pull get".split()
)
# Openers of a follow-up that leans on the previous answer ("what about part-timers").
_FOLLOW_UP_OPENERS = (
    "what about",
    "how about",
    "what if",
    "and for",
    "and in",
    "and if",
    "and the",
    "and what",
    "and how",
    "same for",
    "same question",
    "also for",
    "but for",
    "but what",
    "i need",
    "i want",
    "i'd like",
    "id like",
    "i would like",
    "i'm looking for",
    "im looking for",
    "more detail",
    "more info",
    "any more",
    "anything about",
    "anything on",
    "please",
    "pls",
    "the link",
    "link to",
    "source for",
    "which one",
    "not sure i",
    "i don't understand",
    "i dont understand",
    "i still don't",
)
# Fillers before the real first word ("ok so what about…", "thanks, and for…").
_LEADS = frozenset("and also but so ok okay hmm then thanks thx great perfect".split())
# Words that put a question to the people in the thread, not to the bot.
_TO_PEOPLE = frozenset("anyone anybody someone somebody folks guys y'all yall".split())
_THANKS = re.compile(
    r"^(?:(?:ok(?:ay)?|great|perfect|awesome|cool|nice|super|brilliant|excellent|got it|"
    r"that helps|that helped|helpful|makes sense|much appreciated|appreciated|"
    r"thanks?|thank you|thankyou|thx|ty|tysm|cheers|ta|merci|danke|gracias|"
    r"many thanks|thanks a lot|thanks so much|thank you so much|"
    r"perfect thanks|great thanks|that's it|thats it|exactly|"
    r"[:\w+-]*(?:pray|thumbsup|\+1|raised_hands|heart|tada|ok_hand|bow):?|"
    r"[\U0001F300-\U0001FAFF\u2600-\u27BF\u2764\uFE0F]+)"
    r"[\s!.,]*)+$",
    re.IGNORECASE,
)


class FollowUp(Enum):
    """What to do with a reply in a thread the bot answered."""

    ANSWER = "answer"
    REACT = "react"  # a thank-you: a reaction, not a message
    IGNORE = "ignore"


def follow_up(
    text: str, *, author: str, askers: frozenset[str], bot_user_id: str | None
) -> FollowUp:
    """The decision for one reply: `askers` are the people the bot answered in this thread."""
    text = text or ""
    mentioned = {m[1] for m in _PERSON.finditer(text)}
    if bot_user_id and bot_user_id in mentioned:
        return FollowUp.ANSWER
    if mentioned or _BROADCAST.search(text):
        return FollowUp.IGNORE  # someone else is being spoken to
    if author not in askers:
        return FollowUp.IGNORE  # people joining in talk to the asker; they can mention the bot
    if reads_as_request(text):
        return FollowUp.ANSWER
    if is_thanks(text):
        return FollowUp.REACT
    return FollowUp.IGNORE


def is_thanks(text: str) -> bool:
    """A thank-you or an acknowledgement and nothing else ("thanks!", "perfect, thx 🙏")."""
    return bool(_THANKS.match(" ".join(text.split())))


def reads_as_request(text: str) -> bool:
    """A question or a request, as a reader would take it (first sentence counts most)."""
    flat = " ".join(text.lower().replace("\u2019", "'").split())
    words = _WORD.findall(flat)
    if not words:
        return False
    if any(w in _TO_PEOPLE for w in words):
        return False
    if "?" in flat:
        return True
    # A thank-you first does not hide the question after it ("thanks! and for contractors").
    sentences = re.split(r"[.!;\n]+|,\s*(?=and |but |also |what |how )", flat)
    return any(_sentence_asks(s.strip(" ,")) for s in sentences)


def _sentence_asks(sentence: str) -> bool:
    words = _WORD.findall(sentence)
    if not words:
        return False
    if words[0] in _LEADS and len(words) > 1:
        if words[0] in ("and", "also", "but") and words[1] in ("for", "in", "on", "during"):
            return True  # "and for contractors"
        return _sentence_asks(sentence.split(None, 1)[1].lstrip(" ,"))
    if sentence.startswith(_FOLLOW_UP_OPENERS):
        return True
    first = words[0]
    if first in _QUESTION_WORDS:
        return len(words) >= 3  # "will do", "is fine" are not questions
    return first in _IMPERATIVES and len(words) >= 2
