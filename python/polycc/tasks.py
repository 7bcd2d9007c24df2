"""One unit of work for an executor: run a scenario (and write its results directory).

Plain data and a top-level function, so that any executor (threads here, processes or a cluster
later) can ship them. Heavy modules are imported inside `execute`.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from polycc.scenario import Scenario

#: Where a scenario can run: the simulator, or the emulated testbed (polycc-emu).
BACKENDS = ("sim", "emu")


@dataclass(frozen=True)
class RunTask:
    index: int
    run_id: str
    #: The overrides this run applies (empty for a plain run).
    params: dict[str, Any]
    seed: int
    scenario: Scenario
    #: Directory the run writes its results into, or None to keep only the summary.
    out_dir: str | None = None
    plots: bool = True
    #: Link from the run's report back to an index page.
    back: str | None = None
    #: Where it runs: "sim" (the simulator) or "emu" (the emulated testbed).
    backend: str = "sim"


@dataclass
class RunOutcome:
    task: RunTask
    summary: dict[str, Any] | None
    error: str | None
    wall_s: float


def execute(task: RunTask) -> RunOutcome:
    """Runs one task. Failures are returned, not raised, so one bad run does not stop a sweep."""
    from polycc.api import run_scenario
    from polycc.results import stream_run, write_run_files

    t0 = time.perf_counter()
    try:
        out = None
        if task.out_dir is not None:
            out = Path(task.out_dir)
            out.mkdir(parents=True, exist_ok=False)
        if task.backend == "emu":
            # An emulated run's series are small (real time): kept, then written.
            result = run_scenario(task.scenario, seed=task.seed, backend="emu")
            if out is not None:
                write_run_files(result, out, plots=task.plots, back=task.back)
        else:
            # Streamed: the time series go to the run's files (or nowhere) as they are recorded.
            result = stream_run(task.scenario, out, seed=task.seed, plots=task.plots, back=task.back)
        return RunOutcome(task, result.summary, None, time.perf_counter() - t0)
    except Exception as e:
        return RunOutcome(task, None, f"{type(e).__name__}: {e}", time.perf_counter() - t0)


@dataclass
class PackedOutcome:
    """A run done where the driver's disk may not be: its outcome, and its results directory as
    data (path relative to the directory -> bytes)."""

    outcome: RunOutcome
    files: dict[str, bytes]


def execute_packed(task: RunTask) -> PackedOutcome:
    """`execute` on a worker of a cluster: the results directory is written into a temporary one
    on the worker and shipped back as data; `unpack` writes it where the task says."""
    if task.out_dir is None:
        return PackedOutcome(execute(task), {})
    with tempfile.TemporaryDirectory(prefix="polycc-run-") as tmp:
        run = Path(tmp) / "run"
        outcome = execute(replace(task, out_dir=str(run)))
        files = {str(p.relative_to(run)): p.read_bytes() for p in run.rglob("*") if p.is_file()}
    return PackedOutcome(replace(outcome, task=task), files)


def unpack(packed: PackedOutcome) -> RunOutcome:
    """Writes a packed run's files into its task's `out_dir` (on the driver) and returns its
    outcome."""
    task = packed.outcome.task
    if task.out_dir is not None:
        out = Path(task.out_dir)
        out.mkdir(parents=True, exist_ok=False)
        for rel, data in packed.files.items():
            path = out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    return packed.outcome


def lost(task: RunTask, error: BaseException) -> PackedOutcome:
    """The outcome of a run whose worker (or its machine) went away before it finished: an
    error, and no results directory."""
    first_line = (str(error).strip().splitlines() or [""])[0]
    why = f"worker lost: {type(error).__name__}: {first_line}"
    return PackedOutcome(RunOutcome(replace(task, out_dir=None), None, why, 0.0), {})
