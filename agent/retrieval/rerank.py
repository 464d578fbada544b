"""Re-ranking fused candidates: a `Reranker` protocol and its implementations.

- `TitleLinkReranker`, the offline default: a candidate gains when the question names its
  document's title (as written, or every word of it in any case and word form), and when
  one of the best candidates names it (the second hop of a multi-hop question: the passage
  about the film names the director, whose own page is the answer). It reads only the
  candidates it is given, so it never brings in a document the search filters left out,
  and costs about a millisecond.
- `CrossEncoderReranker`, when a sentence-transformers cross-encoder is configured (a local
  path or a model already in the Hugging Face cache; nothing is downloaded).
- `ChainedReranker` runs several in order.

Candidates arrive best first with fused scores in [0, 1]; a reranker returns them re-ordered
with its own scores (higher is better).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from store.text_analysis import TextAnalyzer
from store.vector_search import ChunkHit

log = logging.getLogger(__name__)


class Reranker(Protocol):
    async def rerank(self, query: str, hits: Sequence[ChunkHit]) -> list[ChunkHit]:
        """`hits` re-ordered and re-scored for `query`, best first."""
        ...


class TitleNamer(Protocol):
    """Finds the documents a text names by title (KeywordSearch is one)."""

    def named_documents(self, text: str) -> set[int]: ...


@dataclass(frozen=True, slots=True)
class LinkOptions:
    # Added when the question names the candidate's document by its title.
    named_boost: float = 0.2
    # Added, × the naming candidate's own score, when one of the best candidates names it.
    linked_boost: float = 0.3
    # How many of the best candidates are read for titles they name.
    from_top: int = 5


class TitleLinkReranker:
    def __init__(
        self,
        *,
        titles: TitleNamer,
        analyzer: TextAnalyzer | None = None,
        options: LinkOptions | None = None,
    ) -> None:
        self._titles = titles
        self._analyzer = analyzer
        self._options = options or LinkOptions()

    async def rerank(self, query: str, hits: Sequence[ChunkHit]) -> list[ChunkHit]:
        boosts = self.boosts(query, hits)
        if not boosts:
            return list(hits)
        rescored = [
            dataclasses.replace(h, score=h.score + boosts.get(h.document_id, 0.0)) for h in hits
        ]
        return sorted(rescored, key=lambda h: -h.score)

    def boosts(self, query: str, hits: Sequence[ChunkHit]) -> dict[int, float]:
        """Document id → what its candidates gain."""
        present = {h.document_id for h in hits}
        named = (self._titles.named_documents(query) | self._worded_in(query, hits)) & present
        boosts = dict.fromkeys(named, self._options.named_boost)
        titles = {h.document_id: h.title for h in hits}
        linked: dict[int, float] = {}
        for hit in hits[: self._options.from_top]:
            for document_id in self._titles.named_documents(hit.text) & present:
                # A text naming its own title links nowhere, even to other documents that
                # carry the same title (the paragraphs of one article, two "Overview" pages).
                if titles[document_id] != hit.title:
                    linked[document_id] = max(linked.get(document_id, 0.0), hit.score)
        for document_id, score in linked.items():
            boosts[document_id] = boosts.get(document_id, 0.0) + self._options.linked_boost * score
        return boosts

    def _worded_in(self, query: str, hits: Sequence[ChunkHit]) -> set[int]:
        """Documents every word of whose title the question has, in any case and word form.

        People ask in their own case and inflection ("where are TTS job openings posted?")
        while titles are written as names ("TTSJobs"): matched only as written, the page
        that is about the asked thing gets no more than pages that merely mention its
        words. Matched on the question only: in a passage's text these words are the
        passage's own topic, not a link to another page. One-word titles ("Security",
        "Hiring") are left to the match as written: their word is in many questions
        that are not about that page ("IT security training", "engineering hiring"),
        and on the handbook's half A lifting them made a near miss answered."""
        if self._analyzer is None:
            return set()
        asked = set(self._analyzer.analyse(query).words)
        worded: set[int] = set()
        for hit in hits:
            words = self._analyzer.title_words(hit.title)
            if len(words) >= _WORDED_TITLE_MIN and words <= asked:
                worded.add(hit.document_id)
        return worded


# The fewest words a title must have to be matched in the question's own case and forms.
_WORDED_TITLE_MIN = 2


@dataclass(frozen=True, slots=True)
class CrossEncoderOptions:
    # Only the best `depth` candidates are scored; the rest keep their order after them.
    depth: int = 30
    batch_size: int = 32
    max_length: int = 512
    torch_threads: int | None = None


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder scoring (query, title + section + chunk text)."""

    def __init__(self, *, model: str, options: CrossEncoderOptions | None = None) -> None:
        self._model_ref = model
        self._options = options or CrossEncoderOptions()
        self._model: Any = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rerank")

    async def load(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._executor, self._load)

    async def rerank(self, query: str, hits: Sequence[ChunkHit]) -> list[ChunkHit]:
        head, tail = list(hits[: self._options.depth]), list(hits[self._options.depth :])
        if not head:
            return tail
        pairs = [(query, passage_text(h)) for h in head]
        loop = asyncio.get_running_loop()
        scores = await loop.run_in_executor(self._executor, self._predict, pairs)
        rescored = [
            dataclasses.replace(h, score=float(s)) for h, s in zip(head, scores, strict=True)
        ]
        floor = min(h.score for h in rescored)
        # The unscored tail stays below every scored candidate, in its fused order.
        tail = [dataclasses.replace(h, score=floor - 1 - i) for i, h in enumerate(tail)]
        return sorted(rescored, key=lambda h: -h.score) + tail

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)

    def _predict(self, pairs: list[tuple[str, str]]) -> Any:
        return self._load().predict(
            pairs, batch_size=self._options.batch_size, show_progress_bar=False
        )

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        import torch
        from sentence_transformers import CrossEncoder

        if self._options.torch_threads:
            torch.set_num_threads(self._options.torch_threads)
        try:
            self._model = CrossEncoder(
                self._model_ref,
                device="cpu",
                local_files_only=True,
                max_length=self._options.max_length,
            )
        except (OSError, ValueError) as exc:
            raise RerankerUnavailable(
                f"cannot load the cross-encoder {self._model_ref!r} ({exc}); give a local path "
                "or the name of a model already in the Hugging Face cache (nothing is downloaded)"
            ) from exc
        log.info("cross-encoder %s loaded", self._model_ref)
        return self._model


class RerankerUnavailable(Exception):
    """The configured reranker model could not be loaded."""


class ChainedReranker:
    """Several rerankers, each re-ordering the previous one's output."""

    def __init__(self, rerankers: Sequence[Reranker]) -> None:
        self._rerankers = tuple(rerankers)

    async def rerank(self, query: str, hits: Sequence[ChunkHit]) -> list[ChunkHit]:
        ranked = list(hits)
        for reranker in self._rerankers:
            ranked = await reranker.rerank(query, ranked)
        return ranked


def passage_text(hit: ChunkHit) -> str:
    """What a reranker reads of a hit: the document title, the section path, the chunk."""
    return "\n".join(part for part in (hit.title, " > ".join(hit.heading_path), hit.text) if part)
