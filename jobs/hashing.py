"""Content, metadata and chunk hashes: what decides whether anything must be re-embedded."""

from __future__ import annotations

import hashlib
import json
from typing import Any

# Bump when chunking changes, so every document is re-chunked on the next pass.
CHUNKING_VERSION = "chunking-2"


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_hash(text: str) -> str:
    """Hash of the cleaned text that gets chunked and embedded."""
    return _sha256(f"{CHUNKING_VERSION}\n{text}")


def metadata_hash(
    *, title: str, url: str | None, metadata: dict[str, Any], collection: str | None = None
) -> str:
    """Hash of everything shown or filtered on but never embedded.

    A document's own collection counts only when it has one, so the hashes of documents
    without (every document indexed before connectors) stay what they were.
    """
    fields: dict[str, Any] = {"title": title, "url": url, "metadata": metadata}
    if collection is not None:
        fields["collection"] = collection
    return _sha256(json.dumps(fields, sort_keys=True, default=str))


def chunk_hash(embedding_text: str) -> str:
    """Hash of exactly what is sent to the embedding model for one chunk."""
    return _sha256(embedding_text)
