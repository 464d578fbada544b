from __future__ import annotations

import random

from jobs.chunking import ChunkingPolicy, chunk_text


def _document(paragraphs: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    words = "leave travel badge policy request approve manager form week day office".split()
    parts = ["# Handbook page"]
    for i in range(paragraphs):
        if i % 6 == 0:
            parts.append(f"## Section {i}")
        sentence_count = rng.randint(2, 6)
        parts.append(
            " ".join(
                " ".join(rng.choice(words) for _ in range(rng.randint(6, 18))).capitalize() + "."
                for _ in range(sentence_count)
            )
        )
    return "\n\n".join(parts)


def test_chunk_spans_map_back_to_the_document_text_exactly() -> None:
    text = _document(60)
    chunks = chunk_text(text)
    assert len(chunks) > 3
    for chunk in chunks:
        assert text[chunk.start : chunk.end] == chunk.text
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))


def test_every_paragraph_lands_in_some_chunk() -> None:
    text = _document(40)
    chunks = chunk_text(text)
    for paragraph in text.split("\n\n"):
        if not paragraph.startswith("#"):
            assert any(paragraph in c.text for c in chunks)


def test_chunks_stay_within_the_word_budget() -> None:
    policy = ChunkingPolicy(min_words=150, max_words=400)
    for chunk in chunk_text(_document(80), policy):
        assert len(chunk.text.split()) <= policy.max_words + policy.overlap_words + 10


def test_a_paragraph_longer_than_the_budget_is_split_at_sentence_ends() -> None:
    sentence = "This sentence has exactly eight words in it. "
    text = "# Title\n\n" + sentence * 120
    chunks = chunk_text(text, ChunkingPolicy(max_words=200, overlap_words=0))
    assert len(chunks) >= 4
    assert all(c.text.rstrip().endswith(".") for c in chunks)


def test_chunks_carry_their_heading_path() -> None:
    text = (
        "# Leave\n\nIntro words here.\n\n## Annual leave\n\nYou earn annual leave every pay period."
    )
    chunks = chunk_text(text)
    last = chunks[-1]
    assert last.heading_path == ("Leave", "Annual leave")
    assert "annual leave every pay period" in last.text


def test_editing_one_paragraph_changes_few_chunks() -> None:
    text = _document(120, seed=3)
    paragraphs = text.split("\n\n")
    target = len(paragraphs) // 2
    if paragraphs[target].startswith("#"):
        target += 1
    paragraphs[target] = paragraphs[target].replace(".", ", which was edited.", 1)
    before = {c.text for c in chunk_text(text)}
    after = {c.text for c in chunk_text("\n\n".join(paragraphs))}
    assert 1 <= len(after - before) <= 2


def test_empty_text_gives_no_chunks() -> None:
    assert chunk_text("") == []
    assert chunk_text("# Only a heading") == []
