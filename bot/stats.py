"""`kb stats`: how the bot is doing, and what the documents are missing.

Questions per day, answered against escalated, feedback, and the knowledge gaps: the
questions that escalated or got a 👎, grouped by meaning (questions whose embeddings'
cosine similarity passes a threshold share a group, transitively), most frequent first,
so document owners know what to write next.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from store.embedding import Embedder
from store.stats import DayCount, GapQuestion, KindCount, StatsReader, Totals

# Cosine at which two questions ask the same thing: with all-MiniLM-L6-v2, paraphrases of one
# question score 0.7–0.9 and different questions about the same office 0.2–0.35.
SIMILAR = 0.7
EXAMPLES = 3


@dataclass(frozen=True, slots=True)
class Gap:
    question: str  # the most recent wording
    count: int
    escalated: int
    thumbs_down: int
    examples: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StatsReport:
    since: datetime
    days: list[DayCount]
    totals: Totals
    gaps: list[Gap] = field(default_factory=list)
    by_kind: list[KindCount] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "since": self.since.isoformat(),
            "days": [{**asdict(d), "day": d.day.isoformat()} for d in self.days],
            "totals": asdict(self.totals),
            "gaps": [{**asdict(g), "examples": list(g.examples)} for g in self.gaps],
            "answers_by_source_kind": {k.kind: k.answers for k in self.by_kind},
        }


def cluster(vectors: np.ndarray, *, threshold: float = SIMILAR) -> list[list[int]]:
    """Indexes grouped by single linkage: two questions within `threshold` share a group.

    Order-independent (connected components of the similarity graph), so a paraphrase
    joins its group whichever wording came first.
    """
    parent = list(range(len(vectors)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    similar = np.argwhere(np.triu(vectors @ vectors.T, k=1) >= threshold)
    for a, b in similar:
        parent[root(int(a))] = root(int(b))
    groups: dict[int, list[int]] = {}
    for index in range(len(vectors)):
        groups.setdefault(root(index), []).append(index)
    return list(groups.values())


async def knowledge_gaps(
    questions: Sequence[GapQuestion], *, embedder: Embedder, top: int = 10
) -> list[Gap]:
    if not questions:
        return []
    vectors = await embedder.embed_batch([q.question for q in questions])
    gaps = []
    for members in cluster(np.asarray(vectors)):
        grouped = [questions[i] for i in members]  # newest first, as the store lists them
        wordings = list(dict.fromkeys(q.question for q in grouped))
        gaps.append(
            Gap(
                question=wordings[0],
                count=len(grouped),
                escalated=sum(q.escalated for q in grouped),
                thumbs_down=sum(q.thumbs_down for q in grouped),
                examples=tuple(wordings[1 : EXAMPLES + 1]),
            )
        )
    return sorted(gaps, key=lambda g: (-g.count, -g.escalated))[:top]


async def stats_report(
    reader: StatsReader, *, embedder: Embedder, days: int, now: datetime | None = None
) -> StatsReport:
    since = (now or datetime.now(UTC)) - timedelta(days=days)
    return StatsReport(
        since=since,
        days=await reader.per_day(since=since),
        totals=await reader.totals(since=since),
        gaps=await knowledge_gaps(await reader.gap_questions(since=since), embedder=embedder),
        by_kind=await reader.answers_by_kind(since=since),
    )


def report_text(report: StatsReport) -> str:
    t = report.totals
    lines = [
        f"since {report.since:%Y-%m-%d %H:%M} UTC",
        "",
        "day          questions  answered  flagged",
    ]
    lines += [f"{d.day}  {d.questions:>9}  {d.answered:>8}  {d.flagged:>7}" for d in report.days]
    lines += [
        "",
        f"questions {t.questions}: answered {t.answered}, flagged for escalation {t.flagged}, "
        f"failed {t.failed}",
        f"escalated to people {t.escalated}: resolved {t.resolved}, "
        f"expert answers added {t.expert_answers}",
        f"feedback: 👍 {t.thumbs_up}  👎 {t.thumbs_down}  comments {t.comments}",
        "answers citing: "
        + (", ".join(f"{k.kind} {k.answers}" for k in report.by_kind) or "nothing yet"),
        "",
        "knowledge gaps (escalated or 👎, grouped by meaning):",
    ]
    if not report.gaps:
        lines.append("  none")
    for gap in report.gaps:
        lines.append(
            f"  {gap.count:>3}× {gap.question}  (escalated {gap.escalated}, 👎 {gap.thumbs_down})"
        )
        lines += [f"        also: {example}" for example in gap.examples]
    return "\n".join(lines)
