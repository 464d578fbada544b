"""Repository path globs: `**` spans folders, `*` and `?` stay inside one path segment."""

from __future__ import annotations

import re
from collections.abc import Sequence


def _compiled(pattern: str) -> re.Pattern[str]:
    parts = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            parts.append("(?:.*/)?")  # zero or more whole folders
            index += 3
        elif pattern.startswith("**", index):
            parts.append(".*")
            index += 2
        elif pattern[index] == "*":
            parts.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            parts.append("[^/]")
            index += 1
        else:
            parts.append(re.escape(pattern[index]))
            index += 1
    # re.compile keeps its own cache of recent patterns: no second cache here.
    return re.compile("".join(parts) + r"\Z")


def matches(path: str, pattern: str) -> bool:
    return _compiled(pattern).match(path) is not None


def wanted(path: str, *, include: Sequence[str], exclude: Sequence[str]) -> bool:
    """Whether a repository file is a document of the source: included and not excluded."""
    return any(matches(path, p) for p in include) and not any(matches(path, p) for p in exclude)
