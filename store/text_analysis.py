"""Turning text into the terms BM25 matches on: lower-cased, stop words dropped, stems.

Identifiers and versions are kept whole as well as split: `error_code_42` gives the term
`error_code_42` and the words `error`, `code`, `42`; `v2.3` gives `v2.3` (plus `v2` and
`3`). A query for the exact identifier then ranks its documents first, and a query in
plain words still finds them. Terms with digits or underscores are never stemmed.

The words also come in reading order, so keyword search can match adjacent pairs of
them ("sick leave", "kidney diseas") as well as single terms.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from store.text_forms import plain_title

# A run of word characters, optionally joined by `.`, `-` or `/` to more of them:
# `v2.3`, `covid-19`, `error_code_42`, `state-of-the-art`, `tcp/ip`. Public: the agent
# finds phrases in the same candidates (agent/language/questions.py).
CANDIDATE = re.compile(r"\w+(?:[./-]\w+)*")
_PART = re.compile(r"[^\W_]+")
# An initialism written with dots ("D.C.", "U.K.", "e.g."; the last dot is no part of a
# candidate): one word, as written without them ("DC"), where its letters alone would be
# parts too short to keep, and "the DC office" would never match "Washington, D.C.".
_DOTTED_INITIALISM = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")
# Where a camel-case word's parts begin: an upper-case letter after a lower-case one
# (`iPhone`, `GitHub`), or the last capital of a run followed by a lower-case letter
# (the `J` of `TTSJobs`). Page titles are often written this way ("TTSJobs",
# "HRLinks") while people ask in words ("TTS jobs", "HR links"). Only titles are split
# (`title_words`): splitting every word of every chunk for BM25 changed nothing on the
# handbook, its check sets or HotpotQA (bench/results/answer_eval.md, h21).
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_DIGIT = re.compile(r"\d")

# Lucene's English stop words plus common function and question words. Kept short on
# purpose: BM25's idf already discounts frequent words, so this only drops words that
# never carry meaning in a question.
_STOP_WORDS = """
    a an and are as at be but by for if in into is it no not of on or such that the their
    then there these they this to was will with am been being did do does doing had has have
    having he her hers him his i its itself me my our ours she so than them those through too
    us very we were what when where which while who whom why would you your yours how can
    could should about from also"""
ENGLISH_STOP_WORDS = frozenset(_STOP_WORDS.split())


@dataclass(frozen=True, slots=True)
class AnalyzerOptions:
    language: str = "english"
    stop_words: frozenset[str] = ENGLISH_STOP_WORDS
    # Parts of a compound shorter than this are dropped (the `g` of `e.g`).
    min_part_length: int = 2


@dataclass(frozen=True, slots=True)
class AnalysedText:
    """A text's words (stop words dropped, stemmed) in reading order, and the compounds
    kept whole as identifiers (`error_code_42`, `v2.3`)."""

    words: list[str]
    identifiers: list[str]

    @property
    def terms(self) -> list[str]:
        """Every term BM25 counts, repeats kept; order carries no meaning."""
        return self.words + self.identifiers


class TextAnalyzer:
    """Text → terms, the same way for documents and queries."""

    def __init__(self, options: AnalyzerOptions | None = None) -> None:
        import Stemmer  # PyStemmer: C snowball stemmers, with its own word cache

        self._options = options or AnalyzerOptions()
        self._stemmer = Stemmer.Stemmer(self._options.language)

    @property
    def options(self) -> AnalyzerOptions:
        return self._options

    def terms(self, text: str) -> list[str]:
        """The terms of `text`, repeats kept (BM25 counts them); order carries no meaning."""
        return self.analyse(text).terms

    def analyse(self, text: str) -> AnalysedText:
        words: list[str] = []
        whole: list[str] = []
        for match in CANDIDATE.finditer(text.casefold()):
            self._candidate(match.group(), words, whole)
        return AnalysedText(self._stem(words), whole)

    def terms_of_all(self, texts: Iterable[str]) -> list[list[str]]:
        return [self.terms(text) for text in texts]

    def _candidate(self, candidate: str, words: list[str], whole: list[str]) -> None:
        if candidate.isalnum():
            if candidate not in self._options.stop_words:
                words.append(candidate)
            return
        if _DOTTED_INITIALISM.fullmatch(candidate):
            letters = candidate.replace(".", "")
            if letters not in self._options.stop_words:
                words.append(letters)
            return
        if _is_identifier(candidate):
            whole.append(candidate)
        for part in _PART.findall(candidate):
            long_enough = len(part) >= self._options.min_part_length or part.isdigit()
            if long_enough and part not in self._options.stop_words:
                words.append(part)

    def title_words(self, title: str) -> frozenset[str]:
        """The words of a title as a question would carry them: camel case written apart
        (`TTSJobs` gives `tts` and `job`, not the whole `ttsjob` nobody asks for)."""
        return frozenset(self.analyse(camel_spaced(title)).words)

    def _stem(self, words: list[str]) -> list[str]:
        plain = [w for w in words if not _DIGIT.search(w)]
        stems = iter(self._stemmer.stemWords(plain))
        return [w if _DIGIT.search(w) else next(stems) for w in words]


def camel_spaced(text: str) -> str:
    """`text` with its camel-case words written apart ("TTSJobs" -> "TTS Jobs")."""
    return _CAMEL_BOUNDARY.sub(" ", text)


def _is_identifier(candidate: str) -> bool:
    """A compound worth matching whole: it has a digit or an underscore (not `state-of-art`)."""
    return "_" in candidate or bool(_DIGIT.search(candidate))


@dataclass(frozen=True, slots=True)
class MentionOptions:
    # Longest title, in words, looked for in a text.
    max_words: int = 8
    # A one-word title must be at least this long (and not a stop word) to count.
    min_single_word_chars: int = 4


class TitleMentions:
    """Which documents a text names by title: titles matched as written (case-sensitive).

    Case matters on purpose: "More" (a song) is named in "More was released…", not in
    "more than". A document's own title in its own text is the caller's to ignore.
    """

    def __init__(
        self,
        titles: Iterable[tuple[int, str]],
        *,
        stop_words: frozenset[str] = ENGLISH_STOP_WORDS,
        options: MentionOptions | None = None,
    ) -> None:
        self._options = options or MentionOptions()
        self._stop_words = stop_words
        self._documents: dict[tuple[str, ...], list[int]] = {}
        self._words_of: dict[int, tuple[str, ...]] = {}  # the usable title of each document
        for document_id, title in titles:
            self._add(document_id, title)
        self._lengths = _lengths_by_first_word(self._documents)

    def changed(self, titles: Mapping[int, str | None]) -> TitleMentions:
        """A copy with these documents' titles replaced (None: the document is gone); the
        lists it changes are new, so this one is left as it was."""
        copy = TitleMentions((), stop_words=self._stop_words, options=self._options)
        copy._documents = dict(self._documents)
        copy._words_of = dict(self._words_of)
        for document_id, title in titles.items():
            words = copy._words_of.pop(document_id, None)
            if words is not None:
                remaining = [d for d in copy._documents[words] if d != document_id]
                if remaining:
                    copy._documents[words] = remaining
                else:
                    del copy._documents[words]
            words = None if title is None else copy._usable_words(title)
            if words is not None:
                copy._documents[words] = [*copy._documents.get(words, []), document_id]
                copy._words_of[document_id] = words
        copy._lengths = _lengths_by_first_word(copy._documents)
        return copy

    def _add(self, document_id: int, title: str) -> None:
        words = self._usable_words(title)
        if words is not None:
            self._documents.setdefault(words, []).append(document_id)
            self._words_of[document_id] = words

    def _usable_words(self, title: str) -> tuple[str, ...] | None:
        words = tuple(_PART.findall(plain_title(title)))
        return words if self._usable(words, self._stop_words) else None

    def __len__(self) -> int:
        return len(self._documents)

    def named_in(self, text: str) -> set[int]:
        """Ids of the documents whose title occurs in `text` as a whole-word phrase."""
        words = _PART.findall(text)
        found: set[int] = set()
        # Only where a title's first word stands, only as long as such titles are: most
        # words of a text begin no title.
        for start, word in enumerate(words):
            for length in self._lengths.get(word, ()):
                documents = self._documents.get(tuple(words[start : start + length]))
                if documents:
                    found.update(documents)
        return found

    def _usable(self, words: tuple[str, ...], stop_words: frozenset[str]) -> bool:
        if not words or len(words) > self._options.max_words:
            return False
        if len(words) > 1:
            return True
        word = words[0]
        return len(word) >= self._options.min_single_word_chars and (
            word.casefold() not in stop_words
        )


def _lengths_by_first_word(documents: Mapping[tuple[str, ...], list[int]]) -> dict[str, set[int]]:
    """For each word that begins a title, the lengths (in words) of the titles it begins."""
    lengths: dict[str, set[int]] = {}
    for words in documents:
        lengths.setdefault(words[0], set()).add(len(words))
    return lengths
