"""A scene's particulars: words of the scene a chat message sets that no page can hold.

"working from Denver all next week for a conference - how should I let folks know where
I am?" asks a thin question ("let folks know where I am") about a scene. When the asking
part is that thin, the scene is part of what is asked, and its words stay key terms
(agent/language/questions.py); but a word of the scene that no page of the knowledge base
has at all ("Denver", "offsite", "LinkedIn") is the asker's particular: the page that
answers speaks of working remotely, of team gatherings, of social media, never of this
asker's city. Held as a key term it is the rarest of all and alone sinks the answer.

Not when the asking part points back at the scene ("is it a paid holiday?", "should I
handle it on my own?"): the scene's thing is then the very topic asked about, and a page
that never names it does not answer.
"""

from __future__ import annotations

import re

# Words by which an asking part refers to what the scene set up.
_POINTS_BACK = re.compile(r"\b(?:it|its|that|this|these|those|them|they|one|there)\b", re.I)
# Fewest key terms that must remain to be judged once the particulars are set aside.
MIN_REMAINING = 2


def points_back(asking: str) -> bool:
    """Whether the asking part refers back to the scene by a pronoun."""
    return bool(_POINTS_BACK.search(asking))


def particulars(
    scene: frozenset[str], key_terms: frozenset[str], known: set[str], names: frozenset[str]
) -> frozenset[str]:
    """The scene's terms the knowledge base does not `know`, and the quantities it states
    ("8 of us would travel": a page gives its own thresholds, not the asker's count; a
    year or an identifier is among `names` and stays), when enough key terms remain."""
    unknown = {t for t in scene if t not in known or (_quantity(t) and t not in names)}
    if len(key_terms - unknown) < MIN_REMAINING:
        return frozenset()
    return frozenset(unknown)


def stated_quantities(key_terms: frozenset[str], names: frozenset[str]) -> frozenset[str]:
    """The numbers among `key_terms` the asker states, not names (a year or an identifier
    is one), when enough key terms remain to be judged."""
    stated = {t for t in key_terms if _quantity(t) and t not in names}
    if len(key_terms - stated) < MIN_REMAINING:
        return frozenset()
    return frozenset(stated)


def _quantity(term: str) -> bool:
    return any(c.isdigit() for c in term)


def cased(
    circumstance: frozenset[str], key_terms: frozenset[str], known: set[str], names: frozenset[str]
) -> frozenset[str]:
    """The terms of a circumstance clause the knowledge base does not `know`, without its
    quantities and names, when enough key terms remain to be judged."""
    unknown = {t for t in circumstance if t not in known and not _quantity(t) and t not in names}
    if len(key_terms - unknown) < MIN_REMAINING:
        return frozenset()
    return frozenset(unknown)
