"""The notion source through notion-client against a strict local fake (fake_notion.py),
indexed by the real reindex into a real Postgres."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.sources import check_online
from jobs.config import NotionSettings, NotionSourceConfig
from jobs.indexing import Indexer
from jobs.reindex import ReindexJob
from store.documents import DocumentRepository
from store.index_runs import IndexRunRepository
from store.source_cursors import SourceCursorRepository
from tests.conftest import HashingEmbedder
from tests.jobs.connectors.fake_notion import TOKEN, FakeNotion, block, mention, running, text

LONG = " ".join(f"Sentence {n} of the runbook explains step {n} in plain words." for n in range(80))


@pytest.fixture
def fake() -> FakeNotion:
    fake = FakeNotion()
    engineering = fake.add_page("Engineering", [])
    onboarding = fake.add_page("Onboarding", [])
    fake.set_blocks(engineering, [
        block("heading_1", "How we ship"),
        block("paragraph", "Read ", mention(onboarding, "Onboarding"), " first."),
        block("bulleted_list_item", "Small pull requests"),
        block("numbered_list_item", "Review"),
        block("numbered_list_item", "Merge"),
        block("to_do", "Write the changelog", checked=True),
        (block("toggle", "Why so strict?"), [block("paragraph", "Because outages cost sleep.")]),
        block("callout", "Deploy freezes start on Fridays.", icon={"type": "emoji", "emoji": "🚧"}),
        block("quote", "Ship it when it is boring."),
        block("code", text("make deploy"), language="shell"),
        (block("table", table_width=2, has_column_header=True, has_row_header=False), [
            block("table_row", cells=[[text("Service")], [text("Owner")]]),
            block("table_row", cells=[[text("billing")], [text("Grace")]]),
        ]),
        block("paragraph", LONG),
    ], touch=False)  # fmt: skip
    # Onboarding mentions Engineering back (a cycle of mentions), and holds a synced block
    # copied from its own page (a cycle in the block tree).
    fake.set_blocks(onboarding, [
        block("paragraph", "Welcome! See ", mention(engineering, "Engineering"), "."),
        block("synced_block", synced_from={"type": "block_id", "block_id": onboarding}),
    ], touch=False)  # fmt: skip
    fake.add_page(
        "Deploys", [block("paragraph", "Deploys happen on Tuesdays.")], parent=engineering
    )
    people = fake.add_page("People", [block("paragraph", "Everything about people.")])
    database = fake.add_database("Policies", parent=people)
    fake.add_page(
        "Vacation policy", [block("paragraph", "Take 25 days a year.")], database=database
    )
    fake.ids = {"engineering": engineering, "onboarding": onboarding, "people": people}  # type: ignore[attr-defined]
    return fake


@pytest.fixture
async def base_url(fake: FakeNotion) -> AsyncIterator[str]:
    async with running(fake) as url:
        yield url


def config(base_url: str, fake: FakeNotion, **settings: Any) -> NotionSourceConfig:
    ids = fake.ids  # type: ignore[attr-defined]
    collections = {ids["engineering"].replace("-", ""): "engineering", ids["people"]: "people"}
    return NotionSourceConfig(
        name="notion",
        collection="notion",
        settings=NotionSettings(
            base_url=base_url, max_attempts=2, collections=collections, **settings
        ),
    )


def job(pool: asyncpg.Pool, embedder: HashingEmbedder, token: str = TOKEN) -> ReindexJob:
    documents = DocumentRepository(pool)
    return ReindexJob(
        pool=pool,
        indexer=Indexer(repository=documents, embedder=embedder),
        documents=documents,
        runs=IndexRunRepository(pool),
        base_dir=Path.cwd(),
        credentials={"NOTION_TOKEN": token},
    )


async def documents(pool: asyncpg.Pool) -> dict[str, asyncpg.Record]:
    rows = await pool.fetch(
        """SELECT d.title, d.url, d.text, d.metadata::text AS metadata, d.source_updated_at,
                  coalesce(d.collection, s.collection) AS collection
           FROM documents d JOIN sources s ON s.id = d.source_id"""
    )
    return {r["title"]: r for r in rows}


async def test_a_first_sync_indexes_every_shared_page_as_markdown_with_its_metadata(
    pool: asyncpg.Pool, fake: FakeNotion, base_url: str
) -> None:
    report = (await job(pool, HashingEmbedder("h", 64)).run([config(base_url, fake)])).reports[0]
    assert report.documents_added == 6 and not report.failures  # 5 pages, 1 database
    docs = await documents(pool)
    engineering = docs["Engineering"]
    onboarding = fake.ids["onboarding"].replace("-", "")  # type: ignore[attr-defined]
    expected = [
        "# Engineering", "# How we ship",
        f"Read [Onboarding](https://www.notion.so/{onboarding}) first.",
        "- Small pull requests", "1. Review", "2. Merge", "- [x] Write the changelog",
        "Why so strict?", "Because outages cost sleep.", "> 🚧 Deploy freezes start on Fridays.",
        "> Ship it when it is boring.", "```shell\nmake deploy\n```",
        "| Service | Owner |\n|---|---|\n| billing | Grace |", "[Deploys](https://www.notion.so/",
    ]  # fmt: skip
    for piece in expected:
        assert piece in engineering["text"], piece
    assert engineering["url"].startswith("https://www.notion.so/Engineering-")
    assert '"author": "Ada Lovelace"' in engineering["metadata"]
    assert engineering["source_updated_at"].isoformat() == "2026-01-05T09:01:00+00:00"
    # The permission unit is the root page: child pages and database rows inherit it.
    assert {t: docs[t]["collection"] for t in docs} == {
        "Engineering": "engineering", "Deploys": "engineering", "Onboarding": "notion",
        "People": "people", "Vacation policy": "people", "Policies": "people",
    }  # fmt: skip
    assert "Welcome! See [Engineering]" in docs["Onboarding"]["text"]


async def test_a_quiet_sync_makes_one_call_and_embeds_nothing_and_an_edit_re_embeds_its_chunk(
    pool: asyncpg.Pool, fake: FakeNotion, base_url: str
) -> None:
    embedder = HashingEmbedder("h", 64)
    await job(pool, embedder).run([config(base_url, fake)])
    before, embedded = fake.calls(), embedder.texts_embedded

    quiet = (await job(pool, embedder).run([config(base_url, fake)])).reports[0]
    assert fake.calls() - before == 1  # one search answer, nothing older read
    assert quiet.documents_unchanged == 6 and embedder.texts_embedded == embedded

    engineering = fake.ids["engineering"]  # type: ignore[attr-defined]
    quote = fake.blocks[fake.children[engineering][8]]["quote"]
    quote["rich_text"] = [text("Ship it when it is dull.")]
    fake.pages[engineering].edited = fake.tick()
    edited = (await job(pool, embedder).run([config(base_url, fake)])).reports[0]
    assert edited.documents_updated == 1 and edited.documents_unchanged == 5
    assert 0 < edited.chunks_embedded < edited.chunks_reused  # only the changed chunk(s)


async def test_an_edit_in_the_same_minute_as_the_last_sync_is_not_missed(
    pool: asyncpg.Pool, fake: FakeNotion, base_url: str
) -> None:
    # Notion's last_edited_time is to the minute: the fake's clock is now, and the edit
    # below keeps the page's time, as an edit in the same minute as the sync would.
    fake.clock = datetime.now(UTC).replace(second=0, microsecond=0)
    onboarding = fake.pages[fake.ids["onboarding"]]  # type: ignore[attr-defined]
    onboarding.edited = fake.tick()
    await job(pool, HashingEmbedder("h", 64)).run([config(base_url, fake)])
    fake.set_blocks(onboarding.id, [block("paragraph", "Welcome aboard, edited.")], touch=False)
    report = (await job(pool, HashingEmbedder("h", 64)).run([config(base_url, fake)])).reports[0]
    assert report.documents_updated == 1
    assert "Welcome aboard, edited." in (await documents(pool))["Onboarding"]["text"]


async def test_trashed_and_unshared_pages_go_at_the_next_full_check(
    pool: asyncpg.Pool, fake: FakeNotion, base_url: str
) -> None:
    settings = config(base_url, fake, full_check_every=2)
    embedder = HashingEmbedder("h", 64)
    await job(pool, embedder).run([settings])
    deploys = next(p for p in fake.pages.values() if p.title == "Deploys")
    deploys.in_trash = True
    await job(pool, embedder).run([settings])  # a quick run: search does not show the trash
    assert "Deploys" in await documents(pool)
    report = (await job(pool, embedder).run([settings])).reports[0]
    assert report.documents_deleted == 1 and "Deploys" not in await documents(pool)
    saved = await SourceCursorRepository(pool).get("notion")
    assert saved is not None and saved.cursor["runs_since_full_check"] == 0


async def test_rate_limits_are_waited_out_and_a_broken_page_costs_only_itself(
    pool: asyncpg.Pool, fake: FakeNotion, base_url: str
) -> None:
    fake.rate_limited = 1
    fake.broken.add(fake.ids["people"])  # type: ignore[attr-defined]
    report = (await job(pool, HashingEmbedder("h", 64)).run([config(base_url, fake)])).reports[0]
    assert fake.requests[0] == fake.requests[1] == ("POST", "/v1/search")  # 429, then again
    assert report.documents_added == 5 and report.documents_failed == 1
    (failure,) = report.failures
    assert failure["reason"].startswith("'People': Notion answered HTTP 500")
    (run,) = await IndexRunRepository(pool).latest(limit=1)
    assert run.status == "partial"

    fake.broken.clear()  # fixed on Notion's side, without an edit: asked for again
    report = (await job(pool, HashingEmbedder("h", 64)).run([config(base_url, fake)])).reports[0]
    assert report.documents_added == 1 and "People" in await documents(pool)


async def test_an_expired_token_fails_the_run_naming_the_variable_and_keeps_the_index(
    pool: asyncpg.Pool, fake: FakeNotion, base_url: str
) -> None:
    await job(pool, HashingEmbedder("h", 64)).run([config(base_url, fake)])
    saved = await SourceCursorRepository(pool).get("notion")
    fake.expired = True
    fake.pages[fake.ids["onboarding"]].edited = fake.tick()  # type: ignore[attr-defined]
    outcome = await job(pool, HashingEmbedder("h", 64)).run([config(base_url, fake)])
    reason = outcome.errors["notion"]
    assert "NOTION_TOKEN" in reason and "\n" not in reason and TOKEN not in reason
    assert len(await documents(pool)) == 6
    assert await SourceCursorRepository(pool).get("notion") == saved


async def test_a_huge_page_is_indexed_up_to_the_block_cap_with_a_warning(
    pool: asyncpg.Pool, fake: FakeNotion, base_url: str
) -> None:
    fake.add_page("Huge", [block("paragraph", f"Line {n} of a huge page.") for n in range(450)])
    report = (
        await job(pool, HashingEmbedder("h", 64)).run([config(base_url, fake, max_blocks=300)])
    ).reports[0]
    huge = (await documents(pool))["Huge"]
    assert "Line 299 of" in huge["text"] and "Line 300 of" not in huge["text"]
    assert any("longer than 300 blocks" in w for w in report.warnings)
    blocks_read = [r for r in fake.requests if r[1].endswith("/children")]
    assert len(blocks_read) < 30  # pages of 100, and the cyclic synced block read once


async def test_only_pages_below_the_root_pages_are_indexed_and_a_moved_page_follows(
    pool: asyncpg.Pool, fake: FakeNotion, base_url: str
) -> None:
    ids = fake.ids  # type: ignore[attr-defined]
    settings = config(base_url, fake, root_pages=[ids["engineering"], ids["people"]])
    await job(pool, HashingEmbedder("h", 64)).run([settings])
    docs = await documents(pool)
    assert "Onboarding" not in docs and docs["Deploys"]["collection"] == "engineering"

    deploys = next(p for p in fake.pages.values() if p.title == "Deploys")
    deploys.parent = {"type": "page_id", "page_id": ids["people"]}  # moved to People
    deploys.edited = fake.tick()
    await job(pool, HashingEmbedder("h", 64)).run([settings])
    assert (await documents(pool))["Deploys"]["collection"] == "people"


async def test_the_online_check_prints_one_line_per_source(
    fake: FakeNotion,
    base_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NOTION_TOKEN", TOKEN)
    assert await check_online([config(base_url, fake)], base_dir=Path.cwd()) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("notion: ok, 5 document(s) visible, e.g. 'Vacation policy'")
    monkeypatch.setenv("NOTION_TOKEN", "ntn_wrong")
    assert await check_online([config(base_url, fake)], base_dir=Path.cwd()) == 1
    line = capsys.readouterr().out.strip()
    assert line.startswith(
        "notion: FAILED: source 'notion': Notion refused the credential in NOTION_TOKEN"
    )
    assert "ntn_wrong" not in line


def projects(fake: FakeNotion) -> str:
    """A Projects database under Engineering, with three rows and their properties."""
    database = fake.add_database(
        "Projects",
        parent=fake.ids["engineering"],  # type: ignore[attr-defined]
        description="Every project the platform team runs this year.",
        schema={"Status": "status", "Lead": "rich_text", "Launched": "checkbox"},
    )
    for name, status, lead, launched in [
        ("Billing revamp", "In progress", "Grace Hopper", False),
        ("Search v2", "Done", "Ada Lovelace", True),
        ("Status page", "Blocked", "Lin Chen", False),
    ]:
        fake.add_page(
            name, [], database=database, properties={
                "Status": {"id": "p0", "type": "status", "status": {"name": status}},
                "Lead": {"id": "p1", "type": "rich_text", "rich_text": [text(lead)]},
                "Launched": {"id": "p2", "type": "checkbox", "checkbox": launched},
            },
        )  # fmt: skip
    return database


async def test_a_shared_database_is_a_document_with_its_description_and_rows_table(
    pool: asyncpg.Pool, fake: FakeNotion, base_url: str
) -> None:
    database = projects(fake)
    report = (await job(pool, HashingEmbedder("h", 64)).run([config(base_url, fake)])).reports[0]
    assert not report.failures
    docs = await documents(pool)
    # A row is a page whose text starts with its properties (often all a row holds).
    assert docs["Billing revamp"]["text"].startswith(
        "# Billing revamp\n\nStatus: In progress\nLead: Grace Hopper\nLaunched: no"
    )
    found = docs["Projects"]
    assert found["collection"] == "engineering"  # its database's root page
    assert found["url"] == f"https://www.notion.so/{database.replace('-', '')}"
    assert found["text"].startswith(
        "# Projects\n\nEvery project the platform team runs this year.\n\n"
        "Projects is a database of 3 row(s); columns: Name, Status, Lead, Launched.\n"
    )
    assert "| Name | Status | Lead | Launched |" in found["text"]
    assert "| Billing revamp | In progress | Grace Hopper | no |" in found["text"]
    assert "| Search v2 | Done | Ada Lovelace | yes |" in found["text"]


async def test_a_row_edit_rewrites_its_database_and_a_quiet_sync_queries_no_rows(
    pool: asyncpg.Pool, fake: FakeNotion, base_url: str
) -> None:
    projects(fake)
    embedder = HashingEmbedder("h", 64)
    await job(pool, embedder).run([config(base_url, fake)])
    before = len(fake.requests)
    await job(pool, embedder).run([config(base_url, fake)])
    assert fake.requests[before:] == [("POST", "/v1/search")]  # still one call

    row = next(p for p in fake.pages.values() if p.title == "Status page")
    row.properties["Status"] = {"id": "p0", "type": "status", "status": {"name": "Done"}}
    row.edited = fake.tick()
    report = (await job(pool, embedder).run([config(base_url, fake)])).reports[0]
    assert report.documents_updated == 2  # the row, and its database's table
    assert "| Status page | Done | Lin Chen | no |" in (await documents(pool))["Projects"]["text"]


async def test_a_big_database_is_indexed_up_to_the_row_cap_with_a_warning(
    pool: asyncpg.Pool, fake: FakeNotion, base_url: str
) -> None:
    projects(fake)
    settings = config(base_url, fake, max_database_rows=2)
    report = (await job(pool, HashingEmbedder("h", 64)).run([settings])).reports[0]
    text_ = (await documents(pool))["Projects"]["text"]
    assert (
        "a database of 2+ row(s)" in text_ and text_.count("| no |") + text_.count("| yes |") == 2
    )
    assert any("more than 2 rows" in w for w in report.warnings)


async def test_an_author_is_looked_up_once_for_all_the_pages_they_wrote(
    pool: asyncpg.Pool, fake: FakeNotion, base_url: str
) -> None:
    for n in range(12):  # more than one window of pages read side by side
        fake.add_page(f"Runbook {n}", [block("paragraph", f"Step {n}.")])
    await job(pool, HashingEmbedder("h", 64)).run([config(base_url, fake)])
    assert list(fake.users) == ["Ada Lovelace"]
    assert [path for _, path in fake.requests if path.startswith("/v1/users/")] == [
        f"/v1/users/{fake.users['Ada Lovelace']}"
    ]
