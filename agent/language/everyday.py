"""How everyday an English word is: a word no page has may be how the asker put the
question ("think", "extra", "pick up") or the thing asked about ("Juneteenth", "laser",
"muster point"). The first is no sign the pages lack the answer; the second is.

Frequencies are wordfreq's (many English sources pooled), on the Zipf scale: the base-10
logarithm of a word's uses per billion words. About 6 is the commonest two hundred
words ("think", "people", "after"), 5 the commonest two thousand ("extra", "pick")."""

from __future__ import annotations

from dataclasses import dataclass

from wordfreq import zipf_frequency


@dataclass(frozen=True, slots=True)
class EverydayWeights:
    # A word at or below this Zipf frequency names something: it weighs fully. Chosen on
    # the read check sets (4.5 answered one more there, but lost "how often is the
    # course held?" of tests/agent/test_chat_questions.py); bench/results/answer_eval.md.
    rare_up_to: float = 5.0
    # A word at or above this one is anyone's phrasing: it weighs `commonest_weight`.
    common_from: float = 6.0
    commonest_weight: float = 0.25

    def weight(self, word: str) -> float:
        """How much `word`, missing from every page, tells that the answer is missing:
        1.0 for a rare word, `commonest_weight` for the commonest, linear between. Only
        the small word list is read (words used at least once per million): a rarer
        word counts as rare, which it is."""
        frequency = zipf_frequency(word, "en", wordlist="small")
        if frequency <= self.rare_up_to:
            return 1.0
        if frequency >= self.common_from:
            return self.commonest_weight
        share = (frequency - self.rare_up_to) / (self.common_from - self.rare_up_to)
        return 1.0 - (1.0 - self.commonest_weight) * share


def in_everyday_use(word: str) -> bool:
    """Whether `word` is on the small list at all (used at least once per million words):
    "manager" and "holds" are; "manger" and "hods", English words too, are not, so the
    asker who writes them has more likely mistyped a common word."""
    return zipf_frequency(word, "en", wordlist="small") > 0
