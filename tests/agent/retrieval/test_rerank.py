"""Rerankers: title links on hand-made candidates, and the cross-encoder's plumbing."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.retrieval.rerank import (
    ChainedReranker,
    CrossEncoderOptions,
    CrossEncoderReranker,
    LinkOptions,
    RerankerUnavailable,
    TitleLinkReranker,
    passage_text,
)
from store.text_analysis import TextAnalyzer
from store.vector_search import ChunkHit


def hit(document_id: int, score: float, text: str = "", title: str = "") -> ChunkHit:
    return ChunkHit(
        chunk_id=document_id * 10,
        document_id=document_id,
        ordinal=0,
        text=text,
        char_start=0,
        char_end=len(text),
        heading_path=(),
        title=title or f"Doc {document_id}",
        url=None,
        uri=f"d{document_id}",
        source="s",
        score=score,
    )


class FakeTitles:
    """Titles by document id; a title is named when it occurs in the text."""

    def __init__(self, titles: dict[int, str]) -> None:
        self.titles = titles

    def named_documents(self, text: str) -> set[int]:
        return {d for d, title in self.titles.items() if title in text}


TITLES = FakeTitles(
    {1: "Meet Corliss Archer", 2: "Shirley Temple", 3: "Kiss and Tell", 9: "Elsewhere"}
)


async def test_a_one_word_title_in_the_question_lifts_its_page_only_as_written() -> None:
    # "security" is in many questions that are not about the "Security" page (on the
    # handbook it answered a near miss about training); "TTS jobs" names "TTSJobs".
    titles = FakeTitles({1: "Security", 2: "TTSJobs", 3: "Classes"})
    reranker = TitleLinkReranker(titles=titles, analyzer=TextAnalyzer())
    hits = [
        hit(3, 1.0, title="Classes"),
        hit(1, 0.9, title="Security"),
        hit(2, 0.8, title="TTSJobs"),
    ]
    assert reranker.boosts("when is the IT security training due?", hits) == {}
    assert reranker.boosts("are tts jobs posted weekly?", hits) == {2: 0.2}
    assert reranker.boosts("what does Security do?", hits) == {1: 0.2}


async def test_the_document_a_question_names_moves_up() -> None:
    reranker = TitleLinkReranker(titles=TITLES, options=LinkOptions(named_boost=0.2))
    hits = [hit(3, 1.0), hit(2, 0.9)]
    ranked = await reranker.rerank("Which films did Shirley Temple make?", hits)
    assert [h.document_id for h in ranked] == [2, 3]
    assert ranked[0].score == pytest.approx(1.1)


async def test_a_document_a_top_hit_names_gains_in_proportion_to_that_hit() -> None:
    reranker = TitleLinkReranker(titles=TITLES, options=LinkOptions(linked_boost=0.5, from_top=1))
    hits = [
        hit(1, 0.8, "Meet Corliss Archer starred Shirley Temple."),
        hit(3, 0.5),
        hit(2, 0.3, "Shirley Temple also appeared in Kiss and Tell."),  # not in the top 1
    ]
    ranked = await reranker.rerank("Who starred in the radio show?", hits)
    assert [h.document_id for h in ranked] == [1, 2, 3]
    assert ranked[1].score == pytest.approx(0.3 + 0.5 * 0.8)
    assert ranked[2].score == pytest.approx(0.5)  # named only by a hit outside the top 1


async def test_a_text_naming_its_own_title_lifts_no_document_sharing_that_title() -> None:
    # Three paragraphs of one article, each its own document under the article's title.
    titles = FakeTitles({4: "Normans", 5: "Normans", 6: "Normans", 7: "Normandy"})
    reranker = TitleLinkReranker(titles=titles, options=LinkOptions(linked_boost=0.5))
    hits = [
        hit(4, 0.9, "The Normans gave their name to Normandy.", title="Normans"),
        hit(5, 0.6, "Norman architecture.", title="Normans"),
        hit(7, 0.5, "A region in France.", title="Normandy"),
        hit(6, 0.4, "Norman conquest.", title="Normans"),
    ]
    ranked = await reranker.rerank("Who ruled the region?", hits)
    scores = {h.document_id: h.score for h in ranked}
    assert scores[7] == pytest.approx(0.5 + 0.5 * 0.9)  # a link to another title counts
    assert (scores[5], scores[6]) == (0.6, 0.4)  # the article's own title is no link


async def test_links_never_add_a_document_and_ignore_a_documents_own_title() -> None:
    reranker = TitleLinkReranker(titles=TITLES)
    hits = [hit(1, 1.0, "Meet Corliss Archer is not Elsewhere."), hit(3, 0.2)]
    ranked = await reranker.rerank("Tell me about Elsewhere", hits)
    assert [(h.document_id, h.score) for h in ranked] == [(1, 1.0), (3, 0.2)]


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-layer BERT cross-encoder built from a ten-word vocabulary (plumbing, not quality)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    path = tmp_path_factory.mktemp("cross-encoder")
    words = "[PAD] [UNK] [CLS] [SEP] [MASK] leave travel request book receipts doc".split()
    (path / "vocab.txt").write_text("\n".join(words) + "\n")
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(words),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=64,
        num_labels=1,
    )
    BertForSequenceClassification(config).save_pretrained(path)
    BertTokenizer(str(path / "vocab.txt")).save_pretrained(path)
    return path


async def test_the_cross_encoder_rescores_the_head_and_keeps_the_tail(
    tiny_cross_encoder: Path,
) -> None:
    from sentence_transformers import CrossEncoder

    reranker = CrossEncoderReranker(
        model=str(tiny_cross_encoder), options=CrossEncoderOptions(depth=3, max_length=64)
    )
    texts = ["request leave", "book travel", "receipts", "leave leave", "travel receipts"]
    hits = [hit(i + 1, 1.0 - i / 10, text) for i, text in enumerate(texts)]
    try:
        ranked = await reranker.rerank("how to request leave", hits)
    finally:
        reranker.close()
    reference = CrossEncoder(str(tiny_cross_encoder), device="cpu", max_length=64)
    expected = reference.predict([("how to request leave", passage_text(h)) for h in hits[:3]])
    head = sorted(zip(hits[:3], expected, strict=True), key=lambda pair: -pair[1])
    assert [h.document_id for h in ranked[:3]] == [h.document_id for h, _ in head]
    assert [h.score for h in ranked[:3]] == pytest.approx([float(s) for _, s in head], abs=1e-5)
    assert [h.document_id for h in ranked[3:]] == [4, 5]
    assert max(h.score for h in ranked[3:]) < min(h.score for h in ranked[:3])


async def test_a_cross_encoder_that_cannot_load_says_what_to_do(tmp_path: Path) -> None:
    reranker = CrossEncoderReranker(model=str(tmp_path / "missing"))
    try:
        with pytest.raises(RerankerUnavailable, match="nothing is downloaded"):
            await reranker.load()
    finally:
        reranker.close()


async def test_chained_rerankers_run_in_order() -> None:
    class Reverse:
        async def rerank(self, query: str, hits: list[ChunkHit]) -> list[ChunkHit]:
            return list(reversed(hits))

    chained = ChainedReranker([TitleLinkReranker(titles=TITLES), Reverse()])
    ranked = await chained.rerank("Shirley Temple", [hit(2, 0.5), hit(3, 0.6)])
    assert [h.document_id for h in ranked] == [3, 2]
