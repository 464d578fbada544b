"""Converters the connectors use: Confluence storage format, .docx, sheets as CSV, Docs as HTML."""

from __future__ import annotations

import io
import time
from pathlib import Path

import docx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jobs.errors import DocumentError
from jobs.formats.confluence import MAX_DEPTH, convert_confluence_storage
from jobs.formats.html import convert_html
from jobs.formats.office import convert_csv_table, convert_docx

SITE = "https://acme.atlassian.net/wiki"
PAGE = f"{SITE}/spaces/ENG/pages/42/Deploys"

# Storage-format examples follow
# https://confluence.atlassian.com/doc/confluence-storage-format-790796544.html
# and the macro pages it links (code block, info/note/warning/tip, panel, task list).
STORAGE = """<h1>Deploys</h1>
<p>Read <ac:link><ri:page ri:content-title="Release Plan" ri:space-key="ENG"/>
<ac:plain-text-link-body><![CDATA[the plan]]></ac:plain-text-link-body></ac:link> first,
then <a href="/wiki/spaces/OPS/overview">the ops space</a>.</p>
<ac:structured-macro ac:name="info" ac:schema-version="1" ac:macro-id="a1">
<ac:parameter ac:name="title">Heads up</ac:parameter>
<ac:rich-text-body><p>Deploys freeze at 15:00 on Fridays.</p></ac:rich-text-body>
</ac:structured-macro>
<ac:structured-macro ac:name="warning"><ac:rich-text-body><p>Never deploy on a holiday.</p>
</ac:rich-text-body></ac:structured-macro>
<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">bash</ac:parameter>
<ac:plain-text-body><![CDATA[make deploy ENV=prod && echo "<done> &amp;"]]></ac:plain-text-body>
</ac:structured-macro>
<ac:structured-macro ac:name="toc"><ac:parameter ac:name="maxLevel">2</ac:parameter>
</ac:structured-macro>
<table><tbody><tr><th>Env</th><th>Owner</th></tr>
<tr><td>prod</td><td><ac:link><ri:user ri:account-id="557058:abc"/></ac:link></td></tr>
</tbody></table>
<ac:task-list><ac:task><ac:task-id>1</ac:task-id><ac:task-status>complete</ac:task-status>
<ac:task-body>Tag the release</ac:task-body></ac:task>
<ac:task><ac:task-id>2</ac:task-id><ac:task-status>incomplete</ac:task-status>
<ac:task-body>Announce it</ac:task-body></ac:task></ac:task-list>
<p><ac:link><ri:attachment ri:filename="run book.pdf"/></ac:link>
<ac:image><ri:attachment ri:filename="diagram.png"/></ac:image></p>
<ac:layout><ac:layout-section ac:type="two_equal"><ac:layout-cell><p>Left cell.</p>
</ac:layout-cell></ac:layout-section></ac:layout>"""


def convert(storage: str, **kwargs: object) -> str:
    return convert_confluence_storage(
        storage,
        base_url=SITE,
        page_url=PAGE,
        page_id="42",
        **kwargs,  # type: ignore[arg-type]
    )


def test_storage_format_becomes_headings_links_panels_code_and_tables() -> None:
    text = convert(STORAGE)
    assert text.startswith("# Deploys\n")
    assert "[the plan](https://acme.atlassian.net/wiki/display/ENG/Release+Plan)" in text
    assert "[the ops space](https://acme.atlassian.net/wiki/spaces/OPS/overview)" in text
    assert "Heads up\n\nDeploys freeze at 15:00 on Fridays." in text
    assert "Warning:\n\nNever deploy on a holiday." in text
    # CDATA is literal: the entity stays as written, the angle brackets too.
    assert '```\nmake deploy ENV=prod && echo "<done> &amp;"\n```' in text
    assert "Env | Owner\nprod | @user" in text
    assert "- [x] Tag the release\n- [ ] Announce it" in text
    assert (
        "[run book.pdf](https://acme.atlassian.net/wiki/download/attachments/42/run%20book.pdf)"
        in text
    )
    assert "Left cell." in text
    for leftover in ("maxLevel", "bash", "diagram.png", "ac:", "ri:", "<"):
        assert leftover not in text.replace('"<done>', "")


def test_xhtml_nested_10000_deep_fails_that_page_with_one_line() -> None:
    deep = "<div>" * 10_000 + "<p>bottom</p>" + "</div>" * 10_000
    started = time.monotonic()
    with pytest.raises(DocumentError) as failure:
        convert(deep)
    assert time.monotonic() - started < 10
    assert "\n" not in str(failure.value)
    assert f"over the {MAX_DEPTH} limit" in str(failure.value)


