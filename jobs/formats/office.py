"""Word documents (.docx, read with python-docx) and spreadsheets exported as CSV.

A .docx becomes cleaned text in document order: paragraphs styled "Title" or
"Heading N" become `#` lines, list-styled paragraphs `- ` items, tables one line per
row with cells joined by " | ". A CSV (a Google Sheet exported with `files.export`)
becomes a table of at most `max_rows` rows, with a last line saying how many were left
out, so one huge sheet cannot crowd out a whole source.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from xml.etree.ElementTree import ParseError

import docx
from docx.opc.exceptions import PackageNotFoundError
from docx.table import Table
from docx.text.paragraph import Paragraph

from jobs.errors import DocumentError
from jobs.formats import ConvertedDocument
from jobs.formats.plaintext import tidy_text

_HEADING = re.compile(r"^heading\s*([1-6])$", re.I)
_SPACES = re.compile(r"\s+")
DEFAULT_MAX_ROWS = 1000
# A broken package surfaces from the zip reader, the XML parser or python-docx itself.
_DAMAGED_DOCX_ERRORS = (
    PackageNotFoundError, zipfile.BadZipFile, ParseError, KeyError, ValueError, AttributeError,
)  # fmt: skip


def convert_docx(data: bytes) -> ConvertedDocument:
    """Convert a .docx file's bytes; DocumentError says why it cannot be read."""
    try:
        document = docx.Document(io.BytesIO(data))
        blocks = [_block(item) for item in document.iter_inner_content()]
        title = (document.core_properties.title or "").strip()
    except _DAMAGED_DOCX_ERRORS as error:
        raise DocumentError(f"could not read the Word document: {error}") from error
    text = tidy_text("\n\n".join(block for block in blocks if block))
    if not title:
        first = next((b for b in blocks if b and b.startswith("# ")), "")
        title = first.removeprefix("# ")
    return ConvertedDocument(title=" ".join(title.split()), text=text)


def _block(item: Paragraph | Table) -> str | None:
    if isinstance(item, Table):
        return _table(item)
    text = _SPACES.sub(" ", item.text).strip()
    if not text:
        return None
    style = (item.style.name if item.style is not None else "") or ""
    if style.lower() == "title":
        return f"# {text}"
    heading = _HEADING.match(style)
    if heading:
        return f"{'#' * int(heading.group(1))} {text}"
    if style.lower().startswith("list"):
        return f"- {text}"
    return text


def _table(table: Table) -> str:
    rows = []
    for row in table.rows:
        cells = [_SPACES.sub(" ", cell.text).strip() for cell in row.cells]
        if any(cells):
            rows.append(" | ".join(cells))
    return "\n".join(rows)


def convert_csv_table(raw: str, *, max_rows: int = DEFAULT_MAX_ROWS) -> str:
    """A CSV as table lines (cells joined by " | "), at most `max_rows` of them."""
    rows: list[str] = []
    left_out = 0
    try:
        for record in csv.reader(io.StringIO(raw)):
            cells = [_SPACES.sub(" ", cell).strip() for cell in record]
            if not any(cells):
                continue
            if len(rows) < max_rows:
                rows.append(" | ".join(cells))
            else:
                left_out += 1
    except csv.Error as error:
        raise DocumentError(f"could not read the sheet as CSV: {error}") from error
    if left_out:
        rows.append(f"({left_out:,} more rows not indexed; the limit is {max_rows:,})")
    return tidy_text("\n".join(rows))
