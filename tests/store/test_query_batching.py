from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from store.embedding import BACKGROUND_QUIET_SECONDS, SentenceTransformerEmbedder
from store.errors import EmbeddingModelUnavailable

QUESTIONS = [
    "How much annual leave do I earn?",
    "Who approves expenses over the limit?",
    "Can I carry unused vacation days into next year?",
    "What is the per diem for travel abroad?",
    "How do I book a meeting room?",
    "When is payroll run each month?",
    "Which system must travel be booked through?",
    "Is there a dress code?",
    "How do I report a lost PIV card, and who do I tell first if it happened abroad?",
    "parental leave",
    "What's the policy on working from another country for a few weeks?",
    "Wie beantrage ich Urlaub?",
]


async def alone(embedder: SentenceTransformerEmbedder, texts: list[str]) -> np.ndarray:
    """Each text embedded with nothing else asked for at the time."""
    return np.concatenate([await embedder.embed_batch([text]) for text in texts])


async def test_questions_asked_at_once_share_model_calls_and_each_gets_its_own_vectors(
    embedder: SentenceTransformerEmbedder,
) -> None:
    expected = await alone(embedder, QUESTIONS)
    # Callers of one to four texts, as retrieval (one) and sentence vectors (four) ask.
    sizes = [1, 4, 1, 2, 1, 3]
    calls, start = [], 0
    for size in sizes:
        calls.append(QUESTIONS[start : start + size])
        start += size
    before = embedder.query_calls
    found = await asyncio.gather(*(embedder.embed_batch(texts) for texts in calls))
    assert embedder.query_calls - before <= 2  # not one model call per caller
    assert [len(rows) for rows in found] == sizes
    assert np.abs(np.concatenate(found) - expected).max() < 1e-5


async def test_a_failed_model_call_reaches_every_caller_that_shared_it(tmp_path: Path) -> None:
    missing = SentenceTransformerEmbedder(model=str(tmp_path / "no-model-here"))
    try:
        outcomes = await asyncio.gather(
            *(missing.embed_batch([q]) for q in QUESTIONS[:5]), return_exceptions=True
        )
        assert all(isinstance(o, EmbeddingModelUnavailable) for o in outcomes)
        assert missing.query_calls <= 2
    finally:
        missing.close()


async def test_a_cancelled_caller_leaves_the_others_their_vectors(
    embedder: SentenceTransformerEmbedder,
) -> None:
    expected = await alone(embedder, QUESTIONS)
    before = embedder.query_calls
    first = asyncio.create_task(embedder.embed_batch([QUESTIONS[0]]))
    await asyncio.sleep(0)
    await asyncio.sleep(0)  # its model call is under way
    rest = [asyncio.create_task(embedder.embed_batch([q])) for q in QUESTIONS[1:]]
    await asyncio.sleep(0)  # all waiting for the next call
    first.cancel()  # in the call under way
    rest[2].cancel()  # still waiting
    found = await asyncio.gather(*rest, return_exceptions=True)
    with pytest.raises(asyncio.CancelledError):
        await first
    assert isinstance(found[2], asyncio.CancelledError)
    for index, rows in enumerate(found):
        if index != 2:
            assert isinstance(rows, np.ndarray)
            assert np.abs(rows[0] - expected[index + 1]).max() < 1e-5
    assert embedder.query_calls - before <= 2
    after = await embedder.embed_batch([QUESTIONS[0]])  # and the next caller is served
    assert np.abs(after[0] - expected[0]).max() < 1e-5


async def test_background_work_waits_while_questions_are_waiting(
    embedder: SentenceTransformerEmbedder,
) -> None:
    """The sentence warm-up embeds in the background: questions asked meanwhile go first."""
    expected = await alone(embedder, QUESTIONS[:6])
    finished: list[str] = []

    async def ask(name: str, texts: list[str], *, background: bool = False) -> np.ndarray:
        model = embedder.in_background() if background else embedder
        rows = await model.embed_batch(texts)
        finished.append(name)
        return rows

    first = asyncio.create_task(ask("first", QUESTIONS[:1]))
    await asyncio.sleep(0)
    await asyncio.sleep(0)  # its model call is under way
    warm_up = asyncio.create_task(ask("warm-up", QUESTIONS[1:5], background=True))
    await asyncio.sleep(0)
    later = [asyncio.create_task(ask(f"q{i}", QUESTIONS[i : i + 1])) for i in range(1, 6)]
    await asyncio.gather(first, warm_up, *later)
    assert finished[-1] == "warm-up"
    assert np.abs(warm_up.result() - expected[1:5]).max() < 1e-5
    for index, task in enumerate(later, start=1):
        assert np.abs(task.result()[0] - expected[index]).max() < 1e-5


async def test_background_work_starts_only_once_questions_have_stopped_coming(
    embedder: SentenceTransformerEmbedder,
) -> None:
    loop = asyncio.get_running_loop()
    await embedder.embed_batch([QUESTIONS[0]])
    asked = loop.time()
    warm_up = asyncio.create_task(embedder.in_background().embed_batch(QUESTIONS[1:5]))
    await asyncio.sleep(BACKGROUND_QUIET_SECONDS / 2)
    await embedder.embed_batch([QUESTIONS[5]])  # another question: the quiet starts again
    asked_again = loop.time()
    assert not warm_up.done()
    await warm_up
    assert loop.time() - asked_again >= BACKGROUND_QUIET_SECONDS * 0.95
    assert loop.time() - asked >= BACKGROUND_QUIET_SECONDS * 1.4
