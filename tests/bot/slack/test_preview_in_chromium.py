"""The reply preview opened in headless Chromium: what a person sees of it.

Debian's chromium at /usr/bin/chromium, driven by Playwright (no browser download).
`make test` installs it (scripts/test-system-packages.sh); without it these tests fail,
never skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, async_playwright

from agent.answer import Answer, Citation, Claim, Conflict, Gap
from bot.slack.render.blocks import answer_messages
from bot.slack.render.mrkdwn import plain
from bot.slack.render.preview import preview_html

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
REPO = Path(__file__).resolve().parents[3]
FIXTURE_KB = REPO / "tests" / "fixtures" / "kb"

# Every claim's [n] link and the Sources line [n]'s link, as the page has them.
CITATIONS_JS = """() => {
  const sections = [...document.querySelectorAll('.message.bot .section')];
  const sources = sections.find(s => s.innerText.startsWith('Sources\\n'));
  const listed = {};
  for (const a of sources ? sources.querySelectorAll('a') : []) {
    const m = (a.previousSibling?.textContent || '').match(/\\[(\\d+)\\]\\s*$/);
    if (m) listed[m[1]] = a.href;
  }
  const cited = [];
  for (const s of sections) {
    if (s === sources) continue;
    for (const a of s.querySelectorAll('a')) {
      const m = a.innerText.match(/^\\[(\\d+)\\]$/);
      if (m) cited.push([m[1], a.href]);
    }
  }
  return {listed, cited};
}"""


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(
            f"headless Chromium is missing ({CHROMIUM}): run `make test`, which installs it "
            "(scripts/test-system-packages.sh), or `sudo apt-get install -y "
            "--no-install-recommends chromium fonts-liberation`.",
            pytrace=False,
        )
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        yield launched
        await launched.close()


@pytest.fixture
async def page(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context(viewport={"width": 900, "height": 900})
    opened = await context.new_page()
    yield opened
    await context.close()


def kb(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )


async def visible_buttons(page: Page) -> list[str]:
    buttons = page.locator(".actions button, .context-actions button")  # in page order
    labels = []
    for index in range(await buttons.count()):
        button = buttons.nth(index)
        assert await button.is_visible()
        box = await button.bounding_box()
        assert box is not None and box["width"] > 20 and box["height"] > 20
        labels.append(await button.inner_text())
    return labels


async def assert_citations_resolve(page: Page, urls: dict[int, str]) -> None:
    found: dict[str, Any] = await page.evaluate(CITATIONS_JS)
    assert found["cited"], "no numbered citation link on the page"
    assert {int(n): href for n, href in found["listed"].items()} == urls
    for number, href in found["cited"]:
        assert href == found["listed"][number] == urls[int(number)]


async def test_a_reply_from_kb_ask_html_shows_its_claims_links_and_buttons(
    database_url: str, tmp_path: Path, page: Page
) -> None:
    env = {"DATABASE_URL": database_url, "KB_HOME": str(tmp_path / "home")}
    template = "https://docs.example/{stem}/"
    indexed = kb("index", str(FIXTURE_KB), "--name", "fixture", "--url-template", template, env=env)
    assert indexed.returncode == 0, indexed.stderr
    reply = tmp_path / "reply.html"
    asked = kb("ask", "How do I request annual leave?", "--json", "--html", str(reply), env=env)
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["claims"], answer

    await page.goto(reply.as_uri())
    assert await page.title() == "slack-kb reply preview"
    question = await page.locator(".message.user .section").inner_text()
    assert question == "How do I request annual leave?"
    for claim in answer["claims"]:
        shown = page.locator(".message.bot .section").filter(has_text=plain(claim["quote"]))
        assert await shown.count() == 1 and await shown.is_visible(), claim["quote"]
    urls = {c["number"]: c["url"] for c in answer["citations"]}
    assert all(url.startswith("https://docs.example/") for url in urls.values())
    await assert_citations_resolve(page, urls)
    expected = ["Why this answer?"] + (["Escalate to a human"] if answer["escalate"] else [])
    expected += ["👍", "👎"]  # Slack's feedback_buttons, at the foot of the answer
    assert await visible_buttons(page) == expected
    await page.screenshot(path=str(tmp_path / "reply.png"), full_page=True)


def conflicting_answer() -> Answer:
    old = Citation(
        1,
        "Leave policy (2021)",
        "https://docs.example/old?a=1&b=2",
        "old.md",
        1,
        1,
        "hb",
        "hr",
        "Annual leave",
        datetime(2021, 3, 1, tzinfo=UTC),
    )
    new = Citation(
        2,
        "Leave policy",
        "https://docs.example/new",
        "new.md",
        2,
        2,
        "hb",
        "hr",
        "Annual leave",
        datetime(2024, 6, 1, tzinfo=UTC),
    )
    claims = [
        Claim("Full-time staff earn 10 days a year.", "Full-time staff earn 10 days a year.", 1, 1),
        Claim("Full-time staff earn 12 days a year.", "Full-time staff earn 12 days a year.", 2, 2),
        Claim(
            "Ask <!channel> & <@U123> in [HRLinks](https://hr.example/links).",
            "Ask <!channel> & <@U123> in [HRLinks](https://hr.example/links).",
            2,
            2,
        ),
    ]
    claims += [
        Claim(
            f"Rule {n}: " + "Leave is approved by your supervisor in HRLinks. " * 6,
            "q",
            1 + n % 2,
            3,
        )
        for n in range(60)
    ]
    return Answer(
        question="How much leave do I earn?",
        claims=tuple(claims),
        citations=(old, new),
        stop_reason="enough_evidence",
        escalate=True,
        gaps=(Gap("Does leave carry over?", "no_results", "no document says"),),
        conflicts=(
            Conflict("How many days a year?", (0, 1), newer=2, detail="The policy changed."),
        ),
        run_id=31,
    )


async def test_a_long_conflicting_answer_shows_both_sides_every_claim_and_escalate(
    page: Page,
) -> None:
    answer = conflicting_answer()
    messages = answer_messages(answer)
    assert len(messages) > 1
    await page.set_content(preview_html(messages, question=answer.question))
    assert await page.locator(".message.bot").count() == len(messages)
    for claim in answer.claims:
        # A document's link shows its host beside its label: "HRLinks (hr.example)".
        seen = plain(claim.statement)
        if "](https://hr.example" in claim.statement:
            seen = seen.replace("HRLinks.", "HRLinks (hr.example).")
        shown = page.locator(".message.bot .section").filter(has_text=seen[:200])
        assert await shown.first.is_visible(), claim.statement
    hostile = page.locator(".section", has_text="Ask <!channel> & <@U123> in HRLinks (hr.example).")
    assert await hostile.is_visible()
    assert await hostile.locator(".mention").count() == 0
    assert await hostile.get_by_role("link", name="HRLinks").get_attribute("href") == (
        "https://hr.example/links"
    )
    note = page.locator(".section", has_text="Sources disagree: How many days a year?")
    text = await note.inner_text()
    assert "10 days a year" in text and "12 days a year" in text
    assert "(updated 2021-03-01)" in text and "Newer: [2] Leave policy (updated 2024-06-01)" in text
    assert await page.locator(".section", has_text="Not found").is_visible()
    await assert_citations_resolve(
        page, {1: "https://docs.example/old?a=1&b=2", 2: "https://docs.example/new"}
    )
    last = page.locator(".message.bot").last
    assert await last.locator(".actions").count() == 1
    assert await page.locator(".actions").count() == 1
    assert await visible_buttons(page) == ["Why this answer?", "Escalate to a human", "👍", "👎"]
