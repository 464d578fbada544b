"""Each conversion runs in a worker within a time and memory budget; failures are one line."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from jobs.errors import DocumentError
from jobs.file_conversion import FileTask, PageUrls, convert_file
from jobs.isolation import ConversionBudget, IsolatedRunner

BUDGET = ConversionBudget(seconds=3, memory_mb=256, workers=1)


def _markdown_task(path: Path) -> FileTask:
    return FileTask(path, path.name, "markdown", PageUrls("none"), max_bytes=10_000_000)


async def test_a_conversion_over_its_time_is_stopped_and_the_next_one_runs(tmp_path: Path) -> None:
    # A 2 MB line of unclosed Liquid tags: the tag pattern backtracks for minutes.
    slow = tmp_path / "slow.md"
    slow.write_text("word{% x " * 250_000)
    good = tmp_path / "good.md"
    good.write_text("# Fine\n\nA page.\n")
    async with IsolatedRunner(BUDGET) as runner:
        started = time.perf_counter()
        with pytest.raises(DocumentError, match=r"longer than 3 s and was stopped"):
            await runner.run(convert_file, _markdown_task(slow))
        assert time.perf_counter() - started < 30
        converted = await runner.run(convert_file, _markdown_task(good))
    assert converted.document.text == "# Fine\n\nA page."


async def test_a_conversion_over_its_memory_fails_with_a_reason() -> None:
    async with IsolatedRunner(BUDGET) as runner:
        with pytest.raises(DocumentError, match=r"^ran out of memory .*convert_memory_mb"):
            await runner.run(bytearray, 2 * 1024**3)
        assert await runner.run(len, "still works") == 11


async def test_deep_nesting_and_a_dying_worker_are_one_line_reasons(tmp_path: Path) -> None:
    nested = tmp_path / "nested.md"
    nested.write_text("<div>" * 20_000 + "deep" + "</div>" * 20_000)
    async with IsolatedRunner(BUDGET) as runner:
        with pytest.raises(DocumentError, match=r"^nested too deeply to convert"):
            await runner.run(convert_file, _markdown_task(nested))
        with pytest.raises(DocumentError, match=r"^could not convert: JSONDecodeError: "):
            await runner.run(json.loads, "{")
        with pytest.raises(DocumentError, match=r"^the converter process died \(exit code 3\)"):
            await runner.run(os._exit, 3)
        assert await runner.run(len, "replaced") == 8
