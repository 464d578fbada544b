"""`kb index` then `kb ask` over Confluence and Drive fakes: the page quoted with its real URL.

The fakes run in this process; `kb` runs as a subprocess (as a user runs it), in a
thread so the fakes keep answering. Credentials reach `kb` only through the environment
variables the sources file names.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.jobs.connectors.fake_confluence import FakeConfluence, Page, running_confluence
from tests.jobs.connectors.fake_drive import DOC, FakeDrive, File, running_drive

REPO = Path(__file__).resolve().parents[3]
T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
FILLER = [
    ("Parking", "Parking permits are renewed every January at the front desk."),
    ("Lunch", "Soup is served in the canteen on Fridays from noon."),
    ("Holidays", "The office closes between Christmas and New Year."),
]


async def kb(*args: str, env: dict[str, str]) -> dict[str, Any]:
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "bot", *args, "--json"],
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def quoted(answer: dict[str, Any]) -> dict[str, str]:
    """Quote -> citation URL, for every claim of the answer."""
    return {c["quote"]: c["citation"]["url"] for c in answer.get("claims", [])}


async def test_confluence_sync_ask_quiet_sync_and_restrict(
    database_url: str, tmp_path: Path
) -> None:
    fake = FakeConfluence()
    fake.add(
        Page(
            "4242",
            "ENG",
            "Deploy freeze",
            "<h1>Deploy freeze</h1><p>Production deploys are frozen from Friday 15:00 "
            "until Monday 09:00.</p>",
            T0,
        )
    )
    for number, (title, text) in enumerate(FILLER):
        fake.add(Page(str(500 + number), "ENG", title, f"<p>{text}</p>", T0))
    async with running_confluence(fake):
        sources = tmp_path / "sources.toml"
        sources.write_text(
            '[[source]]\nname = "wiki"\nkind = "confluence"\n[source.settings]\n'
            f'url = "{fake.base_url}"\ncloud = true\nuser_env = "WIKI_USER"\n'
            'token_env = "WIKI_TOKEN"\nspaces = ["ENG"]\n'
        )
        env = {
            "DATABASE_URL": database_url,
            "KB_HOME": str(tmp_path / "home"),
            "KB_SOURCES": str(sources),
            "WIKI_USER": "bot@acme.test",
            "WIKI_TOKEN": "api-token",
        }
        first = await kb("index", "--source", "wiki", env=env)
        assert first["documents_added"] == 4, first

        answer = await kb("ask", "When are production deploys frozen?", env=env)
        page_url = f"{fake.base_url}/spaces/ENG/pages/4242/Deploy+freeze"
        assert any(
            "frozen from Friday 15:00" in q and url == page_url for q, url in quoted(answer).items()
        ), answer

        fake.requests.clear()
        quiet = await kb("index", "--source", "wiki", env=env)
        assert quiet["chunks_embedded"] == 0 and quiet["documents_unchanged"] == 4, quiet
        assert len(fake.requests) <= 3, fake.requests  # the change search, the id listing

        fake.pages["4242"].restricted_to = ["release-managers"]
        restricted = await kb("index", "--source", "wiki", env=env)
        assert restricted["documents_deleted"] == 1, restricted
        answer = await kb("ask", "When are production deploys frozen?", env=env)
        assert not any("frozen from Friday" in q for q in quoted(answer)), answer

        expired = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "bot", "index", "--source", "wiki"],
            env={**os.environ, "PYTHONPATH": str(REPO), **env, "WIKI_TOKEN": "old-token"},
            capture_output=True,
            text=True,
            timeout=300,
            cwd=REPO,
        )
        assert "WIKI_TOKEN" in expired.stdout + expired.stderr
        assert "old-token" not in expired.stdout + expired.stderr
        assert "Traceback" not in expired.stderr


async def test_drive_sync_ask_and_quiet_sync(database_url: str, tmp_path: Path) -> None:
    fake = FakeDrive()
    guide = (
        "<html><head><title>Laptop policy</title></head><body><h1>Laptops</h1>"
        "<p>New starters collect their laptop from the IT desk on the second floor.</p>"
        "</body></html>"
    )
    fake.put(File("doc-1", "Laptop policy", DOC, ["team-folder"], guide.encode()))
    for number, (title, text) in enumerate(FILLER):
        fake.put(File(f"doc-{number + 2}", title, DOC, ["team-folder"], f"<p>{text}</p>".encode()))
    async with running_drive(fake):
        sources = tmp_path / "sources.toml"
        sources.write_text(
            '[[source]]\nname = "drive"\nkind = "google_drive"\n[source.settings]\n'
            'credentials_env = "DRIVE_TOKEN"\nfolders = ["team-folder"]\n'
            f'api_endpoint = "{fake.endpoint}"\n'
        )
        env = {
            "DATABASE_URL": database_url,
            "KB_HOME": str(tmp_path / "home"),
            "KB_SOURCES": str(sources),
            "DRIVE_TOKEN": fake.token,
        }
        first = await kb("index", "--source", "drive", env=env)
        assert first["documents_added"] == 4, first
        answer = await kb("ask", "Where do new starters collect their laptop?", env=env)
        url = "https://docs.google.com/document/d/doc-1/edit"
        assert any(
            "IT desk on the second floor" in q and u == url for q, u in quoted(answer).items()
        ), (quoted(answer), [c["citation"] for c in answer["claims"]])

        fake.requests.clear()
        quiet = await kb("index", "--source", "drive", env=env)
        assert quiet["chunks_embedded"] == 0 and quiet["documents_unchanged"] == 4, quiet
        assert [path for path, _ in fake.requests] == ["/changes"]

        fake.change("doc-1", limited=True)
        later = await kb("index", "--source", "drive", env=env)
        assert later["documents_deleted"] == 1, later
