"""Running one document's conversion in a worker process, within a time and memory budget.

A parser that recurses 20,000 levels, a PDF stream that inflates to gigabytes or a 2 MB
line that a regular expression chews on for minutes must cost one document, not the
run. Each call runs in a pebble `ProcessPool` worker: past `seconds` the worker is
killed and replaced, an address-space limit (`resource.RLIMIT_AS`, set in the worker)
turns runaway allocations into a MemoryError there, and a worker that dies outright is
reported as `ProcessExpired`. Every failure comes back as a `DocumentError` with one
line for the user; the worker's traceback is logged at debug level.

Workers start from a fork server (not `fork`: the parent holds torch's threads), which
imports the converters once, so a new worker costs milliseconds.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import resource
import traceback
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar

from pebble import ProcessExpired, ProcessPool

from jobs.errors import DocumentError

log = logging.getLogger(__name__)

T = TypeVar("T")

# Imported once by the fork server, so every worker starts with them loaded.
_PRELOAD = ["jobs.file_conversion", "jobs.web_html"]
_REASON_LIMIT = 200


@dataclass(frozen=True, slots=True)
class ConversionBudget:
    """What one conversion may take: wall-clock seconds and memory beyond the worker's own."""

    seconds: float = 60.0
    memory_mb: int = 1024
    workers: int = 2


class WorkerFailure(Exception):
    """An unexpected exception inside a worker, carried back as text (it may not pickle)."""

    def __init__(self, reason: str, details: str) -> None:
        super().__init__(reason, details)
        self.reason = reason
        self.details = details


class IsolatedRunner:
    """An async context manager owning a worker pool; `run` converts within the budget.

    The pool starts on the first `run`, so a pass that converts nothing (every file
    unchanged) starts no process.
    """

    def __init__(self, budget: ConversionBudget) -> None:
        self._budget = budget
        self._pool: ProcessPool | None = None

    async def __aenter__(self) -> IsolatedRunner:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            pool.stop()
            await asyncio.to_thread(pool.join)

    async def run(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`function(*args, **kwargs)` in a worker; DocumentError (one line) if it fails."""
        future = self._started().schedule(
            _guarded, args=(function, args, kwargs), timeout=self._budget.seconds
        )
        try:
            return await asyncio.wrap_future(future)
        except DocumentError:
            raise
        except TimeoutError:
            raise DocumentError(
                f"conversion took longer than {self._budget.seconds:g} s and was stopped "
                "(convert_timeout_seconds)"
            ) from None
        except ProcessExpired as error:
            raise DocumentError(
                f"the converter process died (exit code {error.exitcode}); the file may be "
                "damaged, or too large to convert"
            ) from None
        except WorkerFailure as error:
            log.debug("conversion failed in a worker:\n%s", error.details)
            raise DocumentError(error.reason) from None
        except BrokenProcessPool as error:
            log.debug("the conversion pool broke", exc_info=True)
            raise DocumentError(f"no converter process could run ({error})") from None

    def _started(self) -> ProcessPool:
        if self._pool is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(_PRELOAD)
            self._pool = ProcessPool(
                max_workers=self._budget.workers,
                initializer=limit_memory,
                initargs=(self._budget.memory_mb,),
                context=context,
            )
        return self._pool


def limit_memory(memory_mb: int) -> None:
    """Cap the worker's address space at its current size plus `memory_mb` (Linux)."""
    current = _address_space_bytes()
    limit = current + memory_mb * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _address_space_bytes() -> int:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def _guarded(function: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> T:
    """Run in the worker: our own errors pass through, anything else becomes one line."""
    try:
        return function(*args, **kwargs)
    except DocumentError:
        raise
    except MemoryError:
        raise WorkerFailure(
            "ran out of memory while converting (convert_memory_mb)", traceback.format_exc()
        ) from None
    except RecursionError:
        raise WorkerFailure(
            "nested too deeply to convert (RecursionError)", traceback.format_exc()
        ) from None
    except Exception as error:  # noqa: BLE001 - any parser bug costs this document only
        raise WorkerFailure(one_line_reason(error), traceback.format_exc()) from None


def one_line_reason(error: BaseException) -> str:
    """`could not convert: Type: first line of the message`, short enough for one line."""
    message = str(error).strip().splitlines()
    detail = f"{type(error).__name__}: {message[0]}" if message else type(error).__name__
    reason = f"could not convert: {detail}"
    return reason if len(reason) <= _REASON_LIMIT else reason[: _REASON_LIMIT - 3] + "..."
