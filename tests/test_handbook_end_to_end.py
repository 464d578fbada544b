"""The one end-to-end test over the whole bundled handbook, through the app's own wiring.

It is the slowest test (it embeds ~1,700 chunks), so it is the only one that uses the
whole handbook; everything else runs on small fixture corpora.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.grounding import quote_occurs
from bot.settings import Settings
from bot.sources import handbook_config
from bot.wiring import open_runtime

SITE = "https://handbook.tts.gsa.gov/"


@pytest.mark.slow
async def test_the_bundled_handbook_answers_with_verified_quotes_and_live_urls(
    database_url: str, tmp_path: Path
) -> None:
    settings = Settings(DATABASE_URL=database_url, KB_HOME=tmp_path, KB_SOURCES=tmp_path / "none")
    async with open_runtime(settings) as runtime:
        job = runtime.reindex_job(base_dir=tmp_path)
        first = await job.run([handbook_config(settings)])
        (report,) = first.reports
        assert (report.documents_added, report.documents_failed) == (199, 0)

        answerer = runtime.answerer()
        leave = await answerer.answer("How do I request leave?")
        assert leave.covered and leave.claims
        assert all(s.url and s.url.startswith(SITE) for s in leave.citations)
        assert any("leave" in (s.url or "") or "hrlinks" in (s.url or "") for s in leave.citations)
        assert any("leave" in c.quote.lower() for c in leave.claims)
        for claim in leave.claims:
            chunk = await runtime.pool.fetchval(
                "SELECT text FROM chunks WHERE id = $1", claim.chunk_id
            )
            assert quote_occurs(claim.quote, chunk)

        off_topic = await answerer.answer("What is the airspeed velocity of an unladen swallow?")
        assert off_topic.covered is False and off_topic.claims == ()

        again = await job.run([handbook_config(settings)])
        assert (again.reports[0].documents_unchanged, again.reports[0].chunks_embedded) == (199, 0)
