"""PDF files: the text layer of every page, read with pypdf.

Only PDFs with a text layer give text; a scanned PDF needs OCR before it can be
indexed. The title comes from the document information (`/Title`) when it is set.
"""

from __future__ import annotations

import io
import zlib

from pypdf import PdfReader
from pypdf.errors import PyPdfError

from jobs.errors import DocumentError
from jobs.formats import ConvertedDocument
from jobs.formats.plaintext import tidy_text

# pypdf reports most damage as PyPdfError, but a broken object table or stream can
# surface as one of these while it walks the file.
_DAMAGED_PDF_ERRORS = (
    PyPdfError, ValueError, KeyError, IndexError, TypeError, AttributeError, zlib.error,
)  # fmt: skip


def convert_pdf(data: bytes) -> ConvertedDocument:
    """Convert a PDF's bytes; raises DocumentError when the file cannot be read."""
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise DocumentError("the PDF is password-protected; save an unprotected copy")
        pages = [page.extract_text() or "" for page in reader.pages]
        title = (reader.metadata.title if reader.metadata else None) or ""
    except _DAMAGED_PDF_ERRORS as error:
        raise DocumentError(f"could not read PDF: {error}") from error
    text = tidy_text("\n\n".join(tidy_text(page) for page in pages))
    return ConvertedDocument(
        title=" ".join(str(title).split()), text=text, metadata={"pages": len(pages)}
    )
