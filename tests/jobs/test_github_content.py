"""Repository files → cleaned text, and the path globs that pick them."""

from __future__ import annotations

import json

import pytest

from jobs.errors import DocumentError
from jobs.github.content import convert_repository_file
from jobs.github.paths import wanted

PAGE = "https://github.example.com/acme/handbook/blob/main/docs/x"


def test_a_notebook_reads_as_its_markdown_and_fenced_code_without_outputs() -> None:
    notebook = {
        "nbformat": 4,
        "metadata": {"language_info": {"name": "python"}},
        "cells": [
            {"cell_type": "markdown", "source": ["# Loading data\n", "Read the **CSV** first."]},
            {"cell_type": "code", "source": "df = load()\n", "outputs": [{"text": "SECRET"}]},
            {"cell_type": "raw", "source": "ignored"},
        ],
    }
    converted = convert_repository_file(
        "nb/intro.ipynb", json.dumps(notebook).encode(), page_url=PAGE
    )
    assert converted.title == "Loading data"
    assert converted.text == "# Loading data\n\nRead the CSV first.\n\n```python\ndf = load()\n```"


def test_markdown_rst_and_text_use_the_directory_sources_converters() -> None:
    md = convert_repository_file("README.md", b"# Setup\n\nSee [faq](faq.md).\n", page_url=PAGE)
    assert md.title == "Setup"
    assert "[faq](https://github.example.com/acme/handbook/blob/main/docs/faq.md)" in md.text
    rst = convert_repository_file("a.rst", b"Deploys\n=======\n\nRun it.\n", page_url=PAGE)
    assert (rst.title, rst.text) == ("Deploys", "Run it.")
    txt = convert_repository_file("notes.txt", b"plain words\n", page_url=PAGE)
    assert (txt.title, txt.text) == ("", "plain words")


@pytest.mark.parametrize(
    ("path", "data", "reason"),
    [
        ("bad.ipynb", b"{not json", "invalid JSON"),
        ("old.ipynb", b'{"worksheets": []}', "no 'cells' list"),
        ("logo.png", b"\x89PNG", "not a document format"),
        ("bin.txt", b"\x00\x01\x02", "binary"),
    ],
)
def test_a_file_that_cannot_be_read_is_one_clear_reason(
    path: str, data: bytes, reason: str
) -> None:
    with pytest.raises(DocumentError, match=reason):
        convert_repository_file(path, data, page_url=PAGE)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("README.md", True),  # ** spans zero folders
        ("docs/deep/guide.rst", True),
        ("src/app.py", False),
        ("node_modules/pkg/README.md", False),
        ("web/node_modules/pkg/README.md", False),
        (".github/PULL_REQUEST_TEMPLATE.md", False),
    ],
)
def test_doc_globs_span_folders_with_double_star_only(path: str, expected: bool) -> None:
    include = ["**/*.md", "**/*.rst"]
    exclude = ["**/node_modules/**", ".github/**"]
    assert wanted(path, include=include, exclude=exclude) is expected
    assert not wanted("docs/guide.md", include=["*.md"], exclude=[])  # * stays in one folder
