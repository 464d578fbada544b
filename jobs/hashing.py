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


def metadata_hash(*, title: str, url: str | None, metadata: dict[str, Any]) -> str:
    """Hash of everything shown or filtered on but never embedded."""
    payload = json.dumps(
        {"title": title, "url": url, "metadata": metadata}, sort_keys=True, default=str
    )
    return _sha256(payload)


def chunk_hash(embedding_text: str) -> str:
    """Hash of exactly what is sent to the embedding model for one chunk."""
    return _sha256(embedding_text)
