"""The confluence source kind through atlassian-python-api, against a local fake of the REST API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from jobs.config import source_config
from jobs.connectors.base import ConnectorContext
from jobs.connectors.confluence import ConfluenceSource
from jobs.connectors.errors import CredentialRejectedError, MissingCredentialError
from jobs.connectors.retry import RetryPolicy
from tests.jobs.conftest import write_minimal_pdf
from tests.jobs.connectors.fake_confluence import (
    Attachment,
    FakeConfluence,
    Fault,
    Page,
    running_confluence,
)
from tests.jobs.connectors.sync_helpers import MemoryStore

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
ENV = {"CONFLUENCE_USER": "bot@acme.test", "CONFLUENCE_TOKEN": "api-token"}
# No real waiting in tests: the retry policy's waits are what is under test elsewhere.
FAST = RetryPolicy(attempts=3, base_delay=0.0, max_delay=0.0, max_retry_after=0.05)


@pytest.fixture
async def fake() -> AsyncIterator[FakeConfluence]:
    fake = FakeConfluence()
    for number in range(1, 8):  # seven pages: more than one API page at limit 5
        fake.add(
            Page(
                str(100 + number),
                "ENG",
                f"Runbook {number}",
                f"<h2>Step {number}</h2><p>Restart service {number} with care.</p>",
                T0 + timedelta(minutes=number),
            )
        )
    fake.add(Page("200", "OPS", "On-call", "<p>Page the on-call engineer.</p>", T0))
    fake.add(Page("300", "HR", "Salaries", "<p>Secret pay bands.</p>", T0))
    async with running_confluence(fake):
        yield fake


def confluence(fake: FakeConfluence, **settings: Any) -> Any:
    entry = {
        "name": "wiki",
        "kind": "confluence",
        "settings": {
            "url": fake.base_url,
            "cloud": True,
            "user_env": "CONFLUENCE_USER",
            "token_env": "CONFLUENCE_TOKEN",
            "spaces": ["ENG", "OPS"],
            "collections": {"ENG": "engineering"},
            **settings,
        },
    }
    return source_config(entry)


def source(
    fake: FakeConfluence,
    store: MemoryStore,
    env: dict[str, str] | None = None,
    **settings: Any,
) -> ConfluenceSource:
    context = ConnectorContext(
        stored=store.stored(), cursor=store.cursor, credentials=ENV if env is None else env
    )
    return ConfluenceSource(
        name="wiki", config=confluence(fake, **settings), context=context, policy=FAST
    )


async def test_first_sync_pages_through_everything_in_scope_with_real_urls(
    fake: FakeConfluence,
) -> None:
    store = MemoryStore()
    run = await store.sync(source(fake, store, page_size=5))
    assert set(run.changed) == {str(100 + n) for n in range(1, 8)} | {"200"}  # not HR
    page = run.changed["103"]
    assert page.title == "Runbook 3"
    assert page.url == f"{fake.base_url}/spaces/ENG/pages/103/Runbook+3"
    assert page.text == "## Step 3\n\nRestart service 3 with care."
    assert page.collection == "engineering" and run.changed["200"].collection == "ops"
    assert page.updated_at == T0 + timedelta(minutes=3)
    assert page.metadata["author"] == "Ada Lovelace"
    searches = [q for path, q in fake.requests if path == "/rest/api/content/search"]
    assert len(searches) == 2  # two pages of results, the second through _links.next
    assert "ORDER BY lastmodified ASC" in searches[0]["cql"]
    assert run.cursor == {
        "modified": (T0 + timedelta(minutes=7)).isoformat(),
        "runs_since_reconcile": 0,
    }


async def test_a_quiet_sync_makes_a_handful_of_calls_and_fetches_no_page(
    fake: FakeConfluence,
) -> None:
    store = MemoryStore()
    await store.sync(source(fake, store))
    fake.requests.clear()
    run = await store.sync(source(fake, store))
    assert not run.changed and not run.gone
    assert run.unchanged == set(store.documents)
    # One search for changes (pages inside the overlap are listed, found unchanged, not
    # fetched) and one id listing for deletions: no page bodies.
    assert [path for path, _ in fake.requests] == ["/rest/api/content/search"] * 2
    assert 'lastmodified >= "' in fake.requests[0][1]["cql"]


async def test_an_edit_is_fetched_alone_and_the_cursor_moves(fake: FakeConfluence) -> None:
    store = MemoryStore()
    await store.sync(source(fake, store, overlap_minutes=0))
    fake.edit("102", "<p>Restart service 2 only after the freeze.</p>", at=T0 + timedelta(hours=2))
    fake.requests.clear()
    run = await store.sync(source(fake, store, overlap_minutes=0))
    assert set(run.changed) == {"102"}
    assert run.changed["102"].text == "Restart service 2 only after the freeze."
    bodies = [path for path, q in fake.requests if "body.storage" in q.get("expand", "")]
    assert bodies == ["/rest/api/content/102"]  # only the edited page's body
    assert run.cursor is not None
    assert run.cursor["modified"] == (T0 + timedelta(hours=2)).isoformat()


async def test_deleted_pages_go_on_the_reconcile_run_only(fake: FakeConfluence) -> None:
    store = MemoryStore()
    await store.sync(source(fake, store, reconcile_every=2))
    del fake.pages["104"]
    first = await store.sync(source(fake, store, reconcile_every=2))
    assert not first.gone and "104" in store.documents  # no id listing this run
    assert sum(1 for path, _ in fake.requests[-1:] if path.endswith("search")) == 1
    second = await store.sync(source(fake, store, reconcile_every=2))
    assert set(second.gone) == {"104"} and "104" not in store.documents


async def test_a_page_restricted_without_an_edit_leaves_its_collection(
    fake: FakeConfluence,
) -> None:
    store = MemoryStore()
    await store.sync(source(fake, store))
    fake.pages["105"].restricted_to = ["ceo"]  # no new version, as in Confluence
    run = await store.sync(source(fake, store))
    assert set(run.gone) == {"105"}
    fake.pages["106"].restricted_to = ["ceo"]
    fake.edit("106", "<p>Now for the CEO.</p>", at=T0 + timedelta(hours=3))
    run = await store.sync(source(fake, store, restricted_collection="leadership"))
    assert run.changed["106"].collection == "leadership"


async def test_a_page_moved_to_another_space_moves_collection(fake: FakeConfluence) -> None:
    store = MemoryStore()
    await store.sync(source(fake, store))
    fake.pages["107"].space = "OPS"
    fake.edit("107", fake.pages["107"].body, at=T0 + timedelta(hours=1))
    run = await store.sync(source(fake, store))
    assert run.changed["107"].collection == "ops"


async def test_429_with_retry_after_is_waited_out(fake: FakeConfluence) -> None:
    fake.fail("/rest/api/content/search", Fault(429, {"Retry-After": "0"}, times=2))
    store = MemoryStore()
    wiki = source(fake, store)
    run = await store.sync(wiki)
    assert len(run.changed) == 8 and wiki.api.retries == 2


async def test_a_500_on_one_page_fails_that_page_only_and_it_is_read_again(
    fake: FakeConfluence,
) -> None:
    fake.fail("/rest/api/content/103", Fault(500, times=3))  # every attempt of this run
    store = MemoryStore()
    run = await store.sync(source(fake, store, overlap_minutes=0))
    assert set(run.failed) == {"103"} and "'Runbook 3'" in run.failed["103"].reason
    assert len(run.changed) == 7
    # The cursor did not pass the failed page, so the next run reads it.
    assert run.cursor is not None
    assert run.cursor["modified"] == (T0 + timedelta(minutes=3)).isoformat()
    again = await store.sync(source(fake, store, overlap_minutes=0))
    assert "103" in again.changed


async def test_an_expired_token_fails_the_run_naming_the_variable(fake: FakeConfluence) -> None:
    store = MemoryStore()
    env = {**ENV, "CONFLUENCE_TOKEN": "expired-token"}
    with pytest.raises(CredentialRejectedError) as failure:
        await store.sync(source(fake, store, env))
    message = str(failure.value)
    assert "CONFLUENCE_TOKEN" in message and "expired-token" not in message
    assert "\n" not in message
    with pytest.raises(MissingCredentialError, match="CONFLUENCE_TOKEN"):
        source(fake, store, {"CONFLUENCE_USER": "bot@acme.test"})


async def test_pdf_attachments_are_documents_of_their_page_collection(
    fake: FakeConfluence,
) -> None:
    fake.pages["101"].attachments = [
        Attachment(
            "att9", "runbook.pdf", "application/pdf", write_minimal_pdf(["Escalate to SRE."]), T0
        ),
        Attachment("att8", "photo.png", "image/png", b"\x89PNG", T0),
        Attachment("att7", "broken.pdf", "application/pdf", b"%PDF-1.4 nothing", T0),
    ]
    store = MemoryStore()
    run = await store.sync(source(fake, store))
    attachment = run.changed["101/attachments/att9"]
    assert attachment.text == "Escalate to SRE." and attachment.collection == "engineering"
    assert attachment.url == f"{fake.base_url}/download/attachments/101/runbook.pdf"
    assert set(run.failed) == {"101/attachments/att7"}
    assert "101/attachments/att8" not in run.changed


async def test_a_hostile_page_fails_alone(fake: FakeConfluence) -> None:
    fake.pages["102"].body = "<div>" * 10_000 + "deep" + "</div>" * 10_000
    fake.pages["103"].body = "<p>" + "x" * 5_000_000 + "</p>"
    store = MemoryStore()
    run = await store.sync(source(fake, store))
    assert set(run.failed) == {"102", "103"}
    assert "nested" in run.failed["102"].reason and "max_page_chars" in run.failed["103"].reason
    assert len(run.changed) == 6


async def test_labels_and_excluded_spaces_narrow_the_cql(fake: FakeConfluence) -> None:
    fake.pages["104"].labels = ["runbook"]
    store = MemoryStore()
    run = await store.sync(
        source(fake, store, spaces=[], exclude_spaces=["HR"], labels=["runbook"])
    )
    assert set(run.changed) == {"104"}
    cql = fake.requests[0][1]["cql"]
    assert 'space not in ("HR")' in cql and 'label in ("runbook")' in cql


async def test_the_online_check_is_one_call(fake: FakeConfluence) -> None:
    check = await source(fake, MemoryStore()).check(titles=2)
    assert check.visible == 8 and check.titles == ("On-call", "Runbook 1")
    assert fake.calls() == 1


async def test_children_of_a_restricted_page_are_left_out_on_the_first_sync(
    fake: FakeConfluence,
) -> None:
    fake.pages["102"].parent = "101"
    fake.pages["103"].parent = "102"  # a grandchild: restricted through 101 too
    fake.pages["101"].restricted_to = ["ceo"]
    store = MemoryStore()
    run = await store.sync(source(fake, store, page_size=5))
    assert not {"101", "102", "103"} & set(run.changed)
    assert {"104", "105", "106", "107", "200"} <= set(run.changed)
    # Every ancestor was in the listing: no page was looked up for its restrictions.
    assert fake.calls("/rest/api/content/101") == 0


async def test_a_child_leaves_when_its_parent_becomes_restricted_without_an_edit(
    fake: FakeConfluence,
) -> None:
    fake.pages["105"].parent = "104"
    fake.pages["106"].parent = "105"
    store = MemoryStore()
    await store.sync(source(fake, store))
    assert {"104", "105", "106"} <= set(store.documents)
    fake.pages["104"].restricted_to = ["ceo"]  # no new version of 104, 105 or 106
    run = await store.sync(source(fake, store))
    assert set(run.gone) == {"104", "105", "106"}
    assert not {"104", "105", "106"} & set(store.documents)


async def test_a_child_of_a_newly_restricted_page_moves_to_the_restricted_collection(
    fake: FakeConfluence,
) -> None:
    fake.pages["105"].parent = "104"
    store = MemoryStore()
    settings: dict[str, Any] = {"restricted_collection": "leadership", "overlap_minutes": 0}
    await store.sync(source(fake, store, **settings))
    assert store.documents["105"].collection == "engineering"
    fake.pages["104"].restricted_to = ["ceo"]
    run = await store.sync(source(fake, store, **settings))  # found by the reconcile pass
    assert run.changed["105"].collection == "leadership"
    assert store.documents["104"].collection == "leadership"


async def test_an_edited_child_of_an_unlisted_restricted_parent_is_left_out(
    fake: FakeConfluence,
) -> None:
    store = MemoryStore()
    await store.sync(source(fake, store, overlap_minutes=0, reconcile_every=50))
    fake.pages["107"].parent = "101"
    fake.pages["101"].restricted_to = ["ceo"]
    fake.edit("107", "<p>Moved under the restricted runbook.</p>", at=T0 + timedelta(hours=1))
    fake.requests.clear()
    run = await store.sync(source(fake, store, overlap_minutes=0, reconcile_every=50))
    assert set(run.gone) == {"107"} and "107" not in store.documents
    # The parent was not in this run's listing: its restrictions were asked for once.
    assert [q["expand"] for path, q in fake.requests if path == "/rest/api/content/101"] == [
        "restrictions.read.restrictions.user,restrictions.read.restrictions.group"
    ]
