"""The google_drive source kind through google-api-python-client, against a fake of Drive v3."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from typing import Any

import docx
import pytest

from jobs.config import source_config
from jobs.connectors.base import ConnectorContext
from jobs.connectors.errors import CredentialRejectedError
from jobs.connectors.google_drive import DOCX, GoogleDriveSource
from jobs.connectors.retry import RetryPolicy
from tests.jobs.conftest import write_minimal_pdf
from tests.jobs.connectors.fake_drive import (
    DOC,
    FOLDER,
    SHEET,
    FakeDrive,
    Fault,
    File,
    running_drive,
)
from tests.jobs.connectors.sync_helpers import MemoryStore

ENV = {"DRIVE_CREDENTIALS": "ya29.drive-token"}
FAST = RetryPolicy(attempts=3, base_delay=0.0, max_delay=0.0, max_retry_after=0.05)
GUIDE = (
    "<html><head><title>Onboarding guide</title></head><body>"
    "<h1>First week</h1><p>Collect your laptop from IT on Monday.</p></body></html>"
)


def _docx(text: str) -> bytes:
    document = docx.Document()
    document.add_heading("Leave", level=1)
    document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


@pytest.fixture
async def fake() -> AsyncIterator[FakeDrive]:
    fake = FakeDrive()
    # A shared drive "eng" and a folder tree "hr-root" > "policies".
    fake.put(File("guide", "Onboarding guide", DOC, ["eng"], GUIDE.encode(), drive_id="eng"))
    fake.put(
        File(
            "oncall",
            "On-call.csv",
            SHEET,
            ["eng"],
            b"Week,Who\r\n1,Ada\r\n2,Lin\r\n",
            drive_id="eng",
        )
    )
    fake.put(File("policies", "Policies", FOLDER, ["hr-root"]))
    fake.put(File("leave", "Leave.docx", DOCX, ["policies"], _docx("Twenty-five days a year.")))
    fake.put(
        File(
            "travel",
            "Travel.pdf",
            "application/pdf",
            ["hr-root"],
            write_minimal_pdf(["Book trains."]),
        )
    )
    fake.put(File("salary", "Salaries", DOC, ["hr-root"], b"<p>Pay bands.</p>", limited=True))
    fake.put(File("photo", "team.png", "image/png", ["hr-root"], b"\x89PNG"))
    fake.put(File("other", "Elsewhere", DOC, ["someone-else"], b"<p>Not ours.</p>"))
    async with running_drive(fake):
        yield fake


def drive(
    fake: FakeDrive, store: MemoryStore, env: dict[str, str] | None = None, **settings: Any
) -> GoogleDriveSource:
    entry = {
        "name": "drive",
        "kind": "google_drive",
        "settings": {
            "credentials_env": "DRIVE_CREDENTIALS",
            "shared_drives": ["eng"],
            "folders": ["hr-root"],
            "collections": {"eng": "engineering", "hr-root": "people"},
            "api_endpoint": fake.endpoint,
            **settings,
        },
    }
    context = ConnectorContext(
        stored=store.stored(), cursor=store.cursor, credentials=ENV if env is None else env
    )
    return GoogleDriveSource(
        name="drive", config=source_config(entry), context=context, policy=FAST
    )


async def test_first_sync_lists_drives_and_folder_trees_and_converts_each_type(
    fake: FakeDrive,
) -> None:
    store = MemoryStore()
    source = drive(fake, store, page_size=2)
    run = await store.sync(source)
    assert set(run.changed) == {"guide", "oncall", "leave", "travel"}
    guide = run.changed["guide"]
    assert guide.text == "# First week\n\nCollect your laptop from IT on Monday."
    assert guide.url == "https://docs.google.com/document/d/guide/edit"
    assert guide.collection == "engineering" and guide.metadata["author"] == "Grace Hopper"
    assert run.changed["oncall"].text == "Week | Who\n1 | Ada\n2 | Lin"
    assert run.changed["leave"].text == "# Leave\n\nTwenty-five days a year."
    assert run.changed["leave"].collection == "people"  # below a subfolder of the root
    assert run.changed["travel"].text == "Book trains."
    assert source.skipped_limited == 1  # "Salaries": shared only with specific people
    # The start token is taken before the listing, and the listing is paged.
    assert fake.requests[0][0] == "/changes/startPageToken"
    assert any(q.get("pageToken") for path, q in fake.requests if path == "/files")
    assert run.cursor is not None and run.cursor["token"] == str(len(fake.log) + 1)


async def test_a_quiet_sync_is_one_call_and_reads_nothing(fake: FakeDrive) -> None:
    store = MemoryStore()
    await store.sync(drive(fake, store))
    fake.requests.clear()
    run = await store.sync(drive(fake, store))
    assert not run.changed and not run.gone and run.unchanged == set(store.documents)
    assert [path for path, _ in fake.requests] == ["/changes"]


async def test_the_change_feed_edits_trashes_removes_and_pages(fake: FakeDrive) -> None:
    store = MemoryStore()
    await store.sync(drive(fake, store))
    fake.change("guide", content=GUIDE.replace("Monday", "Tuesday").encode())
    fake.change("travel", trashed=True)
    fake.delete("oncall")
    fake.put(File("new", "Expenses", DOC, ["policies"], b"<p>Claim within 30 days.</p>"))
    fake.requests.clear()
    run = await store.sync(drive(fake, store, page_size=2))
    assert set(run.changed) == {"guide", "new"}
    assert "Tuesday" in run.changed["guide"].text
    assert run.changed["new"].collection == "people"
    assert set(run.gone) == {"travel", "oncall"}
    pages = [q["pageToken"] for path, q in fake.requests if path == "/changes"]
    assert len(pages) == 2  # 4 changes, 2 per page, then newStartPageToken
    assert fake.calls("/files/travel") == 0  # a trashed file is not fetched


async def test_permission_changes_move_files_out_of_their_collection(fake: FakeDrive) -> None:
    store = MemoryStore()
    await store.sync(drive(fake, store))
    fake.change("leave", limited=True)  # now only specific people can open it
    fake.change("guide", parents=["hr-root"], drive_id=None)  # moved from eng to HR
    fake.change("travel", parents=["someone-else"])  # moved out of everything synced
    run = await store.sync(drive(fake, store))
    assert set(run.gone) == {"leave", "travel"}
    assert run.changed["guide"].collection == "people"
    assert set(store.documents) == {"guide", "oncall"}


async def test_429_with_retry_after_then_success(fake: FakeDrive) -> None:
    fake.fail("/files/guide/export", Fault(429, {"Retry-After": "0"}, times=2))
    store = MemoryStore()
    source = drive(fake, store)
    run = await store.sync(source)
    assert "guide" in run.changed and source.api.retries == 2


async def test_a_500_on_one_file_fails_it_alone_and_it_is_read_again(fake: FakeDrive) -> None:
    fake.fail("/files/leave", Fault(500, times=3))
    store = MemoryStore()
    run = await store.sync(drive(fake, store))
    assert set(run.failed) == {"leave"} and "'Leave.docx'" in run.failed["leave"].reason
    assert len(run.changed) == 3
    assert run.cursor is not None and run.cursor["retry"] == ["leave"]
    again = await store.sync(drive(fake, store))
    assert set(again.changed) == {"leave"}


async def test_an_expired_token_fails_the_run_naming_the_variable(fake: FakeDrive) -> None:
    store = MemoryStore()
    with pytest.raises(CredentialRejectedError) as failure:
        await store.sync(drive(fake, store, {"DRIVE_CREDENTIALS": "ya29.expired"}))
    message = str(failure.value)
    assert "DRIVE_CREDENTIALS" in message and "ya29.expired" not in message
    assert "\n" not in message


async def test_an_unknown_page_token_fails_the_run_with_one_line(fake: FakeDrive) -> None:
    store = MemoryStore(cursor={"token": "999999", "folders": {}, "retry": []})
    with pytest.raises(Exception) as failure:
        await store.sync(drive(fake, store))
    assert "HTTP 400" in str(failure.value) and "\n" not in str(failure.value)


async def test_limited_access_files_are_read_when_asked(fake: FakeDrive) -> None:
    store = MemoryStore()
    run = await store.sync(drive(fake, store, include_limited_access=True))
    assert "salary" in run.changed


async def test_the_online_check_lists_each_unit_once(fake: FakeDrive) -> None:
    check = await drive(fake, MemoryStore()).check(titles=2)
    assert check.visible == 5 and len(check.titles) == 2  # top level: the folder is not a file
    assert fake.calls("/files") == 2


async def test_a_subfolder_moved_out_of_scope_takes_its_files_out_of_the_index(
    fake: FakeDrive,
) -> None:
    fake.put(File("forms", "Forms", FOLDER, ["policies"]))
    fake.put(File("claim", "Claim form", DOC, ["forms"], b"<p>Claim by Friday.</p>"))
    store = MemoryStore()
    await store.sync(drive(fake, store))
    assert {"leave", "claim"} <= set(store.documents)
    # Only the folder is in the change feed: its file and sub-subfolder keep their parents.
    fake.change("policies", parents=["someone-else"])
    run = await store.sync(drive(fake, store))
    assert set(run.gone) == {"leave", "claim"}
    assert not {"leave", "claim"} & set(store.documents)
    assert run.cursor is not None and not {"policies", "forms"} & set(run.cursor["folders"])
    # Later edits below the moved folder stay out.
    fake.change("claim", content=b"<p>Claim by Monday.</p>")
    again = await store.sync(drive(fake, store))
    assert "claim" not in again.changed and "claim" not in store.documents


async def test_a_subfolder_moved_between_folders_moves_its_files_collection(
    fake: FakeDrive,
) -> None:
    fake.put(File("forms", "Forms", FOLDER, ["policies"]))
    fake.put(File("claim", "Claim form", DOC, ["forms"], b"<p>Claim by Friday.</p>"))
    store = MemoryStore()
    settings: dict[str, Any] = {
        "folders": ["hr-root", "ops-root"],
        "collections": {"eng": "engineering", "hr-root": "people", "ops-root": "ops"},
    }
    await store.sync(drive(fake, store, **settings))
    assert store.documents["claim"].collection == "people"
    fake.change("policies", parents=["ops-root"])
    run = await store.sync(drive(fake, store, **settings))
    assert {uri: doc.collection for uri, doc in run.changed.items()} == {
        "leave": "ops",
        "claim": "ops",
    }


async def test_a_folder_moved_into_scope_brings_its_files_in(fake: FakeDrive) -> None:
    fake.put(File("archive", "Archive", FOLDER, ["someone-else"]))
    fake.put(File("old", "Old policy", DOC, ["archive"], b"<p>Retired in 2020.</p>"))
    store = MemoryStore()
    await store.sync(drive(fake, store))
    assert "old" not in store.documents
    fake.change("archive", parents=["hr-root"])
    run = await store.sync(drive(fake, store))
    assert set(run.changed) == {"old"} and run.changed["old"].collection == "people"


async def test_a_shared_drive_s_files_are_read_side_by_side(fake: FakeDrive) -> None:
    for n in range(6):
        fake.put(File(f"doc{n}", f"Doc {n}", DOC, ["eng"], b"<p>Text.</p>", drive_id="eng"))
    fake.together = 3
    store = MemoryStore()
    run = await store.sync(drive(fake, store, folders=[], concurrency=4))
    assert len(run.changed) == 8  # the six, the guide and the on-call sheet
    assert fake.most_in_flight >= 3


async def test_a_big_folder_is_read_while_it_is_still_being_listed(fake: FakeDrive) -> None:
    for n in range(30):
        fake.put(File(f"memo{n:02d}", f"Memo {n}", DOC, ["hr-root"], b"<p>Memo.</p>"))
    source = drive(fake, MemoryStore(), shared_drives=[], concurrency=1, page_size=5)

    def listed_pages() -> int:  # answers of the listing of the folder's children
        return sum(1 for path, q in fake.requests if path == "/files" and "'hr-root'" in q["q"])

    before_first_document = None
    async for item in source.documents():
        if before_first_document is None and item.uri.startswith("memo"):
            before_first_document = listed_pages()
    assert listed_pages() == 7  # 35 children (30 memos, 4 files, a folder), 5 per page
    # The first memos were read (and handed to the writer) after the first listing page,
    # not after the whole folder was listed: memory stays bounded by a batch.
    assert before_first_document == 1
