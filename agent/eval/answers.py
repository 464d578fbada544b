"""Answer evaluation: run every question of an answer set through the loop and score it.

An answer set is `answers.jsonl`, one `{id, question, answerable, answers[], gold[]}`
per line, over a corpus: either a BEIR `corpus.jsonl` beside it (`gold` holds corpus
`_id`s) or a folder of documents indexed as `kb index` indexes one (`gold` holds paths
relative to that folder). Either way `gold` names document uris as the indexer keeps
them. The caller indexes the corpus and hands over an answerer whose runs are stored;
each question's claims are verified again here, against the chunk texts in the store.

Metrics (the JSON keys of `kb eval answers --json`):
- grounding_rate: claims whose quote occurs in the cited chunk as stored ÷ claims the
  reasoner produced (the loop's dropped claims count as produced, not verified);
- citation_precision: over answerable questions that cite anything, the mean share of
  cited documents that are in `gold`;
- answer_recall: over answerable questions whose answers are not yes/no (a yes or no
  is never a quote), the share with an accepted answer inside a claim, both normalised
  as SQuAD's evaluation does (lower case, no punctuation or articles);
- abstain_precision / abstain_recall / abstain_balanced_accuracy: `escalate` taken as
  the prediction of `answerable = false` (null when the set has no unanswerable ones);
- all_gold_cited: over answerable questions with gold, the share citing every gold one;
- false_escalation_rate: answerable questions escalated ÷ answerable questions;
- mean_steps: retrieval steps per question;
- unnecessary_retrieval_rate: steps taken after the judge had every key sub-question
  answered ÷ all steps;
- rewrite_convergence: rewritten queries that added evidence ÷ rewritten queries;
- direct_answer_rate: over answerable questions with answer phrases (yes/no left out,
  as for answer_recall), the share whose reply leads with an answer span (the first
  claim's `span`) that contains an accepted answer, both normalised as above;
- unsupported_statement_rate: statements dropped for saying more than their quote ÷
  statements written (agent/claim_grounding; null when none was written);
- conflict_rate: questions whose reply shows sources that disagree (Answer.conflicts:
  both sides quoted and cited, the newer marked) ÷ questions;
- closest_gold_rate: over answerable questions with gold whose reply quotes nothing,
  the share naming a gold document among the pages that came closest
  (Answer.closest_pages; null when every such question quoted something);
- latency_p50_ms / latency_p95_ms: the whole loop, per question, one at a time.
"""

from __future__ import annotations

import json
import random
import re
import string
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from agent.answer import Answer
from agent.eval.retrieval import DatasetError
from agent.grounding import quote_occurs
from store.corpus import ChunkText
from store.runs import StoredRun
from store.text_forms import link_text

METRIC_KEYS = (
    "grounding_rate",
    "citation_precision",
    "answer_recall",
    "abstain_precision",
    "abstain_recall",
    "abstain_balanced_accuracy",
    "all_gold_cited",
    "false_escalation_rate",
    "mean_steps",
    "unnecessary_retrieval_rate",
    "rewrite_convergence",
    "direct_answer_rate",
    "unsupported_statement_rate",
    "conflict_rate",
    "closest_gold_rate",
    "latency_p50_ms",
    "latency_p95_ms",
    "questions",
)

ProgressCallback = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class AnswerCase:
    id: str
    question: str
    answerable: bool
    answers: tuple[str, ...]
    gold: tuple[str, ...]


def load_cases(
    root: Path, *, limit: int | None = None, seed: int | None = None
) -> list[AnswerCase]:
    """The questions of `root/answers.jsonl` over `root/corpus.jsonl`; with `seed`,
    shuffled first (then `limit`)."""
    if not (root / "answers.jsonl").is_file() or not (root / "corpus.jsonl").is_file():
        raise DatasetError(f"{root} needs corpus.jsonl and answers.jsonl")
    return load_answer_file(root / "answers.jsonl", limit=limit, seed=seed)


