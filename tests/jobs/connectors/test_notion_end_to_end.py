"""Notion end to end as a user runs it: a sources.toml naming the token's variable,
`kb index`, then `kb ask` quoting the page with its real Notion URL."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from tests.jobs.connectors.fake_notion import TOKEN, FakeNotion, block, running

ROOT = Path(__file__).resolve().parents[3]


async def kb(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    """`kb` in a child process, awaited, so this loop keeps serving the fake meanwhile."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", *args,
        env={**os.environ, **env}, cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), timeout=400)
    return process.returncode or 0, out.decode(), err.decode()


async def test_kb_ask_quotes_a_synced_notion_page_with_its_real_url(
    database_url: str, tmp_path: Path
) -> None:
    fake = FakeNotion()
    engineering = fake.add_page(
        "Engineering", [block("paragraph", "Engineering owns the release train.")]
    )
    deploys = fake.add_page(
        "Deploys",
        [block("heading_2", "Schedule"),
         block("paragraph", "Production deploys happen every Tuesday after the release review.")],
        parent=engineering,
    )  # fmt: skip
    fake.add_page("Lunch", [block("paragraph", "The cafeteria serves soup on Fridays.")])
    async with running(fake) as base_url:
        sources = tmp_path / "sources.toml"
        sources.write_text(
            f'[[source]]\nname = "notion"\nkind = "notion"\ncollection = "notion"\n'
            f'[source.settings]\ntoken_env = "TEAM_NOTION"\nbase_url = "{base_url}"\n'
        )
        env = {
            "DATABASE_URL": database_url,
            "KB_HOME": str(tmp_path / "home"),
            "KB_SOURCES": str(sources),
            "TEAM_NOTION": TOKEN,
        }
        code, out, err = await kb("index", "--json", env=env)
        assert code == 0, err
        assert TOKEN not in out + err

        code, out, err = await kb("ask", "When do production deploys happen?", "--json", env=env)
    assert code == 0, err
    answer = json.loads(out)
    assert answer["claims"], answer
    citation = answer["claims"][0]["citation"]
    assert citation["title"] == "Deploys"
    assert citation["url"] == fake.page_object(fake.pages[deploys])["url"]
    assert "every Tuesday" in answer["claims"][0]["quote"]


async def test_kb_sources_check_online_signs_in_and_says_what_it_sees(tmp_path: Path) -> None:
    fake = FakeNotion()
    fake.add_page("Engineering", [block("paragraph", "Engineering owns the release train.")])
    async with running(fake) as base_url:
        sources = tmp_path / "sources.toml"
        sources.write_text(
            f'[[source]]\nname = "notion"\nkind = "notion"\n'
            f'[source.settings]\ntoken_env = "TEAM_NOTION"\nbase_url = "{base_url}"\n'
        )
        env = {"KB_HOME": str(tmp_path / "home"), "KB_SOURCES": str(sources)}
        code, out, err = await kb(
            "sources", "--check", "--online", env={**env, "TEAM_NOTION": TOKEN}
        )
        assert code == 0, err
        assert "notion: ok, 1 document(s) visible, e.g. 'Engineering'" in out

        code, out, err = await kb("sources", "--check", "--online", env={**env, "TEAM_NOTION": ""})
    assert code == 1
    assert "notion: FAILED: source 'notion': the environment variable TEAM_NOTION is not set" in out
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


async def test_kb_ask_about_a_database_quotes_the_database_document(
    database_url: str, tmp_path: Path
) -> None:
    fake = FakeNotion()
    engineering = fake.add_page(
        "Engineering", [block("paragraph", "Engineering owns the release train.")]
    )
    database = fake.add_database(
        "Projects", parent=engineering,
        description="The Projects database lists every project the platform team runs.",
        schema={"Status": "status"},
    )  # fmt: skip
    for name, status in [("Billing revamp", "In progress"), ("Status page", "Blocked")]:
        fake.add_page(name, [], database=database, properties={
            "Status": {"id": "p0", "type": "status", "status": {"name": status}},
        })  # fmt: skip
    async with running(fake) as base_url:
        sources = tmp_path / "sources.toml"
        sources.write_text(
            f'[[source]]\nname = "notion"\nkind = "notion"\ncollection = "notion"\n'
            f'[source.settings]\ntoken_env = "TEAM_NOTION"\nbase_url = "{base_url}"\n'
        )
        env = {
            "DATABASE_URL": database_url,
            "KB_HOME": str(tmp_path / "home"),
            "KB_SOURCES": str(sources),
            "TEAM_NOTION": TOKEN,
        }
        code, out, err = await kb("index", "--json", env=env)
        assert code == 0, err
        code, out, err = await kb("ask", "What is in the Projects database?", "--json", env=env)
    assert code == 0, err
    answer = json.loads(out)
    assert answer["claims"], answer
    citation = answer["claims"][0]["citation"]
    assert citation["title"] == "Projects"
    assert citation["url"] == f"https://www.notion.so/{database.replace('-', '')}"
