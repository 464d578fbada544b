"""The plain text, reStructuredText, HTML and PDF converters."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from jobs.errors import DocumentError
from jobs.formats.html import convert_html
from jobs.formats.pdf import convert_pdf
from jobs.formats.plaintext import convert_plaintext, tidy_text
from jobs.formats.restructuredtext import convert_restructuredtext


def test_tidy_text_normalises_whitespace_and_unicode() -> None:
    text = tidy_text("\ufeff\n\nCafe\u0301  \r\nnext\t\r\n\n\n\n\x0cend\x00 \n\n")

    assert text == "Caf\u00e9\nnext\n\nend"


def test_plain_text_is_kept_as_written() -> None:
    converted = convert_plaintext("# Not really a heading\n  indented line\n")

    assert (converted.title, converted.text) == ("", "# Not really a heading\n  indented line")


def test_html_drops_scripts_styles_and_navigation() -> None:
    converted = convert_html(
        "<html><head><title>T</title><script>x()</script></head><body>"
        "<nav><a href='/'>Home</a></nav><style>.a{}</style><noscript>Enable JS</noscript>"
        "<p>Kept <!-- a comment -->text.</p></body></html>",
        page_url=None,
    )

    assert converted.text == "Kept text."


def test_html_headings_lists_and_tables_follow_the_text_convention() -> None:
    converted = convert_html(
        "<h1>Guide</h1><h3>Step <em>one</em></h3>"
        "<ul><li>First<ul><li>nested</li></ul></li><li><p>Second</p></li></ul>"
        "<ol start='3'><li>three</li><li>four</li></ol>"
        "<table><thead><tr><th>Name</th><th>Days</th></tr></thead>"
        "<tbody><tr><td>Annual</td><td>13<br>per year</td></tr></tbody></table>",
        page_url=None,
    )

    assert converted.text == (
        "# Guide\n\n### Step one\n\n"
        "- First\n  - nested\n- Second\n\n"
        "3. three\n4. four\n\n"
        "Name | Days\nAnnual | 13 per year"
    )


def test_html_details_become_the_summary_then_the_body() -> None:
    converted = convert_html(
        "<details><summary>More info</summary><p>Hidden <b>body</b>.</p></details>",
        page_url=None,
    )

    assert converted.text == "More info\n\nHidden body."


def test_html_links_become_absolute_markdown_links() -> None:
    converted = convert_html(
        '<p><a href="../leave/">Leave</a>, <a href="mailto:hr@gsa.gov">hr@gsa.gov</a>, '
        '<a href="mailto:hr@gsa.gov">HR</a>, <a href="javascript:go()">Go</a>, '
        '<a href="https://x.gov/a b">X</a><br>next</p>',
        page_url="https://example.gov/docs/travel/",
    )

    assert converted.text == (
        "[Leave](https://example.gov/docs/leave/), hr@gsa.gov, [HR](mailto:hr@gsa.gov), Go, "
        "[X](https://x.gov/a%20b)\nnext"
    )


def test_html_title_falls_back_to_the_first_h1() -> None:
    assert (
        convert_html("<body><h1>Travel  guide</h1></body>", page_url=None).title == "Travel guide"
    )


def test_rst_promotes_the_document_title_and_keeps_sections_as_headings() -> None:
    converted = convert_restructuredtext(
        "========\nBenefits\n========\n\n"
        "See `the portal <https://benefits.gov>`_ or email hr@gsa.gov.\n\n"
        "Health\n======\n\n* Dental\n* Vision\n",
        page_url=None,
    )

    assert converted.title == "Benefits"
    assert converted.text == (
        "See [the portal](https://benefits.gov) or email hr@gsa.gov.\n\n"
        "## Health\n\n- Dental\n- Vision"
    )


def test_rst_never_includes_other_files_or_raw_html() -> None:
    converted = convert_restructuredtext(
        "Intro.\n\n.. include:: /etc/passwd\n\n.. raw:: html\n\n   <script>x()</script>\n",
        page_url=None,
    )

    assert converted.text == "Intro."


def test_pdf_text_and_title_are_extracted(minimal_pdf: Callable[..., bytes]) -> None:
    converted = convert_pdf(minimal_pdf(["Travel policy", "Book through Concur."], title="Travel"))

    assert (converted.title, converted.text) == ("Travel", "Travel policy\nBook through Concur.")


def test_a_file_that_is_not_a_pdf_fails_with_a_reason() -> None:
    with pytest.raises(DocumentError, match=r"^could not read PDF: "):
        convert_pdf(b"this is not a PDF at all")


def test_rst_reads_no_file_and_no_url_whatever_the_directive() -> None:
    converted = convert_restructuredtext(
        "Intro.\n\n"
        ".. include:: /etc/passwd\n\n"
        ".. raw:: html\n   :file: /etc/passwd\n\n"
        ".. raw:: html\n   :url: http://127.0.0.1:9/secret\n\n"
        ".. csv-table:: Users\n   :file: /etc/passwd\n\n"
        ".. literalinclude:: /etc/passwd\n\n"
        "Outro.\n",
        page_url=None,
    )

    assert "root:" not in converted.text
    assert "secret" not in converted.text
    assert converted.text.startswith("Intro.")
    assert converted.text.endswith("Outro.")


def test_a_malformed_link_keeps_its_text_and_drops_the_address() -> None:
    converted = convert_html(
        '<p>See <a href="http://[x">the broken link</a> and <base href="//[">.</p>',
        page_url="https://example.gov/",
    )

    assert converted.text == "See the broken link and ."
