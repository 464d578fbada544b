"""Plain text files, and the final tidy-up every converter's output goes through."""

from __future__ import annotations

import re
import unicodedata

from jobs.formats import ConvertedDocument

# Control characters other than tab and newline carry no text (form feeds from PDFs,
# stray NULs); they would only confuse the chunker and the quote check.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_TRAILING_SPACE = re.compile(r"[ \t\u00a0]+$", re.MULTILINE)
_BLANK_RUNS = re.compile(r"\n{3,}")


def tidy_text(text: str) -> str:
    """Normalise text to the cleaned-text convention's whitespace and Unicode rules.

    NFC, `\\n` line ends, no control characters, no trailing spaces, no runs of three
    or more newlines, and no blank lines at either end.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n")
    text = text.replace("\ufeff", "")
    text = unicodedata.normalize("NFC", _CONTROL.sub("", text))
    text = _TRAILING_SPACE.sub("", text)
    return _BLANK_RUNS.sub("\n\n", text).strip("\n")


def convert_plaintext(raw: str) -> ConvertedDocument:
    """Convert a plain text file: the text is kept as written, only tidied.

    A plain text file names no title, so the source falls back to the file name.
    """
    return ConvertedDocument(title="", text=tidy_text(raw))
