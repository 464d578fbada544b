"""The directory source: walking a folder, choosing converters, titles, URLs and failures."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest

from jobs.directory import DirectorySource, handbook_source
from jobs.documents import FailedDocument, SourceDocument, SourceItem, UnchangedDocument
from jobs.errors import SourceConfigError
from jobs.indexing import Indexer, IndexReport
from store.documents import DocumentRepository, StoredDocument


def source(root: Path, **options) -> DirectorySource:
    options.setdefault("url_style", "none")
    return DirectorySource(name="docs", root=root, **options)


async def load(directory: DirectorySource) -> dict[str, SourceItem]:
    return {item.uri: item async for item in directory.documents()}


def write(root: Path, relative: str, content: str | bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def reason(item: SourceItem) -> str:
    assert isinstance(item, FailedDocument), item
    return item.reason


def document(item: SourceItem) -> SourceDocument:
    assert isinstance(item, SourceDocument), item
    return item


async def test_every_supported_format_becomes_a_document_with_title_and_text(
    tmp_path: Path, minimal_pdf: Callable[..., bytes]
) -> None:
    write(tmp_path, "guide.md", "---\ntitle: Onboarding guide\n---\n\nGet a **laptop**.\n")
    write(tmp_path, "notes/on-call_rota.txt", "Week 1: Ana\r\nWeek 2: Ben   \n\n\n\nEnd\n")
    write(
        tmp_path,
        "policy.rst",
        "Remote work\n===========\n\nTwo days a week.\n\nScope\n-----\n\nEveryone.\n",
    )
    write(
        tmp_path,
        "page.html",
        "<html><head><title>Expenses</title><style>p{}</style></head>"
        "<body><nav>Home | About</nav><h1>Expenses</h1><p>Claim within 30 days.</p>"
        "<script>track()</script></body></html>",
    )
    write(tmp_path, "report.pdf", minimal_pdf(["Quarterly report", "Revenue grew."], title="Q3"))

    directory = source(tmp_path)
    items = await load(directory)

    assert sorted(items) == [
        "guide.md",
        "notes/on-call_rota.txt",
        "page.html",
        "policy.rst",
        "report.pdf",
    ]
    guide = document(items["guide.md"])
    assert (guide.title, guide.text, guide.metadata["format"]) == (
        "Onboarding guide",
        "# Onboarding guide\n\nGet a laptop.",
        "markdown",
    )
    rota = document(items["notes/on-call_rota.txt"])
    assert (rota.title, rota.text) == (
        "On call rota",
        "# On call rota\n\nWeek 1: Ana\nWeek 2: Ben\n\nEnd",
    )
    policy = document(items["policy.rst"])
    assert (policy.title, policy.text) == (
        "Remote work",
        "# Remote work\n\nTwo days a week.\n\n## Scope\n\nEveryone.",
    )
    page = document(items["page.html"])
    assert (page.title, page.text) == ("Expenses", "# Expenses\n\nClaim within 30 days.")
    report = document(items["report.pdf"])
    assert (report.title, report.text) == ("Q3", "# Q3\n\nQuarterly report\nRevenue grew.")
    assert report.metadata.pop("file_fingerprint").endswith(":" + directory.fingerprint_suffix)
    assert report.metadata == {"path": "report.pdf", "format": "pdf", "pages": 1}


async def test_titles_fall_back_to_the_first_heading_then_the_file_name(
    tmp_path: Path, minimal_pdf: Callable[..., bytes]
) -> None:
    write(tmp_path, "a.md", "Intro.\n\n# Release checklist\n\nShip it.\n")
    write(tmp_path, "b/index.md", "Just text.\n")
    write(tmp_path, "scanned_invoice-2024.pdf", minimal_pdf(["Invoice"]))

    items = await load(source(tmp_path))

    assert document(items["a.md"]).title == "Release checklist"
    assert document(items["b/index.md"]).title == "B"
    assert document(items["scanned_invoice-2024.pdf"]).title == "Scanned invoice 2024"


async def test_updated_at_is_the_file_modification_time_in_utc(tmp_path: Path) -> None:
    path = write(tmp_path, "a.txt", "text")
    os.utime(path, (1_700_000_000, 1_700_000_000))

    item = document((await load(source(tmp_path)))["a.txt"])

    assert item.updated_at == datetime.fromtimestamp(1_700_000_000, tz=UTC)


async def test_url_template_fills_path_and_stem(tmp_path: Path) -> None:
    write(tmp_path, "docs/on call.md", "See [setup](../setup.md).\n")
    directory = source(
        tmp_path,
        url_style="template",
        url_template="https://github.com/org/repo/blob/main/{path}?plain=1#{stem}",
    )

    item = document((await load(directory))["docs/on call.md"])

    assert (
        item.url == "https://github.com/org/repo/blob/main/docs/on%20call.md?plain=1#docs/on%20call"
    )
    assert item.text == "# On call\n\nSee [setup](https://github.com/org/repo/blob/main/setup.md)."


async def test_url_style_none_gives_no_url(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "text\n")

    assert document((await load(source(tmp_path)))["a.md"]).url is None


async def test_include_and_exclude_patterns_choose_the_files(tmp_path: Path) -> None:
    write(tmp_path, "keep/a.md", "a")
    write(tmp_path, "keep/drafts/b.md", "b")
    write(tmp_path, "keep/c.txt", "c")
    write(tmp_path, "other/d.md", "d")

    directory = source(tmp_path, include=("keep/**/*.md",), exclude=("keep/drafts",))

    assert list(await load(directory)) == ["keep/a.md"]


async def test_non_utf8_text_fails_with_the_byte_offset_and_the_walk_continues(
    tmp_path: Path,
) -> None:
    write(tmp_path, "a-latin1.txt", "Caf\u00e9 menu".encode("latin-1"))
    write(tmp_path, "b-good.txt", "fine")

    items = await load(source(tmp_path))

    assert reason(items["a-latin1.txt"]) == "not valid UTF-8 at byte 3; re-save the file as UTF-8"
    assert document(items["b-good.txt"]).text == "# B good\n\nfine"


async def test_empty_files_fail_as_empty(tmp_path: Path) -> None:
    write(tmp_path, "zero.md", "")
    write(tmp_path, "blank.txt", "  \n\n \t\n")
    write(
        tmp_path,
        "only-front-matter.md",
        "---\ntitle: Nothing here\n---\n\n{% include 'x.html' %}\n",
    )

    items = await load(source(tmp_path))

    assert {uri: reason(item) for uri, item in items.items()} == {
        "zero.md": "empty: no text after cleaning",
        "blank.txt": "empty: no text after cleaning",
        "only-front-matter.md": "empty: no text after cleaning",
    }


async def test_a_file_over_max_bytes_fails_before_it_is_read(tmp_path: Path) -> None:
    with (tmp_path / "huge.md").open("wb") as handle:
        handle.truncate(20_000_000)  # sparse: no 20 MB actually written

    items = await load(source(tmp_path))

    assert reason(items["huge.md"]) == "20.0 MB is over the 10.0 MB limit (max_bytes)"


async def test_a_binary_file_named_md_fails_as_binary(tmp_path: Path) -> None:
    write(tmp_path, "logo.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    write(tmp_path, "noise.md", bytes(range(128, 256)) * 40)

    items = await load(source(tmp_path))

    assert reason(items["logo.md"]) == "looks like a binary file, not text"
    assert reason(items["noise.md"]) == "looks like a binary file, not text"


async def test_a_malformed_pdf_fails_with_a_reason(
    tmp_path: Path, minimal_pdf: Callable[..., bytes]
) -> None:
    write(tmp_path, "broken.pdf", b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog")
    write(tmp_path, "truncated.pdf", minimal_pdf(["Hello"])[:150])

    items = await load(source(tmp_path))

    assert reason(items["broken.pdf"]).startswith("could not read PDF: ")
    assert reason(items["truncated.pdf"]).startswith("could not read PDF: ")


async def test_malformed_front_matter_fails_with_a_reason(tmp_path: Path) -> None:
    write(tmp_path, "bad.md", "---\ntitle: [unclosed\n---\n\nBody text.\n")

    failure = reason((await load(source(tmp_path)))["bad.md"])

    assert failure.startswith("front matter is not valid YAML (")
    assert failure.endswith("; fix the block between the --- lines")


async def test_an_unsupported_file_type_fails_with_a_reason(tmp_path: Path) -> None:
    write(tmp_path, "sheet.csv", "a,b\n1,2\n")

    items = await load(source(tmp_path, include=("**/*",)))

    assert reason(items["sheet.csv"]).startswith("unsupported file type '.csv'")


async def test_a_missing_root_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(SourceConfigError, match="is not a folder"):
        await load(source(tmp_path / "missing"))


def test_url_styles_need_their_settings(tmp_path: Path) -> None:
    with pytest.raises(SourceConfigError, match="needs base_url"):
        DirectorySource(name="x", root=tmp_path, url_style="eleventy")
    with pytest.raises(SourceConfigError, match="needs url_template"):
        DirectorySource(name="x", root=tmp_path, url_style="template")
    with pytest.raises(SourceConfigError, match="not valid"):
        DirectorySource(name="x", root=tmp_path, url_style="template", url_template="{nope}")


def test_the_handbook_source_indexes_only_the_pages(handbook_root: Path) -> None:
    handbook = handbook_source(handbook_root)

    assert (handbook.name, handbook.include, handbook.url_style, handbook.base_url) == (
        "handbook",
        ("pages/**/*.md",),
        "eleventy",
        "https://handbook.tts.gsa.gov",
    )


async def _index(directory: DirectorySource, pool: asyncpg.Pool, embedder: object) -> IndexReport:
    return await Indexer(repository=DocumentRepository(pool), embedder=embedder).run(directory)  # type: ignore[arg-type]


async def _stored(pool: asyncpg.Pool, name: str) -> dict[str, StoredDocument]:
    repository = DocumentRepository(pool)
    source_id = await repository.source_id(name)
    assert source_id is not None
    return await repository.documents_of(source_id=source_id)


async def test_an_unchanged_file_is_not_read_again(
    tmp_path: Path, pool: asyncpg.Pool, hashing_embedder: type
) -> None:
    path = write(tmp_path, "a.md", "# Leave\n\nAsk your manager.\n")
    write(tmp_path, "b.md", "# Travel\n\nBook with the agency.\n")
    model = hashing_embedder("h", 16)
    await _index(source(tmp_path), pool, model)
    # Same size and modification time, other bytes: only a reader would notice.
    status = path.stat()
    path.write_text("# Leave\n\nAsk your janitor.\n")
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))

    items = await load(source(tmp_path, previous=await _stored(pool, "docs")))

    assert items == {"a.md": UnchangedDocument("a.md"), "b.md": UnchangedDocument("b.md")}
    path.touch()  # a new modification time: read again
    assert document((await load(source(tmp_path, previous=await _stored(pool, "docs"))))["a.md"])


async def test_a_settings_or_converter_change_reads_every_file_again(
    tmp_path: Path, pool: asyncpg.Pool, hashing_embedder: type
) -> None:
    write(tmp_path, "a.md", '# Leave\n\nAsk in {% slack_channel "leave" %}.\n')
    await _index(source(tmp_path), pool, hashing_embedder("h", 16))
    stored = await _stored(pool, "docs")

    renamed = await load(
        source(tmp_path, previous=stored, slack_workspace_url="https://x.slack.com")
    )

    assert document(renamed["a.md"]).text.endswith("[#leave](https://x.slack.com/channels/leave).")
    stored["a.md"].metadata["file_fingerprint"] += "-older-converter"
    assert isinstance((await load(source(tmp_path, previous=stored)))["a.md"], SourceDocument)


async def test_a_page_whose_link_target_gained_an_alias_is_converted_again(
    tmp_path: Path, pool: asyncpg.Pool, hashing_embedder: type
) -> None:
    site = {"url_style": "eleventy", "base_url": "https://hb.example"}
    write(tmp_path, "pages/a.md", "# A\n\nSee [the old page](/old/).\n")
    b = write(tmp_path, "pages/b.md", "# B\n\nThe new page.\n")
    await _index(source(tmp_path, **site), pool, hashing_embedder("h", 16))
    first = await load(source(tmp_path, previous=await _stored(pool, "docs"), **site))
    assert isinstance(first["pages/a.md"], UnchangedDocument)

    b.write_text("---\nredirect_from: /old/\n---\n# B\n\nThe new page.\n")
    items = await load(source(tmp_path, previous=await _stored(pool, "docs"), **site))

    assert "[the old page](https://hb.example/b/)" in document(items["pages/a.md"]).text


async def test_symlinks_out_of_the_folder_and_loops_are_skipped_with_a_reason(
    tmp_path: Path,
) -> None:
    root = tmp_path / "docs"
    write(root, "real.md", "# Real\n\nInside.\n")
    write(tmp_path, "outside.md", "# Secret\n\nOutside.\n")
    (root / "inside-link.md").symlink_to("real.md")
    (root / "leak.md").symlink_to(tmp_path / "outside.md")
    (root / "loop.md").symlink_to("loop.md")
    (root / "sub").mkdir()
    (root / "sub" / "up").symlink_to("..", target_is_directory=True)

    items = await load(source(root))

    assert sorted(items) == ["inside-link.md", "leak.md", "loop.md", "real.md"]
    assert document(items["inside-link.md"]).text == "# Real\n\nInside."
    assert reason(items["leak.md"]) == "a symlink to a file outside the source folder; skipped"
    assert reason(items["loop.md"]) == "a symlink that loops or leads nowhere; skipped"


async def test_a_file_name_that_is_not_utf8_is_indexed_under_an_encoded_uri(
    tmp_path: Path, pool: asyncpg.Pool, hashing_embedder: type
) -> None:
    with open(os.fsencode(tmp_path) + b"/caf\xe9.txt", "wb") as handle:
        handle.write(b"The cafe opens at eight.\n")

    report = await _index(source(tmp_path), pool, hashing_embedder("h", 16))

    assert report.documents_added == 1
    assert report.warnings == [
        "caf%E9.txt: the file name is not valid UTF-8; indexed as caf%E9.txt"
    ]
    assert await pool.fetchval("SELECT uri FROM documents") == "caf%E9.txt"
