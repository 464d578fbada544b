"""File-format converters: each turns one file's content into cleaned text.

Cleaned text is Markdown-flavoured plain text: headings are lines starting with
`#`..`######` and a space, paragraphs, list items and table rows are separated by
newlines and blocks by a blank line, links are kept as `[text](absolute-url)`, and no
HTML tags remain. The converters are pure functions over a file's content; reading
files and deciding titles and URLs is the job of the sources (`jobs/directory.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Bump when any converter's output changes, so every file is read and converted again
# (the directory source otherwise skips files whose size and modification time are
# unchanged).
CONVERTER_VERSION = "formats-2"


@dataclass(frozen=True, slots=True)
class ConvertedDocument:
    """What a converter makes of one file.

    `title` is empty when the file itself names no title (the source then falls back
    to the file name). `metadata` is JSON-serialisable. `permalink` is the page's own
    URL path when the file declares one (front matter `permalink:`).
    """

    title: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)
    permalink: str | None = None
