"""Queries spelled as the knowledge base spells them, before they are searched.

A typo ("differntial", "reciept") is a word no page has: BM25 finds nothing by it and the
embedding reads it as some other word, so the page that answers may never be read, and the
reader's own typo mending (agent/language/typos.py, against the passages read) has nothing
to mend against. Here each such word is matched to the keyword index's whole vocabulary
first, as Norvig's spelling corrector and Elasticsearch's fuzzy queries do: the spellings
one edit away (a letter dropped, added, changed, or two swapped) whose stem some page has.

Only a word of five letters or more that is no English word and that no page has is
respelled, and only when its candidates agree on one stem, or one is more common in the
knowledge base than every other: a name ("Calendly"), an initialism ("HSR") or a real word
no page has ("bonus", what a near miss asks about) is searched as written.
"""

from __future__ import annotations

import re
from collections import OrderedDict

from agent.language.typos import CorpusTerms, english
from store.text_analysis import TextAnalyzer


class QuerySpeller:
    def __init__(self, analyzer: TextAnalyzer, words: CorpusTerms) -> None:
        self._analyzer = analyzer
        self._words = words
        # word → its respelling ("" for none): a question's rewrites repeat its words.
        self._seen: OrderedDict[tuple[int | None, str], str] = OrderedDict()

    def corrected(self, query: str, *, version: int | None = None) -> str:
        """`query` with each typo replaced by the spelling the pages have; `version` (the
        index's) keys the memo, so a reindex that adds a word is seen."""
        tried = 0

        def respelled(match: re.Match[str]) -> str:
            nonlocal tried
            word = match.group()
            # Lower case only: a capitalised word may be a name, an upper-case one an
            # initialism. A question has a few words to mend; a pasted log of thousands
            # of unknown words is searched as written past the first ones.
            if len(word) < _SHORTEST or not word.islower() or tried >= _MOST_TRIED:
                return word
            tried += 1
            return self._respelled(word, version)

        return _WORD.sub(respelled, query)

    def _respelled(self, word: str, version: int | None) -> str:
        key = (version, word)
        if key not in self._seen:
            self._seen[key] = self._spelling(word)
            while len(self._seen) > _REMEMBERED:
                self._seen.popitem(last=False)
        return self._seen[key] or word

    def _spelling(self, word: str) -> str:
        stem = self._stem(word)
        if stem is None or self._words.known([stem]) or english(word):
            return ""
        by_stem: dict[str, str] = {}
        for candidate in sorted(_one_edit(word)):
            candidate_stem = self._stem(candidate)
            if candidate_stem is not None:
                by_stem.setdefault(candidate_stem, candidate)
        known = self._words.known(list(by_stem))
        if not known:
            return ""
        if len(known) == 1:
            return by_stem[next(iter(known))]
        # Several words are one edit away ("fromat": "format", "from"): the most common in
        # the pages (lowest idf), only if no other is as common.
        rarity = sorted((r, s) for s, r in self._words.rarity(sorted(known)).items())
        (best, stem_of_best), (second, _) = rarity[0], rarity[1]
        return by_stem[stem_of_best] if best < second else ""

    def _stem(self, word: str) -> str | None:
        terms = self._analyzer.analyse(word).words
        return terms[0] if len(terms) == 1 else None


def _one_edit(word: str) -> set[str]:
    """Every spelling one edit from `word`: a letter dropped, two neighbours swapped, a
    letter changed, a letter added (Damerau–Levenshtein distance 1)."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    dropped = {a + b[1:] for a, b in splits if b}
    swapped = {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    changed = {a + c + b[1:] for a, b in splits if b for c in _LETTERS}
    added = {a + c + b for a, b in splits for c in _LETTERS}
    return (dropped | swapped | changed | added) - {word}


_WORD = re.compile(r"[^\W\d_]+")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
# Shorter words have many words of the pages one edit away by chance ("hsa", "has").
_SHORTEST = 5
_REMEMBERED = 10_000
# Words of one query looked up at most (each unknown one costs ~50 stems per letter).
_MOST_TRIED = 32
