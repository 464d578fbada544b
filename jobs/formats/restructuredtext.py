"""reStructuredText files, rendered by docutils to HTML and written out as cleaned text.

The document title (a lone top-level section title, promoted by docutils) is returned
separately; section headings below it become `##` lines. File inclusion and raw
passthrough are disabled: a document must not pull in other files or raw HTML.
"""

from __future__ import annotations

import io

from bs4 import BeautifulSoup
from docutils import ApplicationError
from docutils.core import publish_parts
from docutils.utils import SystemMessage
from docutils.writers.html5_polyglot import Writer

from jobs.errors import DocumentError
from jobs.formats import ConvertedDocument
from jobs.formats.html import render_html, resolve_against

_SETTINGS = {
    "report_level": 5,  # problems are left in the text as written, never reported inline
    "halt_level": 5,
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "syntax_highlight": "none",
    "embed_stylesheet": False,
    "input_encoding": "unicode",
    "output_encoding": "unicode",
}


def convert_restructuredtext(raw: str, *, page_url: str | None) -> ConvertedDocument:
    """Convert an rst document; relative links are resolved against `page_url`."""
    settings = {**_SETTINGS, "warning_stream": io.StringIO()}
    try:
        parts = publish_parts(source=raw, writer=Writer(), settings_overrides=settings)
    except (SystemMessage, ApplicationError) as error:
        raise DocumentError(f"could not parse reStructuredText: {error}") from error
    title = _plain(parts["title"])
    html = parts["docinfo"] + parts["body"]
    text = render_html(
        BeautifulSoup(html, "lxml"), resolve_link=lambda href: resolve_against(href, page_url)
    )
    subtitle = _plain(parts["subtitle"])
    return ConvertedDocument(
        title=title, text=text, metadata={"subtitle": subtitle} if subtitle else {}
    )


def _plain(html: str) -> str:
    return " ".join(BeautifulSoup(html, "lxml").get_text().split()) if html else ""