def test_a_5_mb_page_fails_that_page_with_one_line_and_a_setting_to_raise() -> None:
    huge = "<p>" + "word " * 1_000_000 + "</p>"
    with pytest.raises(DocumentError, match=r"over the 4,000,000 limit \(max_page_chars\)$"):
        convert(huge)


def test_nesting_at_a_realistic_depth_converts() -> None:
    nested = "<div>" * 40 + "<p>deep but fine</p>" + "</div>" * 40
    assert convert(nested) == "deep but fine"


_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40
).filter(lambda s: s.strip())


@settings(max_examples=60, deadline=None)
@given(st.lists(_TEXT, min_size=1, max_size=5), st.sampled_from(["info", "note", "panel", "x"]))
@example(["a & b < c"], "info")
@example(["]]>"], "note")
@example(["<ac:structured-macro"], "x")
def test_any_paragraph_text_survives_inside_any_macro(words: list[str], macro: str) -> None:
    from html import escape

    body = "".join(f"<p>{escape(word)}</p>" for word in words)
    storage = (
        f'<ac:structured-macro ac:name="{macro}"><ac:rich-text-body>{body}'
        "</ac:rich-text-body></ac:structured-macro>"
    )
    text = convert(storage)
    for word in words:
        assert " ".join(word.split()) in " ".join(text.split())


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
@example("<ac:link><ri:page/></ac:link>")
@example("<ac:structured-macro ac:name='code'><ac:plain-text-body><![CDATA[")
@example("<ri:page ri:content-title='x'>" * 3)
@example("<" * 50)
def test_arbitrary_input_converts_or_fails_with_a_document_error(storage: str) -> None:
    try:
        text = convert(storage)
    except DocumentError as error:
        assert "\n" not in str(error)
    else:
        assert "<ac:" not in text and "<ri:" not in text


def _word_document() -> bytes:
    document = docx.Document()
    document.core_properties.title = "Expense policy"
    document.add_heading("Expense policy", level=0)
    document.add_heading("Meals", level=1)
    document.add_paragraph("Meals are covered up to 60 EUR a day.")
    document.add_paragraph("Keep the receipt", style="List Bullet")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "City", "Limit"
    table.cell(1, 0).text, table.cell(1, 1).text = "Paris", "80 EUR"
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_docx_headings_lists_and_tables() -> None:
    converted = convert_docx(_word_document())
    assert converted.title == "Expense policy"
    assert converted.text == (
        "# Expense policy\n\n# Meals\n\nMeals are covered up to 60 EUR a day.\n\n"
        "- Keep the receipt\n\nCity | Limit\nParis | 80 EUR"
    )


@pytest.mark.parametrize("data", [b"not a zip", b"PK\x03\x04broken", b""])
def test_a_damaged_docx_fails_with_one_line(data: bytes) -> None:
    with pytest.raises(DocumentError, match="could not read the Word document") as failure:
        convert_docx(data)
    assert "\n" not in str(failure.value)


def test_the_directory_source_reads_docx(tmp_path: Path) -> None:
    from jobs.file_conversion import FileTask, PageUrls, convert_file

    path = tmp_path / "policy.docx"
    path.write_bytes(_word_document())
    task = FileTask(path, "policy.docx", "docx", PageUrls("none"), max_bytes=10_000_000)
    converted = convert_file(task).document
    assert "Meals are covered up to 60 EUR a day." in converted.text


def test_a_sheet_is_a_capped_table() -> None:
    raw = "Name,Team\r\nAda,Eng\r\n,\r\n" + "".join(f"P{i},Ops\r\n" for i in range(10))
    text = convert_csv_table(raw, max_rows=4)
    assert text.split("\n") == [
        "Name | Team", "Ada | Eng", "P0 | Ops", "P1 | Ops",
        "(8 more rows not indexed; the limit is 4)",
    ]  # fmt: skip


def test_a_google_doc_exported_as_html_keeps_its_headings() -> None:
    # The shape of `files.export(mimeType="text/html")` output: inline styles, classes,
    # real h1/h2 elements (https://developers.google.com/drive/api/guides/ref-export-formats).
    exported = (
        '<html><head><meta content="text/html; charset=UTF-8" http-equiv="content-type">'
        "<style>.c1{font-weight:700}</style><title>Onboarding</title></head>"
        '<body class="c5"><h1 class="c2" id="h.1"><span class="c1">First week</span></h1>'
        '<p class="c3"><span>Get a laptop from </span><span><a href="https://www.google.com/url?q=https://it.example.com/&amp;sa=D">IT</a></span></p>'
        "<h2><span>Accounts</span></h2><p><span>Ask for SSO.</span></p></body></html>"
    )
    converted = convert_html(exported, page_url="https://docs.google.com/document/d/abc/edit")
    assert converted.title == "Onboarding"
    assert converted.text.startswith("# First week\n\nGet a laptop from [IT](")
    assert "## Accounts\n\nAsk for SSO." in converted.text
