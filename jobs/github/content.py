"""A repository file's bytes → cleaned text, by its extension; notebooks read as text.

The converters are the directory source's (jobs/formats/), given the file's GitHub page
as the URL relative links resolve against. A notebook (`.ipynb`, JSON) keeps its
Markdown cells as Markdown and its code cells as fenced code; outputs are left out
(they are results, often images or huge tables, not documentation).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jobs.errors import DocumentError
from jobs.file_conversion import decode_text
from jobs.formats import ConvertedDocument
from jobs.formats.markdown import convert_markdown
from jobs.formats.plaintext import convert_plaintext, tidy_text
from jobs.formats.restructuredtext import convert_restructuredtext

MARKDOWN = (".md", ".markdown", ".mdx")
RESTRUCTURED = (".rst",)
PLAIN = (".txt",)
NOTEBOOK = (".ipynb",)
SUPPORTED = MARKDOWN + RESTRUCTURED + PLAIN + NOTEBOOK


def convert_repository_file(path: str, data: bytes, *, page_url: str) -> ConvertedDocument:
    """The cleaned text of one file; DocumentError (one line) when it cannot be read."""
    suffix = "." + path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    if suffix not in SUPPORTED:
        raise DocumentError(f"{suffix or 'a file without extension'} is not a document format")
    raw = decode_text(data)
    if suffix in MARKDOWN:
        return convert_markdown(raw, page_url=page_url, site_root=None, aliases={})
    if suffix in RESTRUCTURED:
        return convert_restructuredtext(raw, page_url=page_url)
    if suffix in NOTEBOOK:
        return convert_notebook(raw, page_url=page_url)
    return convert_plaintext(raw)


def convert_notebook(raw: str, *, page_url: str) -> ConvertedDocument:
    """A Jupyter notebook (nbformat 4) as text: Markdown cells, then code as fenced blocks."""
    try:
        notebook = json.loads(raw)
    except json.JSONDecodeError as error:
        raise DocumentError(f"not a notebook: invalid JSON at line {error.lineno}") from error
    cells = notebook.get("cells") if isinstance(notebook, Mapping) else None
    if not isinstance(cells, list):
        raise DocumentError("not a notebook: no 'cells' list (nbformat 4 is read)")
    language = _language(notebook)
    blocks = []
    for cell in cells:
        if not isinstance(cell, Mapping):
            continue
        source = _cell_source(cell.get("source"))
        if not source.strip():
            continue
        if cell.get("cell_type") == "markdown":
            converted = convert_markdown(source, page_url=page_url, site_root=None, aliases={})
            blocks.append(converted.text)
        elif cell.get("cell_type") == "code":
            blocks.append(f"```{language}\n{source.strip(chr(10))}\n```")
    text = tidy_text("\n\n".join(blocks))
    title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), "")
    return ConvertedDocument(title=title, text=text)


def _cell_source(source: Any) -> str:
    # nbformat stores a cell's source as one string or as a list of lines.
    if isinstance(source, str):
        return source
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return ""


def _language(notebook: Mapping[str, Any]) -> str:
    metadata = notebook.get("metadata")
    info = metadata.get("language_info") if isinstance(metadata, Mapping) else None
    name = info.get("name") if isinstance(info, Mapping) else None
    return name if isinstance(name, str) and name.isidentifier() else ""
