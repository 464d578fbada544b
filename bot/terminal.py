"""Renders an Answer as plain text for the terminal (`kb ask`, `kb demo`).

The Slack rendering is bot/slack/render/blocks.py; this is its terminal counterpart, with the
same claims, citations and sources.
"""

from __future__ import annotations

from agent.answer import Answer, Claim, Gap, PageRead
from bot.slack.render.blocks import NOT_COVERED
from bot.slack.render.mrkdwn import plain


def answer_text(answer: Answer) -> str:
    """The answer as terminal text: quotes with [n] citations, then Sources."""
    if answer.reply and not answer.covered:
        return plain(answer.reply)
    if not answer.covered:
        lines = [NOT_COVERED]
        lines += [f"  Missing: {plain(gap.detail or gap.sub_question)}" for gap in answer.gaps]
        if answer.closest_pages:
            lines.append("  Pages that came closest (not enough to answer from):")
            lines += [f"    {_page_line(p)}" for p in answer.closest_pages]
        lines.append("  Try other words, or ask the people who own the topic.")
        return "\n".join(lines)
    lines = [_claim_line(claim) for claim in answer.claims]
    for conflict in answer.conflicts:
        sides = ", ".join(
            f"[{answer.claims[i].citation}]" for i in conflict.claims if 0 <= i < len(answer.claims)
        )
        newer = f"; [{conflict.newer}] is newer" if conflict.newer is not None else ""
        lines.append(f"  Sources disagree on {plain(conflict.sub_question)}: {sides}{newer}")
    lines += [f"  Not found: {_gap_line(gap, answer)}" for gap in answer.gaps]
    lines += ["", "Sources:"]
    lines += [f"  [{s.number}] {plain(s.title)} — {s.url or s.uri}" for s in answer.citations]
    return "\n".join(lines)


def _page_line(page: PageRead) -> str:
    section = f" › {plain(page.section)}" if page.section else ""
    return f"{plain(page.title)}{section} — {page.url or page.uri}"


def _claim_line(claim: Claim) -> str:
    """The answer span leads, in bold as Markdown writes it, then its verbatim quote."""
    quote = f"“{plain(claim.quote)}” [{claim.citation}]"
    if claim.span and " ".join(claim.span.split()) != " ".join(claim.quote.split()):
        return f"• **{plain(claim.span)}** — {quote}"
    return f"• {quote}"


def _gap_line(gap: Gap, answer: Answer) -> str:
    """What is missing, as Slack shows it: the sub-question and the sentence saying what
    the sources lack (a partly answered sub-question too: its quotes are shown, not its
    answer)."""
    asked, detail = plain(gap.sub_question), plain(gap.detail)
    if not detail:
        return asked
    if " ".join(gap.sub_question.lower().split()) == " ".join(answer.question.lower().split()):
        return detail
    return f"{asked} — {detail}"
