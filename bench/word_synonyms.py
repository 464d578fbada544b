"""Can the embedding model tell a near-synonym from a related word? (issue 24, h13)

    python bench/word_synonyms.py

Embeds single words with the packaged model (the one the bot loads) and prints the
cosine of each pair in three groups:

- "written differently": a key term of an answerable development question (Northwind,
  handbook half A) and the word its page writes instead;
- "same word": irregular and derived forms the stemmer leaves apart;
- "must stay apart": a near miss's topic word beside a word of the page it is missed on,
  and co-ordinate words (days, opposites, kinds) that a question swapping one for the
  other must not be answered by.

A threshold letting the first group count would have to sit below every pair of the
third; the output shows whether one exists.
"""

from __future__ import annotations

from _env import REPO  # noqa: F401  first: the environment, before numpy loads

# isort: split

import asyncio

from store.embedding import SentenceTransformerEmbedder

WRITTEN_DIFFERENTLY = (
    ("after", "returning"),  # Northwind a3: "after a trip" / "within 30 days of returning"
    ("parts", "blocks"),  # Northwind a10: "several parts" / "up to three blocks"
    ("pto", "paid time off"),  # Northwind a15
    ("staff", "employees"),  # Northwind a15
    ("vacation", "paid time off"),  # Northwind a16
    ("staying", "return"),  # handbook hb-a-008: "staying" / "return to work"
)
SAME_WORD = (
    ("held", "holds"),
    ("paid", "pay"),
    ("went", "go"),
    ("children", "child"),
    ("reimburse", "reimbursement"),
)
MUST_STAY_APART = (
    ("sick", "pto"),  # Northwind n5: "sick days" on a page of paid time off
    ("sick", "vacation"),
    ("bereavement", "leave"),  # Northwind n11
    ("juneteenth", "holiday"),  # handbook: "Is Juneteenth a paid holiday?"
    ("salaried", "hourly"),  # Northwind n7
    ("weekends", "weekdays"),
    ("tuesday", "monday"),
    ("january", "february"),
    ("part-time", "full-time"),
    ("north", "south"),
    ("maximum", "minimum"),
    ("buy", "sell"),
    ("approve", "reject"),
    ("managers", "employees"),
    ("vacation", "holiday"),
)


async def main() -> None:
    model = SentenceTransformerEmbedder()
    await model.load()
    try:
        for name, pairs in (
            ("written differently (should count)", WRITTEN_DIFFERENTLY),
            ("same word (should count)", SAME_WORD),
            ("must stay apart", MUST_STAY_APART),
        ):
            words = sorted({w for pair in pairs for w in pair})
            vectors = dict(zip(words, await model.embed_batch(words), strict=True))
            print(f"\n{name}")
            for a, b in pairs:
                print(f"  {a:>12} / {b:<14} {float(vectors[a] @ vectors[b]):.3f}")
    finally:
        model.close()


if __name__ == "__main__":
    asyncio.run(main())