def load_answer_file(
    path: Path, *, limit: int | None = None, seed: int | None = None
) -> list[AnswerCase]:
    """The questions of one answers.jsonl file (its corpus is the caller's business)."""
    if not path.is_file():
        raise DatasetError(f"{path} is not an answers.jsonl file")
    cases = []
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                cases.append(
                    AnswerCase(
                        str(row["id"]),
                        row["question"],
                        bool(row["answerable"]),
                        tuple(row.get("answers") or ()),
                        tuple(str(g) for g in row.get("gold") or ()),
                    )
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise DatasetError(f"{path}:{number}: not an answer line ({exc})") from exc
    if seed is not None:
        random.Random(seed).shuffle(cases)
    return cases[:limit] if limit else cases


@dataclass(frozen=True, slots=True)
class CaseOutcome:
    """What one question's run gave, as the metrics need it."""

    case: AnswerCase
    escalate: bool
    produced: int  # claims the reasoner wrote, before grounding
    verified: int  # claims whose quote occurs in the stored chunk (re-checked here)
    cited: tuple[str, ...]  # document uris cited
    quotes: tuple[str, ...]
    steps: int
    steps_after_coverage: int
    rewrites: int
    rewrites_with_evidence: int
    latency_ms: float
    lead_span: str = ""  # the answer span the reply leads with (the first claim's)
    statements_written: int = 0
    statements_dropped: int = 0
    conflicts: int = 0  # disagreements between sources the reply shows (Answer.conflicts)
    gaps: tuple[str, ...] = ()  # why each gap is one ("too_weak: … gives no number")
    # With nothing quoted, the pages named as closest (Answer.closest_pages), by uri.
    closest: tuple[str, ...] = ()


class EvalAnswerer(Protocol):
    async def answer(self, question: str) -> Answer: ...


class RunReader(Protocol):
    async def get(self, run_id: int) -> StoredRun | None: ...


class ChunkReader(Protocol):
    async def chunk_texts(self, chunk_ids: Sequence[int]) -> dict[int, ChunkText]: ...


async def run_cases(
    cases: Sequence[AnswerCase],
    *,
    answerer: EvalAnswerer,
    runs: RunReader,
    chunks: ChunkReader,
    progress: ProgressCallback | None = None,
) -> list[CaseOutcome]:
    outcomes = []
    for done, case in enumerate(cases, start=1):
        started = time.perf_counter()
        answer = await answerer.answer(case.question)
        latency = (time.perf_counter() - started) * 1000
        stored = await runs.get(answer.run_id) if answer.run_id is not None else None
        outcomes.append(await _outcome(case, answer, stored, chunks, latency))
        if progress:
            progress(done, len(cases))
    return outcomes


async def _outcome(
    case: AnswerCase,
    answer: Answer,
    stored: StoredRun | None,
    chunks: ChunkReader,
    latency: float,
) -> CaseOutcome:
    texts = await chunks.chunk_texts([c.chunk_id for c in answer.claims])
    verified = sum(
        1
        for c in answer.claims
        if c.chunk_id in texts and quote_occurs(c.quote, texts[c.chunk_id].text)
    )
    stats: Mapping[str, Any] = stored.stats if stored is not None else {}
    return CaseOutcome(
        case=case,
        escalate=answer.escalate,
        produced=len(answer.claims) + answer.rejected_claims,
        verified=verified,
        cited=tuple(dict.fromkeys(c.uri for c in answer.citations)),
        quotes=tuple(c.quote for c in answer.claims),
        steps=int(stats.get("steps", 0)),
        steps_after_coverage=int(stats.get("steps_after_coverage", 0)),
        rewrites=int(stats.get("rewrites", 0)),
        rewrites_with_evidence=int(stats.get("rewrites_with_evidence", 0)),
        latency_ms=latency,
        lead_span=answer.claims[0].span if answer.claims else "",
        statements_written=answer.statements_written,
        statements_dropped=answer.statements_dropped,
        conflicts=len(answer.conflicts),
        gaps=tuple(f"{g.reason}: {g.detail}".rstrip(": ") for g in answer.gaps),
        closest=tuple(p.uri for p in answer.closest_pages),
    )


def answer_metrics(outcomes: Sequence[CaseOutcome]) -> dict[str, float | int | None]:
    """Every metric of the module docstring, keyed as METRIC_KEYS."""
    answerable = [o for o in outcomes if o.case.answerable]
    unanswerable = [o for o in outcomes if not o.case.answerable]
    citing = [o for o in answerable if o.cited]
    recallable = [o for o in answerable if o.case.answers and not _yes_no(o.case.answers)]
    with_gold = [o for o in answerable if o.case.gold]
    escalated = [o for o in outcomes if o.escalate]
    true_abstentions = sum(1 for o in unanswerable if o.escalate)
    false_escalation = _share(sum(o.escalate for o in answerable), len(answerable))
    abstain_recall = _share(true_abstentions, len(unanswerable))
    steps = sum(o.steps for o in outcomes)
    rewrites = sum(o.rewrites for o in outcomes)
    latencies = [o.latency_ms for o in outcomes]
    metrics: dict[str, float | int | None] = {
        "grounding_rate": _share(
            sum(o.verified for o in outcomes), sum(o.produced for o in outcomes)
        ),
        "citation_precision": _mean(
            [len(set(o.cited) & set(o.case.gold)) / len(o.cited) for o in citing]
        ),
        "answer_recall": _mean([float(_recalled(o)) for o in recallable]),
        "abstain_precision": _share(true_abstentions, len(escalated)) if unanswerable else None,
        "abstain_recall": abstain_recall,
        "abstain_balanced_accuracy": (
            (abstain_recall + 1 - false_escalation) / 2
            if abstain_recall is not None and false_escalation is not None
            else None
        ),
        "all_gold_cited": _mean([float(set(o.case.gold) <= set(o.cited)) for o in with_gold]),
        "false_escalation_rate": false_escalation,
        "mean_steps": _mean([float(o.steps) for o in outcomes]),
        "unnecessary_retrieval_rate": _share(sum(o.steps_after_coverage for o in outcomes), steps),
        "rewrite_convergence": _share(sum(o.rewrites_with_evidence for o in outcomes), rewrites),
        "direct_answer_rate": _mean([float(_leads_with_answer(o)) for o in recallable]),
        "unsupported_statement_rate": _share(
            sum(o.statements_dropped for o in outcomes),
            sum(o.statements_written for o in outcomes),
        ),
        "conflict_rate": _share(sum(o.conflicts > 0 for o in outcomes), len(outcomes)),
        "closest_gold_rate": _mean(
            [float(bool(set(o.closest) & set(o.case.gold))) for o in with_gold if not o.quotes]
        ),
        "latency_p50_ms": float(np.percentile(latencies, 50)) if latencies else None,
        "latency_p95_ms": float(np.percentile(latencies, 95)) if latencies else None,
        "questions": len(outcomes),
    }
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in metrics.items()}


