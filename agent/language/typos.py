"""Question words as the documents spell them: a typo ("hourz", "reimbursment") is matched
to the word of the passages read that is one or two edits away, before coverage is judged.

Only words the passages do not have are corrected, only to a word they do have, and only
when one candidate is closest: a correct rare word is never replaced, and a tie is left
alone rather than guessed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

from wordnet_lookup import is_wordnet_term

from agent.language.everyday import in_everyday_use


class CorpusTerms(Protocol):
    """What the knowledge base as a whole says of a term (the keyword index answers)."""

    def rarity(self, terms: Iterable[str]) -> dict[str, float]: ...

    def known(self, terms: Iterable[str]) -> set[str]: ...


def english(word: str) -> bool:
    """Whether `word` is an English word (Princeton WordNet's lexicon, plurals included):
    "parental" and "fail" are, so they are never typos of a page's "part" and "fall";
    "sabatical" and "reimbursment" are not."""
    return len(word) > 1 and is_wordnet_term(word)


def corrections(words: Iterable[str], vocabulary: frozenset[str]) -> dict[str, str]:
    """`{typo: word}` for each of `words` not in `vocabulary` with one closest word in it
    (one edit for words of 4 or 5 letters, two from 6; digits and shorter words never).

    A short word has many words of the pages two edits away by chance ("staff" and
    "start", "sick" and "sack"), so two edits there are as likely another word as a typo:
    a near miss's topic would be "corrected" into a page word and answered. Lucene's and
    Elasticsearch's AUTO fuzziness draws the line at the same lengths."""
    found = {}
    for word in words:
        if word in vocabulary or len(word) < 4 or any(c.isdigit() for c in word):
            continue
        limit = 1 if len(word) <= _ONE_EDIT_UP_TO else 2
        best: list[str] = []
        best_distance = limit + 1
        for candidate in vocabulary:
            if abs(len(candidate) - len(word)) > limit or candidate[:1] != word[:1]:
                continue  # a typo rarely hits the first letter; this keeps the scan cheap
            distance = edit_distance(word, candidate, limit)
            if distance > limit:
                continue  # `limit + 1` means "too far", never a tie among the far ones
            if distance < best_distance:
                best, best_distance = [candidate], distance
            elif distance == best_distance:
                best.append(candidate)
        if len(best) == 1:
            found[word] = best[0]
    return found


def rare_word_fix(word: str, page_words: Iterable[str]) -> str | None:
    """The word of `page_words` that `word`, an English word too rare for everyday use
    ("manger", "hods"), mistypes ("manager", "holds"), or None.

    A typo that happens to spell a word of the dictionary is a typo still: among askers
    writing "manger" beside "WHS", far more meant the common word one edit away than the
    rare one. Only one edit, only to a word in everyday use (`in_everyday_use`) with the
    same first letter, and only when that word is the one candidate: a rare word the
    asker means ("bereavement", "hijab") has no common word one edit away to be taken
    for, and two candidates are a guess."""
    if len(word) < 4 or in_everyday_use(word) or not word.isalpha():
        return None
    found = {
        candidate
        for candidate in page_words
        if candidate != word
        and candidate[:1] == word[:1]
        and abs(len(candidate) - len(word)) <= 1
        and edit_distance(word, candidate, 1) <= 1
        and in_everyday_use(candidate)
    }
    return found.pop() if len(found) == 1 else None


def degree_forms(word: str) -> frozenset[str]:
    """The other degrees a page may write for a superlative ("heavier" and "heavy" for
    "heaviest", "bigger" and "big" for "biggest") or the superlative of a comparative
    ("heaviest" for "heavier"; never a base, which would read "manager" as "manage");
    empty for a word of neither ending. The stemmer keeps the degrees apart."""
    if word.endswith("est") and len(word) > 5:
        stem = word[:-3]  # "heavi", "larg", "bigg", "long"
        bases = {stem, stem + "e"}
        if stem.endswith("i"):
            bases.add(stem[:-1] + "y")
        if stem[-1] == stem[-2]:
            bases.add(stem[:-1])
        return frozenset({stem + "er", *bases})
    if word.endswith("er") and len(word) > 4:
        return frozenset({word[:-2] + "est"})
    return frozenset()


# The longest word allowed one edit only; longer words may have two.
_ONE_EDIT_UP_TO = 5


def clipped(word: str, vocabulary: frozenset[str]) -> str | None:
    """The word of `vocabulary` that `word` is the clipped form of ("cert" for
    "certification", "info" for "information", "admin" for "administrative"), or None.

    Chat clips long words to their first syllables; a clip is a prefix of the word it
    stands for. Only when every word of `vocabulary` it begins is one family (each
    begins with the shortest: "certif", "certifi"), and only for a clip of 4 letters or
    more that keeps at least half of that word: a short prefix ("pen", the stem of
    "pens") begins words of many families ("pension", "penalty"). The doer of a verb
    ("driver" for "drive", "user" for "use") is another word, which the asker did not
    write; an irregular form ("drawn" for "draw") is the same word."""
    if len(word) < 4 or any(c.isdigit() for c in word):
        return None
    longer = sorted(
        (v for v in vocabulary if v.startswith(word) and v[len(word) :] not in _DOER), key=len
    )
    if not longer or 2 * len(word) < len(longer[0]):
        return None
    # A compound's first part is a word of its own, not a clip: "hand" is no "handheld",
    # whose rest ("held") is an everyday word too; "cert" is "certification" ("ification"
    # is none), "heli" is "helicopter" ("copt", of the stem, is no everyday word).
    rest = longer[0][len(word) :]
    if len(rest) >= 3 and english(rest) and in_everyday_use(rest):
        return None
    return longer[0] if all(v.startswith(longer[0]) for v in longer) else None


# What a clipped word may not be missing: "" (the word itself) and the suffix of the doer.
_DOER = frozenset({"", "r", "er"})


def split_compound(word: str, is_word: Callable[[str], bool]) -> tuple[str, str] | None:
    """The two words the documents write apart that the asker wrote as one ("under-performing"
    for "underperforming", "sign up" for "signup"): the first split whose parts are both
    words (`is_word`), each of at least three letters and the second of four; None if
    there is none."""
    if len(word) < 7 or any(c.isdigit() for c in word):
        return None
    for i in range(3, len(word) - 3):
        if is_word(word[:i]) and is_word(word[i:]):
            return word[:i], word[i:]
    return None


def clipped_in_phrase(word: str, question: str, text: str) -> str | None:
    """The word of `text` that `word` clips in a phrase the asker wrote ("bank hol" for the
    pages' "bank holiday", "mat leave" for "maternity leave"), or None.

    A clip too short to stand alone (`clipped` wants four letters) is read when the word
    beside it in the question stands beside one word, and one only, beginning with the
    clip in the pages: the phrase is the evidence, as the pages writing a compound apart
    is for `written_as_two`."""
    word = word.casefold()
    if len(word) < 3 or not word.isalpha():
        return None
    words = [w.casefold() for w in re.findall(r"[A-Za-z]+", question)]
    # Each word beside the clip once, however often the message repeats the phrase.
    befores = {words[i - 1] for i, w in enumerate(words) if w == word and i > 0}
    afters = {words[i + 1] for i, w in enumerate(words) if w == word and i + 1 < len(words)}
    clip = re.escape(word)
    patterns = [rf"\b{re.escape(b)}[\s-]+({clip}[a-z]+)\b" for b in befores if len(b) >= 3]
    patterns += [rf"\b({clip}[a-z]+)[\s-]+{re.escape(a)}\b" for a in afters if len(a) >= 3]
    found = {m.casefold() for p in patterns for m in re.findall(p, text, re.IGNORECASE)}
    # One word, in its forms ("holiday", "holidays"): the shortest begins every other.
    shortest = min(found, key=len, default=None)
    return shortest if shortest and all(f.startswith(shortest) for f in found) else None


def written_as_two(word: str, text: str) -> tuple[str, str] | None:
    """The two words `text` writes side by side ("on-call", "help desk") that the asker
    wrote as one `word` ("oncall", "helpdesk"), however short the first: the pages
    writing them together is the evidence, so no dictionary is needed. None if `text`
    never does, or `word` is shorter than six letters."""
    word = word.casefold()
    if len(word) < 6 or not word.isalpha():
        return None
    for i in range(2, len(word) - 2):
        first, second = word[:i], word[i:]
        if re.search(rf"\b{first}[\s-]{second}\b", text, re.IGNORECASE):
            return first, second
    return None


def split_alphanumeric(word: str, written_apart: Callable[[list[str]], bool]) -> str | None:
    """The part of a letters-and-digits word the documents write apart ("bsl2" for
    "BSL-2", "401k" for "401(k)", "covid19" for "COVID-19"): its runs of letters and of
    digits (a lone letter is no word) must stand side by side in the documents
    (`written_apart`), so "bsl3" is not "BSL-2"; then the longest run, letters first.
    None if the word mixes no letters and digits, or the documents don't write it so.

    A number run into its unit ("2am", "10kg", "30min") is a quantity the asker
    states, not a code: split, it would leave the unit ("am") to be searched as a
    word, and the number the asker gave would no longer read as one."""
    if _MEASURE.fullmatch(word):
        return None
    runs = _RUNS.findall(word)
    kept = [r for r in runs if len(r) > 1 or r.isdigit()]
    if len(runs) < 2 or not kept or not written_apart(kept):
        return None
    return sorted(kept, key=lambda r: (r.isdigit(), -len(r)))[0]


_RUNS = re.compile(r"[^\W\d_]+|\d+")
# A number written with its unit or ordinal: times of day, durations, weights, distances.
_MEASURE = re.compile(
    r"\d+(?:[.,]\d+)?(?:am|pm|h|hrs?|hours?|mins?|s|secs?|days?|wks?|kg|g|lbs?|km|mi|m|cm|"
    r"mm|ft|st|nd|rd|th|x)",
    re.IGNORECASE,
)


def edit_distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance with transpositions counted as one edit, or `limit + 1` once it
    is sure to exceed `limit`."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[-1] if previous[-1] <= limit else limit + 1


def apply(words: Iterable[str], fixes: Mapping[str, str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(fixes.get(w, w) for w in words))
