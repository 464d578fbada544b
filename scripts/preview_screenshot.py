"""A PNG of a `kb ask --html` preview, as headless Chromium draws it (for the README).

    KB_HOME=... kb ask "How many hours of annual leave do I earn?" --html answer.html
    python scripts/preview_screenshot.py answer.html docs/answer-in-slack.png

Uses Debian's chromium at /usr/bin/chromium through Playwright, as the preview tests do
(tests/bot/slack/test_preview_in_chromium.py); no browser is downloaded.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from playwright.async_api import async_playwright

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]


async def screenshot(preview: Path, out: Path, *, width: int) -> None:
    if not CHROMIUM.exists():
        raise SystemExit(f"{CHROMIUM} is missing: `make test` installs it (chromium)")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        try:
            page = await browser.new_page(viewport={"width": width, "height": 600})
            await page.goto(preview.resolve().as_uri())
            await page.screenshot(path=str(out), full_page=True)
        finally:
            await browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("preview", type=Path, help="the HTML file `kb ask --html` wrote")
    parser.add_argument("out", type=Path, help="where to write the PNG")
    parser.add_argument("--width", type=int, default=820)
    args = parser.parse_args()
    asyncio.run(screenshot(args.preview, args.out, width=args.width))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
