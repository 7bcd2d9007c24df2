"""Where many runs execute. The sweep and demo code only see the `Executor` protocol, so a
cluster backend (e.g. Ray: one remote task per item, results streamed back as they finish) can be
added without touching them.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    """Runs `fn` over `items` and yields the results as they complete (in any order).

    `fn` and the items must be picklable (top-level function, plain dataclasses) so that a
    process- or cluster-based executor can ship them elsewhere. An exception raised by `fn` is
    re-raised from the iterator; task functions report per-item failures in their result instead.
    """

    def map_unordered(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]: ...


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def check_jobs(jobs: object) -> None:
    """Raises ValueError unless `jobs` is None (all cores) or a positive integer."""
    if jobs is None:
        return
    if isinstance(jobs, bool) or not isinstance(jobs, numbers.Integral) or jobs < 1:
        raise ValueError(
            f"jobs: {jobs!r} is not a number of parallel runs; give a positive integer, or None for all cores"
        )


class LocalExecutor:
    """Threads on this machine. The simulator releases the GIL for a whole run, so `jobs` runs
    proceed in parallel on `jobs` cores."""

    def __init__(self, jobs: int | None = None) -> None:
        check_jobs(jobs)
        self.jobs = int(jobs) if jobs is not None else default_jobs()

    def map_unordered(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        if not items:
            return
        with ThreadPoolExecutor(max_workers=min(self.jobs, len(items)), thread_name_prefix="polycc") as pool:
            pending: set[Future[R]] = set()
            queue = iter(items)
            # Submit lazily, a few ahead of the workers, so an interrupt does not wait for a
            # backlog of queued runs.
            for item in queue:
                pending.add(pool.submit(fn, item))
                if len(pending) >= 2 * self.jobs:
                    break
            try:
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in done:
                        yield fut.result()
                        nxt = next(queue, None)
                        if nxt is not None:
                            pending.add(pool.submit(fn, nxt))
            finally:
                for fut in pending:
                    fut.cancel()