def case_row(outcome: CaseOutcome) -> dict[str, Any]:
    """One question's outcome as a JSON line (`kb eval answers --details`), judged by the
    same rules as the metrics: diff two runs' rows to see which questions a change moved."""
    case = outcome.case
    recallable = case.answerable and bool(case.answers) and not _yes_no(case.answers)
    return {
        "id": case.id,
        "question": case.question,
        "answerable": case.answerable,
        "escalate": outcome.escalate,
        "gold_cited": bool(case.gold) and set(case.gold) <= set(outcome.cited),
        "answer_recalled": _recalled(outcome) if recallable else None,
        "leads_with_answer": _leads_with_answer(outcome) if recallable else None,
        "cited": list(outcome.cited),
        "lead_span": outcome.lead_span,
        "quotes": list(outcome.quotes),
        "conflicts": outcome.conflicts,
        "gaps": list(outcome.gaps),
        "closest": list(outcome.closest),
        "latency_ms": round(outcome.latency_ms, 1),
    }


def markdown_table(name: str, metrics: Mapping[str, float | int | None]) -> str:
    lines = [f"### {name}", "", "| metric | value |", "|---|---|"]
    for key in METRIC_KEYS:
        value = metrics.get(key)
        shown = "—" if value is None else (f"{value:.3f}" if isinstance(value, float) else value)
        lines.append(f"| {key} | {shown} |")
    return "\n".join(lines)


def squad_normalise(text: str) -> str:
    """SQuAD's answer normalisation: lower case, no punctuation, no articles, one space;
    a Markdown link read as its text, as Slack shows it ("[Made by Trello](https://…)"
    reads "Made by Trello", not "made by trellohttps…")."""
    text = link_text(text)
    text = "".join(c for c in text.lower() if c not in set(string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def _recalled(outcome: CaseOutcome) -> bool:
    claims = " | ".join(f" {squad_normalise(q)} " for q in outcome.quotes)
    return any(
        f" {squad_normalise(a)} " in claims for a in outcome.case.answers if squad_normalise(a)
    )


def _leads_with_answer(outcome: CaseOutcome) -> bool:
    span = f" {squad_normalise(outcome.lead_span)} "
    return any(
        f" {squad_normalise(a)} " in span for a in outcome.case.answers if squad_normalise(a)
    )


def _yes_no(answers: Sequence[str]) -> bool:
    return all(squad_normalise(a) in ("yes", "no") for a in answers)


def _share(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
